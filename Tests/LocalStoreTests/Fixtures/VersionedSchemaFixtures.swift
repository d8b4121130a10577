import Foundation
import LocalStore
import Synchronization

/// What the stages of the plans below did, for the tests to check: the calls in order, and what
/// a `willMigrate` kept for its `didMigrate`.
final class MigrationLog: Sendable {
    private let state = Mutex<(calls: [String], points: [UUID: Int])>(([], [:]))

    var calls: [String] { state.withLock { $0.calls } }
    var points: [UUID: Int] { state.withLock { $0.points } }

    func record(_ call: String) { state.withLock { $0.calls.append(call) } }
    func keep(_ points: Int, for object: UUID) { state.withLock { $0.points[object] = points } }
    func reset() { state.withLock { $0 = ([], [:]) } }
}

/// Notes whose points are text.
enum NotesV1: VersionedSchema {
    static let versionIdentifier = SchemaVersionIdentifier(1, 0, 0)
    static let models: [any PersistentEntity.Type] = [Note.self]

    @Entity final class Note {
        var title: String = ""
        var points: String = "0"
    }
}

/// Notes whose points are integers, and whose titles are unique.
enum NotesV2: VersionedSchema {
    static let versionIdentifier = SchemaVersionIdentifier(2, 0, 0)
    static let models: [any PersistentEntity.Type] = [Note.self]

    @Entity final class Note {
        @Attribute(.unique) var title: String = ""
        var points: Int = 0
    }
}

/// A point text that is not a number, naming the note holding it.
struct PointsNotANumber: Error, CustomStringConvertible {
    let objectID: UUID
    let text: String
    var description: String { "Note \(objectID.uuidString) holds points '\(text)', which is not a number" }
}

/// Converts the points: `willMigrate` reads them as text, `didMigrate` writes them as integers.
enum NotesMigrationPlan: SchemaMigrationPlan {
    static let log = MigrationLog()
    static let schemas: [any VersionedSchema.Type] = [NotesV1.self, NotesV2.self]
    static let stages: [MigrationStage] = [
        .custom(
            fromVersion: NotesV1.self, toVersion: NotesV2.self,
            willMigrate: { context in
                log.record("willMigrate")
                for note in try context.fetchAll(NotesV1.Note.self) {
                    guard let points = Int(note.points) else { throw PointsNotANumber(objectID: note.objectID, text: note.points) }
                    log.keep(points, for: note.objectID)
                }
            },
            didMigrate: { context in
                log.record("didMigrate")
                for note in try context.fetchAll(NotesV2.Note.self) { note.points = log.points[note.objectID] ?? 0 }
            }),
    ]
}

/// The same versions with a `didMigrate` that gives every note the same title, breaking `.unique`.
enum DuplicateTitlesMigrationPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [NotesV1.self, NotesV2.self]
    static let stages: [MigrationStage] = [
        .custom(fromVersion: NotesV1.self, toVersion: NotesV2.self, willMigrate: nil, didMigrate: { context in
            for note in try context.fetchAll(NotesV2.Note.self) { note.title = "same" }
        }),
    ]
}

/// The same versions with a lightweight stage, which cannot change the type of `points`.
enum LightweightTypeChangePlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [NotesV1.self, NotesV2.self]
    static let stages: [MigrationStage] = [.lightweight(fromVersion: NotesV1.self, toVersion: NotesV2.self)]
}

/// Items with a name.
enum ItemsV1: VersionedSchema {
    static let versionIdentifier = SchemaVersionIdentifier(1, 0, 0)
    static let models: [any PersistentEntity.Type] = [Item.self]

    @Entity final class Item {
        var name: String = ""
    }
}

/// Items with a size, defaulting to 3.
enum ItemsV2: VersionedSchema {
    static let versionIdentifier = SchemaVersionIdentifier(1, 1, 0)
    static let models: [any PersistentEntity.Type] = [Item.self]

    @Entity final class Item {
        var name: String = ""
        var size: Int = 3
    }
}

/// Items renamed `Article`, whose name is renamed `label`, with a new optional note.
enum ItemsV3: VersionedSchema {
    static let versionIdentifier = SchemaVersionIdentifier(2, 0, 0)
    static let models: [any PersistentEntity.Type] = [Article.self]

    @Entity(originalName: "Item") final class Article {
        @Attribute(originalName: "name") var label: String = ""
        var size: Int = 3
        var note: String? = nil
    }
}

/// Lightweight stages only.
enum ItemsMigrationPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [ItemsV1.self, ItemsV2.self, ItemsV3.self]
    static let stages: [MigrationStage] = [
        .lightweight(fromVersion: ItemsV1.self, toVersion: ItemsV2.self),
        .lightweight(fromVersion: ItemsV2.self, toVersion: ItemsV3.self),
    ]
}

/// A stage that skips version 1.1.0.
enum SkippingMigrationPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [ItemsV1.self, ItemsV2.self, ItemsV3.self]
    static let stages: [MigrationStage] = [.lightweight(fromVersion: ItemsV1.self, toVersion: ItemsV3.self)]
}

/// Versions listed out of order.
enum DecreasingMigrationPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [ItemsV2.self, ItemsV1.self]
    static let stages: [MigrationStage] = [.lightweight(fromVersion: ItemsV2.self, toVersion: ItemsV1.self)]
}

/// A last version missing its stage.
enum MissingStageMigrationPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [ItemsV1.self, ItemsV2.self, ItemsV3.self]
    static let stages: [MigrationStage] = [.lightweight(fromVersion: ItemsV1.self, toVersion: ItemsV2.self)]
}

/// Items V1's model under another version number.
enum ItemsV1Again: VersionedSchema {
    static let versionIdentifier = SchemaVersionIdentifier(3, 0, 0)
    static let models: [any PersistentEntity.Type] = ItemsV1.models
}

/// Two versions with the same schema: a file cannot tell which it holds.
enum SameSchemaMigrationPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [ItemsV1.self, ItemsV1Again.self]
    static let stages: [MigrationStage] = [.lightweight(fromVersion: ItemsV1.self, toVersion: ItemsV1Again.self)]
}

import Foundation
import LocalStore
@testable import LocalStoreCore
import TestSupport
import Testing

/// The plans' logs are shared, so these tests run one at a time.
@Suite(.serialized) struct MigrationPlanTests {
    let file = TemporaryStoreFile()

    init() { NotesMigrationPlan.log.reset() }

    /// A version 1 store with three notes, closed (its WAL checkpointed into the file); their IDs by title.
    @discardableResult
    func makeNotesV1Store(points: [String: String] = ["alpha": "3", "beta": "14", "gamma": "0"]) throws -> [String: UUID] {
        let store = try ObjectStore(path: file.path, entities: NotesV1.models)
        let context = try store.makeContext()
        var identifiers: [String: UUID] = [:]
        for (title, value) in points.sorted(by: { $0.key < $1.key }) {
            let note = NotesV1.Note()
            note.title = title
            note.points = value
            context.insert(note)
            identifiers[title] = note.objectID
        }
        try context.save()
        return identifiers
    }

    /// Saves `object` in a store of `version`'s models at the test's file, and closes the store.
    func save<Entity: PersistentEntity>(_ object: Entity, at version: any VersionedSchema.Type) throws {
        let context = try ObjectStore(path: file.path, entities: version.models).makeContext()
        context.insert(object)
        try context.save()
    }

    func fileBytes() throws -> Data { try Data(contentsOf: URL(fileURLWithPath: file.path)) }

    func expectNoMigrationCopy() {
        for suffix in ["", "-wal", "-shm"] {
            #expect(!FileManager.default.fileExists(atPath: file.path + "-migrating" + suffix))
        }
    }

    /// The error opening the store with `plan` throws, after checking that it names the store
    /// file and left the file byte for byte as it was, with no copy behind.
    func failedMigration(with plan: any SchemaMigrationPlan.Type) throws -> StoreError {
        let before = try fileBytes()
        let error = try #require(throws: StoreError.self) {
            _ = try ObjectStore(path: file.path, migrationPlan: plan)
        }
        #expect(error.path == file.path)
        #expect(try fileBytes() == before)
        expectNoMigrationCopy()
        return error
    }

    @Test func customStageConvertsStringsToIntegersAndKeepsTheOtherData() throws {
        let identifiers = try makeNotesV1Store()
        let store = try ObjectStore(path: file.path, migrationPlan: NotesMigrationPlan.self)
        #expect(NotesMigrationPlan.log.calls == ["willMigrate", "didMigrate"])
        let notes = try store.makeContext().fetchAll(NotesV2.Note.self)
        #expect(Dictionary(uniqueKeysWithValues: notes.map { ($0.title, $0.points) }) == ["alpha": 3, "beta": 14, "gamma": 0])
        #expect(Dictionary(uniqueKeysWithValues: notes.map { ($0.title, $0.objectID) }) == identifiers)
        #expect(try ObjectStore.storedSchema(at: file.path)?.versionHash == store.schemaDocument.versionHash)
        let columnType = try store.makeContext().connection.rows("SELECT type FROM pragma_table_info('Note') WHERE name = 'points'")
        #expect(columnType == [[.text("INTEGER")]])
        expectNoMigrationCopy()
    }

    @Test func transactionsOnlyInTheWALOfAClosedStoreAreMigrated() throws {
        // A store left by a process that ended without checkpointing: its last save is in the WAL only.
        let crashed = TemporaryStoreFile()
        do {
            let context = try ObjectStore(path: file.path, entities: NotesV1.models).makeContext()
            let note = NotesV1.Note()
            note.points = "42"
            context.insert(note)
            try context.save()
            for suffix in ["", "-wal"] { try FileManager.default.copyItem(atPath: file.path + suffix, toPath: crashed.path + suffix) }
        }
        #expect(try FileManager.default.attributesOfItem(atPath: crashed.path + "-wal")[.size] as? Int ?? 0 > 0)
        let store = try ObjectStore(path: crashed.path, migrationPlan: NotesMigrationPlan.self)
        #expect(try store.makeContext().fetchAll(NotesV2.Note.self).map(\.points) == [42])
    }

    @Test func storeAtTheLatestVersionOpensWithoutRunningStages() throws {
        let note = NotesV2.Note()
        note.points = 5
        try save(note, at: NotesV2.self)
        let store = try ObjectStore(path: file.path, migrationPlan: NotesMigrationPlan.self)
        #expect(NotesMigrationPlan.log.calls.isEmpty)
        #expect(try store.makeContext().fetchAll(NotesV2.Note.self).map(\.points) == [5])
    }

    @Test func newFileIsCreatedAtTheLatestVersion() throws {
        let store = try ObjectStore(path: file.path, migrationPlan: NotesMigrationPlan.self)
        #expect(NotesMigrationPlan.log.calls.isEmpty)
        let latest = try SchemaDocument(StoreSchema(types: NotesV2.models))
        #expect(try ObjectStore.storedSchema(at: file.path)?.versionHash == latest.versionHash)
        #expect(store.schemaDocument.versionHash == latest.versionHash)
    }

    @Test func aSchemaOfNoVersionGetsTheLightweightMigrationWithoutStages() throws {
        let note = NotesV1.Note()
        note.title = "kept"
        try save(note, at: NotesV1.self)
        let store = try ObjectStore(path: file.path, migrationPlan: ItemsMigrationPlan.self)
        #expect(try store.makeContext().fetchAll(ItemsV3.Article.self).isEmpty)
        #expect(try ObjectStore.storedSchema(at: file.path)?.versionHash == store.schemaDocument.versionHash)
        expectNoMigrationCopy()
    }

    @Test func lightweightChainMigratesFromTheFirstVersionWithRenames() throws {
        let item = ItemsV1.Item()
        item.name = "lamp"
        try save(item, at: ItemsV1.self)
        let store = try ObjectStore(path: file.path, migrationPlan: ItemsMigrationPlan.self)
        let articles = try store.makeContext().fetchAll(ItemsV3.Article.self)
        #expect(articles.map(\.label) == ["lamp"])
        #expect(articles.map(\.size) == [3])
        #expect(articles.map(\.note) == [nil])
        let tables = try store.makeContext().connection.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('Item', 'Article')")
        #expect(tables == [[.text("Article")]])
    }

    @Test func lightweightChainMigratesFromTheMiddleVersion() throws {
        let item = ItemsV2.Item()
        item.name = "desk"
        item.size = 9
        try save(item, at: ItemsV2.self)
        let store = try ObjectStore(path: file.path, migrationPlan: ItemsMigrationPlan.self)
        let articles = try store.makeContext().fetchAll(ItemsV3.Article.self)
        #expect(articles.map(\.label) == ["desk"])
        #expect(articles.map(\.size) == [9])
    }

    @Test func failingWillMigrateNamesStageEntityAndObjectAndLeavesTheFileUntouched() throws {
        let identifiers = try makeNotesV1Store(points: ["alpha": "3", "beta": "many"])
        let error = try failedMigration(with: NotesMigrationPlan.self)
        #expect(error.code == .migrationFailed)
        #expect(error.message.hasPrefix("migration stage 1.0.0 → 2.0.0, willMigrate: "))
        #expect(error.message.contains("Note \(try #require(identifiers["beta"]).uuidString)"))
        #expect(error.message.contains("'many'"))
        #expect(!NotesMigrationPlan.log.calls.contains("didMigrate"))
        // Fixed, the data migrates.
        do {
            let context = try ObjectStore(path: file.path, entities: NotesV1.models).makeContext()
            try #require(try context.fetchAll(NotesV1.Note.self).first { $0.title == "beta" }).points = "7"
            try context.save()
        }
        let store = try ObjectStore(path: file.path, migrationPlan: NotesMigrationPlan.self)
        #expect(try store.makeContext().fetchAll(NotesV2.Note.self).map(\.points).sorted() == [3, 7])
    }

    @Test func failingDidMigrateKeepsTheUniqueViolationsEntityAttributeAndObject() throws {
        let identifiers = try makeNotesV1Store()
        let error = try failedMigration(with: DuplicateTitlesMigrationPlan.self)
        #expect(error.code == .uniqueViolation)
        #expect(error.message.hasPrefix("migration stage 1.0.0 → 2.0.0, didMigrate: "))
        #expect(error.entity == "Note")
        #expect(error.attribute == "title")
        #expect(try Set(identifiers.values).contains(#require(error.objectID)))
        // The version 1 data is still there, and a correct plan migrates it.
        #expect(try ObjectStore(path: file.path, entities: NotesV1.models).makeContext().fetchAll(NotesV1.Note.self).count == 3)
        let store = try ObjectStore(path: file.path, migrationPlan: NotesMigrationPlan.self)
        #expect(try store.makeContext().fetchAll(NotesV2.Note.self).map(\.points).sorted() == [0, 3, 14])
    }

    @Test func lightweightStageRefusesATypeChange() throws {
        try makeNotesV1Store()
        let error = try failedMigration(with: LightweightTypeChangePlan.self)
        #expect(error.code == .migrationImpossible)
        #expect(error.message.hasPrefix("migration stage 1.0.0 → 2.0.0, lightweight step: "))
        #expect(error.entity == "Note")
        #expect(error.attribute == "points")
        #expect(error.message.contains("from string (String) to int (Int)"))
    }

    @Test(arguments: [
        (SkippingMigrationPlan.self as any SchemaMigrationPlan.Type, "1.0.0 → 2.0.0"),
        (DecreasingMigrationPlan.self, "1.0.0 after 1.1.0"),
        (MissingStageMigrationPlan.self, "no stage from 1.1.0 to 2.0.0"),
        (SameSchemaMigrationPlan.self, "1.0.0 and 3.0.0 with the same schema"),
    ])
    func badPlanIsRefusedBeforeTheFileIsTouched(plan: any SchemaMigrationPlan.Type, named: String) throws {
        let error = try #require(throws: StoreError.self) {
            _ = try ObjectStore(path: file.path, migrationPlan: plan)
        }
        #expect(error.code == .invalidSchema)
        #expect(error.message.contains(named))
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test func versionIdentifiersOrderAndPrint() {
        #expect(SchemaVersionIdentifier(1, 10, 0) > SchemaVersionIdentifier(1, 9, 3))
        #expect(SchemaVersionIdentifier(2, 0, 0) > SchemaVersionIdentifier(1, 99, 99))
        #expect(SchemaVersionIdentifier(1, 0, 0).description == "1.0.0")
    }
}

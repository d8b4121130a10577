import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport
import Testing

/// The first version of a chores app.
enum ChoresVersion1 {
    @Entity final class Project {
        var name: String = ""
        var summary: String = ""
        @Relationship(inverse: "project", deleteRule: .cascade) var chores: [Chore] = []
    }

    @Entity final class Chore {
        var title: String = ""
        var estimate: Int = 0
        @Relationship(inverse: "chores", deleteRule: .nullify) var project: Project?
    }

    static let entities: [any PersistentEntity.Type] = [Project.self, Chore.self]
}

/// The second version: a priority (default 2) on chores, an optional summary, and tags.
enum ChoresVersion2 {
    @Entity final class Project {
        var name: String = ""
        var summary: String? = nil
        @Relationship(inverse: "project", deleteRule: .cascade) var chores: [Chore] = []
    }

    @Entity final class Chore {
        var title: String = ""
        var estimate: Int = 0
        var priority: Int = 2
        @Relationship(inverse: "chores", deleteRule: .nullify) var project: Project?
        @Relationship(inverse: "chores", deleteRule: .nullify) var tags: Set<Tag> = []
    }

    @Entity final class Tag {
        var label: String = ""
        @Relationship(inverse: "tags", deleteRule: .nullify) var chores: Set<Chore> = []
    }

    static let entities: [any PersistentEntity.Type] = [Project.self, Chore.self, Tag.self]
}

/// Mixed app versions through a real syncd (CONTRACT.md §8): a version 2 app registers first;
/// a version 1 `sync` CLI store and a version 1 app keep syncing with it, concurrent edits of all
/// three merge, and the version 1 stores, upgraded, hold everything version 2 wrote.
extension EndToEndTests {
    /// An in-process replica of `entities` at `name`, with its client.
    func makeVersionedReplica(_ name: String, entities: [any PersistentEntity.Type]) throws -> InProcess {
        let path = directory.file(name)
        let store = try ObjectStore(path: path, entities: entities)
        let replica = try SyncReplica(store: store)
        return InProcess(path: path, store: store, replica: replica, context: try store.makeContext(),
                         client: SyncClient(replica: replica, configuration: clientConfiguration))
    }

    @Test func olderAppsKeepSyncingAndLoseNothingWhenUpgraded() async throws {
        let newer = try makeVersionedReplica("v2.sqlite", entities: ChoresVersion2.entities)
        #expect(try await newer.client.sync().registeredSchema)
        let older = try makeVersionedReplica("v1.sqlite", entities: ChoresVersion1.entities)
        let cliStore = try makeCLIReplica("v1-cli.sqlite", schemaFrom: try ObjectStore(path: directory.file("v1-typed.sqlite"), entities: ChoresVersion1.entities))

        // Version 1 creates; everyone syncs.
        let project = ChoresVersion1.Project()
        project.name = "Home"
        project.summary = "weekend"
        let chore = ChoresVersion1.Chore()
        chore.title = "paint"
        project.addToChores(chore)
        older.context.insert(project)
        try older.context.save()
        _ = try await older.client.sync()
        try cli(cliStore, "pull", "--push")
        _ = try await newer.client.sync()
        try newer.context.refresh()
        let newerChore = try #require(try newer.context.object(ChoresVersion2.Chore.self, id: chore.objectID))
        #expect(newerChore.title == "paint" && newerChore.priority == 2, "version 2's default for what version 1 did not write")

        // Concurrent edits: version 2 writes what only it knows and a title; the version 1 app an
        // estimate; the version 1 CLI the project's name.
        newerChore.title = "paint the fence"
        newerChore.priority = 5
        let newerProject = try #require(try newer.context.object(ChoresVersion2.Project.self, id: project.objectID))
        newerProject.summary = nil
        let tag = ChoresVersion2.Tag()
        tag.label = "outside"
        newerChore.addToTags(tag)
        try newer.context.save()
        chore.estimate = 3
        try older.context.save()
        try cli(cliStore, "put", "Project", project.objectID.uuidString, "name=House")

        for _ in 0..<2 {
            _ = try await newer.client.sync()
            _ = try await older.client.sync()
            try cli(cliStore, "pull", "--push")
        }
        try newer.context.refresh()
        try older.context.refresh()

        // Version 2 has every edit; version 1 has what it knows, and keeps the rest.
        #expect(newerChore.title == "paint the fence" && newerChore.estimate == 3 && newerChore.priority == 5)
        #expect(newerProject.name == "House" && newerProject.summary == nil)
        #expect(chore.title == "paint the fence" && chore.estimate == 3)
        #expect(project.name == "House" && project.summary == "weekend", "version 1 cannot hold nil")
        #expect(try older.replica.keptChangeSetCount() >= 1)
        let status = try #require(try JSONSerialization.jsonObject(with: Data(try cli(cliStore, "status", "--json").utf8)) as? [String: Any])
        let kept = try #require((status["history"] as? [String: Any])?["keptForNewerSchema"] as? Int)
        #expect(kept >= 1, "\(status)")
        let cliRecord = try #require(try JSONSerialization.jsonObject(with: Data(try cli(cliStore, "get", "Chore", chore.objectID.uuidString).utf8)) as? [String: Any])
        #expect("\(cliRecord)".contains("paint the fence"), "\(cliRecord)")

        // Both version 1 stores are upgraded: they hold what version 2 holds.
        let newerDigest = try storeDigest(newer.path, columnsByName: true)
        let olderPath = older.path
        let upgraded = try SyncReplica(store: try ObjectStore(path: olderPath, entities: ChoresVersion2.entities))
        #expect(try upgraded.keptChangeSetCount() == 0)
        #expect(try storeDigest(olderPath, columnsByName: true) == newerDigest)
        // The CLI store is upgraded by the CLI: `sync init` again with the newer schema.
        _ = try makeCLIReplica("v1-cli.sqlite", schemaFrom: newer.store)
        #expect(try storeDigest(cliStore, columnsByName: true) == newerDigest)

        // The upgraded app goes on syncing with the newer one.
        let upgradedClient = SyncClient(replica: upgraded, configuration: clientConfiguration)
        let context = try upgraded.store.makeContext()
        try #require(try context.object(ChoresVersion2.Chore.self, id: chore.objectID)).priority = 1
        try context.save()
        _ = try await upgradedClient.sync()
        _ = try await newer.client.sync()
        try newer.context.refresh()
        #expect(newerChore.priority == 1)
        #expect(try storeDigest(olderPath, columnsByName: true) == storeDigest(newer.path, columnsByName: true))
    }
}

/// A note before its text was renamed.
enum NotesVersion1 {
    @Entity final class Note {
        var text: String = ""
        var stars: Int = 0
    }
}

/// The note with `text` renamed `body`.
enum NotesVersion2 {
    @Entity final class Note {
        @Attribute(originalName: "text") var body: String = ""
        var stars: Int = 0
    }
}

extension EndToEndTests {
    /// A version 2 app renames `Note.text` to `body` while a version 1 CLI store keeps editing
    /// `text`: syncd migrates, the edit lands on `body`, and the upgraded CLI store converges.
    @Test func aRenameCrossesReplicasWithTheOlderAppsEditPresent() async throws {
        let cliStore = try makeCLIReplica("notes-v1.sqlite", schemaFrom: try ObjectStore(path: directory.file("notes-v1-typed.sqlite"), entities: [NotesVersion1.Note.self]))
        let note = try cli(cliStore, "put", "Note", "text=hello", "stars=1")
        try cli(cliStore, "push")

        let newer = try makeVersionedReplica("notes-v2.sqlite", entities: [NotesVersion2.Note.self])
        _ = try await newer.client.sync()
        let noteID = try #require(UUID(uuidString: note))
        let renamed = try #require(try newer.context.object(NotesVersion2.Note.self, id: noteID))
        #expect(renamed.body == "hello" && renamed.stars == 1)

        // The newer app edits first; the older store's later edit of `text` wins on `body`.
        renamed.body = "edited by version 2"
        renamed.stars = 3
        try newer.context.save()
        _ = try await newer.client.sync()
        try cli(cliStore, "put", "Note", note, "text=edited by version 1")
        try cli(cliStore, "pull", "--push")
        _ = try await newer.client.sync()
        try newer.context.refresh()
        #expect(renamed.body == "edited by version 1" && renamed.stars == 3)

        // The older store shows its own edit, keeps the newer app's change set, and once upgraded
        // holds what the newer app holds.
        let record = try #require(try JSONSerialization.jsonObject(with: Data(try cli(cliStore, "get", "Note", note).utf8)) as? [String: Any])
        #expect("\(record)".contains("edited by version 1"), "\(record)")
        _ = try makeCLIReplica("notes-v1.sqlite", schemaFrom: newer.store)
        #expect(try storeDigest(cliStore, columnsByName: true) == storeDigest(newer.path, columnsByName: true))
        let upgradedRecord = try #require(try JSONSerialization.jsonObject(with: Data(try cli(cliStore, "get", "Note", note).utf8)) as? [String: Any])
        #expect("\(upgradedRecord)".contains("body") && "\(upgradedRecord)".contains("edited by version 1"), "\(upgradedRecord)")
    }
}

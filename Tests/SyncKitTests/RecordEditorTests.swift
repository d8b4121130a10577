import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import Testing

/// A store opened from its schema alone (as the `sync` CLI does) edits and syncs like a typed one.
@Suite struct RecordEditorTests {
    /// A replica of the fixture schema opened without the Swift types.
    final class SchemaOnlyReplica {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("schema-only-\(UUID().uuidString).sqlite").path
        let replica: SyncReplica

        init(schema: SchemaDocument) throws {
            replica = try SyncReplica(store: ObjectStore(path: path, schema: schema))
        }

        deinit { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
    }

    @Test func schemaOnlyEditsConvergeWithATypedReplica() throws {
        let typed = try TestReplica(name: "typed")
        let schemaOnly = try SchemaOnlyReplica(schema: typed.store.schemaDocument)
        var teamID = UUID()
        var ada = UUID()
        try schemaOnly.replica.edit { editor in
            teamID = try editor.insert("Team", values: ["name": .text("Red")])
            ada = try editor.insert("Member", values: ["name": .text("Ada"), "level": .integer(3)])
        }
        try schemaOnly.replica.edit { try $0.link("Member", id: ada, relationship: "team", target: teamID) }
        try schemaOnly.replica.edit { try $0.link("Team", id: teamID, relationship: "leader", target: ada) }

        _ = try typed.replica.apply(try schemaOnly.replica.changeSets(missingFrom: typed.replica.versionVector()))
        let team = try #require(try typed.fetch(Team.self, teamID))
        #expect(team.name == "Red")
        #expect(team.members.map(\.name) == ["Ada"])
        #expect(team.leader?.level == 3)

        // The typed replica adds a second member; the schema-only one sees it in order.
        let bob = Member()
        bob.name = "Bob"
        bob.team = try typed.context.object(Team.self, id: teamID)
        #expect(bob.team != nil)
        try typed.context.save()
        _ = try schemaOnly.replica.apply(try typed.replica.changeSets(missingFrom: schemaOnly.replica.versionVector()))
        let record = try #require(try schemaOnly.replica.record("Team", id: teamID))
        #expect(record.relationships.first { $0.name == "members" }?.members == [ada, bob.objectID])
        #expect(try TestReplica.digest(of: schemaOnly.path) == typed.digest())
    }

    @Test func deleteAppliesCascadeAndDenyLikeAContext() throws {
        let typed = try TestReplica(name: "typed")
        let schemaOnly = try SchemaOnlyReplica(schema: typed.store.schemaDocument)
        var team = UUID(), boss = UUID(), worker = UUID()
        try schemaOnly.replica.edit { editor in
            team = try editor.insert("Team", values: ["name": .text("Red")])
            boss = try editor.insert("Member", values: ["name": .text("Boss")])
            worker = try editor.insert("Member", values: ["name": .text("Worker")])
        }
        try schemaOnly.replica.edit { editor in
            try editor.link("Member", id: boss, relationship: "team", target: team)
            try editor.link("Member", id: worker, relationship: "manager", target: boss)
        }
        // Boss has a report (deny): deleting the team, which cascades to Boss, is refused.
        let error = try #require(throws: StoreError.self) { try schemaOnly.replica.edit { try $0.delete("Team", id: team) } }
        #expect(error.code == .deleteDenied)
        #expect(error.relationship == "reports")
        #expect(try schemaOnly.replica.record("Team", id: team) != nil)
        // Without the report the cascade goes through and takes Boss along.
        try schemaOnly.replica.edit { try $0.unlink("Member", id: worker, relationship: "manager", target: boss) }
        try schemaOnly.replica.edit { try $0.delete("Team", id: team) }
        #expect(try schemaOnly.replica.records("Team").isEmpty)
        #expect(try schemaOnly.replica.records("Member").map(\.id) == [worker])
        _ = try typed.replica.apply(try schemaOnly.replica.changeSets(missingFrom: typed.replica.versionVector()))
        #expect(try TestReplica.digest(of: schemaOnly.path) == typed.digest())
    }

    @Test func typedValuesAreParsedFromText() throws {
        #expect(try AttributeType.int.parse("42") == .integer(42))
        #expect(try AttributeType.bool.parse("true") == .integer(1))
        #expect(try AttributeType.date.parse("1970-01-01T00:01:00Z") == .real(60))
        #expect(try AttributeType.string.parse("null") == .null)
        #expect(throws: SyncError.self) { try AttributeType.int16.parse("70000") }
        #expect(throws: SyncError.self) { try AttributeType.uuid.parse("nope") }
    }
}

@Suite struct MergeResultTests {
    @Test func attributeOnlyChangesAreReportedAsChanged() throws {
        let a = try TestReplica(name: "a")
        let b = try TestReplica(name: "b")
        let team = Team()
        a.context.insert(team)
        try a.context.save()
        try b.pull(from: a)
        team.score = 9
        try a.context.save()
        let result = try b.pull(from: a)
        #expect(result.changedObjectIDs == [team.objectID])
    }

    @Test func anEditMayReadTheReplicaItIsEditing() throws {
        let typed = try TestReplica(name: "typed")
        let replica = try SyncReplica(store: ObjectStore(path: typed.path + "-schema-only", schema: typed.store.schemaDocument))
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: typed.path + "-schema-only" + suffix) } }
        var seen: Record?
        try replica.edit { editor in
            let id = try editor.insert("Team", values: ["name": .text("Red")])
            seen = try replica.record("Team", id: id)   // re-enters the replica: must not deadlock
        }
        #expect(seen == nil)   // edits in one commit see the store as it was when the commit began
        #expect(try replica.records("Team").map { $0.attributes.first?.values } == [[.text("Red")]])
    }
}

@Suite struct UniqueDuplicateMergeTests {
    @Entity final class Handle {
        @Attribute(.unique) var name: String = ""
    }

    /// Two replicas taking the same value concurrently do not block sync: the merge keeps the
    /// object created first (CONTRACT.md §3.8), and a later local save is still checked.
    @Test func aConcurrentUniqueDuplicateDoesNotFailTheMerge() throws {
        let directory = FileManager.default.temporaryDirectory
        let paths = ["a", "b"].map { directory.appendingPathComponent("unique-\($0)-\(UUID().uuidString).sqlite").path }
        defer { for path in paths { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } } }
        let stores = try paths.map { try ObjectStore(path: $0, entities: [Handle.self]) }
        let replicas = try stores.map { try SyncReplica(store: $0) }
        for store in stores {
            let context = try store.makeContext()
            let handle = Handle()
            handle.name = "ada"
            context.insert(handle)
            try context.save()
        }
        _ = try replicas[0].apply(try replicas[1].changeSets(missingFrom: replicas[0].versionVector()))
        #expect(try replicas[0].records("Handle").count == 1)
        #expect(try replicas[0].conflicts().map(\.kind) == [.uniqueMerged])
        let context = try stores[0].makeContext()
        let third = Handle()
        third.name = "ada"
        context.insert(third)
        #expect(throws: StoreError.self) { try context.save() }
    }
}

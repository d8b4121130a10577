import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import Testing

/// Each replica has a secret key of its own, kept in its store file: created with the replica,
/// kept across opens, given to stores set up before keys existed, and replaced when a copied
/// file becomes a replica of its own.
@Suite struct ReplicaKeyTests {
    @Test func aReplicaKeepsOneRandomKeyAcrossOpens() throws {
        let a = try TestReplica(name: "a")
        let b = try TestReplica(name: "b")
        let key = try a.replica.replicaKey()
        #expect(key.count == 32)
        #expect(try b.replica.replicaKey() != key)
        let reopened = try SyncReplica(store: try ObjectStore(existingAt: a.path))
        #expect(try reopened.replicaKey() == key)
        #expect(reopened.replicaID == a.replica.replicaID)
    }

    /// A replica that saved one team, and the change set the save recorded.
    static func replicaWithOneChangeSet() throws -> (TestReplica, ChangeSet) {
        let a = try TestReplica(name: "a")
        let team = Team()
        team.name = "Rovers"
        a.context.insert(team)
        try a.context.save()
        return (a, try #require(try a.replica.localChangeSets(status: .pending).first))
    }

    @Test func aFormat2StoreOpensWithAKeyAndItsOwnChangeSetsAuthenticated() throws {
        let (a, recorded) = try ReplicaKeyTests.replicaWithOneChangeSet()
        // Turn the file back into sync format 2: no key, no authenticator column.
        let old = try SQLiteConnection(path: a.path)
        try old.execute("""
            DELETE FROM _sync_state WHERE key = 'replica_key'; ALTER TABLE _sync_changeset DROP COLUMN authenticator;
            UPDATE _sync_format SET version = 2
            """)
        let reopened = try SyncReplica(store: try ObjectStore(existingAt: a.path))
        let key = try reopened.replicaKey()
        #expect(key.count == 32 && reopened.replicaID == a.replica.replicaID)
        let migrated = try #require(try reopened.localChangeSets(status: .pending).first)
        #expect(migrated.dot == recorded.dot && migrated.operations == recorded.operations)
        #expect(try ChangeSetAuthenticator.isAuthentic(migrated, key: key))
        #expect(try old.rows("SELECT version FROM _sync_format").first?.first == .integer(SyncFormatTable.currentVersion))
    }

    @Test func everyLocalChangeSetCarriesItsAuthenticator() throws {
        let (a, recorded) = try ReplicaKeyTests.replicaWithOneChangeSet()
        #expect(try ChangeSetAuthenticator.isAuthentic(recorded, key: a.replica.replicaKey()))
        #expect(try !ChangeSetAuthenticator.isAuthentic(recorded, key: [UInt8](repeating: 1, count: 32)))
    }

    @Test func anAdoptedSnapshotHasAKeyOfItsOwn() throws {
        let a = try TestReplica(name: "a")
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("replica-key-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try SQLiteConnection(path: a.path).run("VACUUM INTO ?", [.text(copy)])
        try SyncReplica.adoptSnapshot(at: copy)
        let adopted = try SyncReplica(store: try ObjectStore(existingAt: copy))
        #expect(adopted.replicaID != a.replica.replicaID)
        #expect(try adopted.replicaKey().count == 32)
        #expect(try adopted.replicaKey() != a.replica.replicaKey())
    }
}

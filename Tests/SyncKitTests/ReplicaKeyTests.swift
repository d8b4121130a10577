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

    @Test func aStoreWithoutAKeyGetsOneWhenOpened() throws {
        let a = try TestReplica(name: "a")
        try SQLiteConnection(path: a.path).run("DELETE FROM _sync_state WHERE key = 'replica_key'")
        let reopened = try SyncReplica(store: try ObjectStore(existingAt: a.path))
        #expect(try reopened.replicaKey().count == 32)
        #expect(reopened.replicaID == a.replica.replicaID)
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

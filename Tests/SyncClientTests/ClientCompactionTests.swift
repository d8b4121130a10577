import Foundation
import Testing
@testable import SyncEngine
import SyncKit

/// A client drops the history the server's stable vector covers after a pull, once per move of
/// that vector, and as much as its configuration allows.
@Suite(.serialized) struct ClientCompactionTests {
    /// A pushes three notes and B two, through the fake server; the server then declares all
    /// five stable.
    static func twoReplicasWithStableHistory(_ server: FakeSyncServer) async throws -> (a: ClientReplica, b: ClientReplica) {
        let a = try ClientReplica(), b = try ClientReplica()
        try a.addNotes(3)
        try b.addNotes(2, prefix: "b")
        _ = try await a.client(server) { $0.historyCompaction = .off }.sync()
        _ = try await b.client(server) { $0.historyCompaction = .off }.sync()
        server.state.withLock { $0.stable = VersionVector([a.replica.replicaID: 3, b.replica.replicaID: 2]) }
        return (a, b)
    }

    @Test func aPullDropsTheChangeSetsTheStableVectorCoversOnceItMoves() async throws {
        let server = FakeSyncServer()
        try server.start()
        let (a, b) = try await ClientCompactionTests.twoReplicasWithStableHistory(server)
        #expect(try a.replica.heldHistory().changeSets == 3)

        let client = a.client(server) { $0.historyCompaction = .changeSets }
        let report = try await client.sync()
        #expect(report.pulled == 2)
        let compaction = try #require(report.compaction)
        #expect(compaction.changeSets == 5)
        #expect(compaction.stable == VersionVector([a.replica.replicaID: 3, b.replica.replicaID: 2]))
        let held = try a.replica.heldHistory()
        #expect(held.changeSets == 0)
        #expect(held.compactedThrough == compaction.stable)
        #expect(try a.noteTitles() == ["b 0", "b 1", "note 0", "note 1", "note 2"])

        // The vector did not move: nothing to look at again.
        #expect(try await client.sync().compaction == nil)
        // New work above the stable vector stays until the vector covers it.
        try a.addNotes(1, prefix: "later")
        let later = try await client.sync()
        #expect(later.pushed == 1 && later.compaction == nil)
        #expect(try a.replica.heldHistory().changeSets == 1)
    }

    @Test func aClientKeepsEverythingUnlessConfiguredToCompact() async throws {
        let server = FakeSyncServer()
        try server.start()
        let (a, _) = try await ClientCompactionTests.twoReplicasWithStableHistory(server)
        let report = try await a.client(server).sync()
        #expect(report.pulled == 2 && report.compaction == nil)
        #expect(try a.replica.heldHistory().changeSets == 5)
    }
}

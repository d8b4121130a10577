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

    /// Once a compaction left no deleted object below the stable vector, the client's pulls say
    /// so (`Sync-Forgotten-Below`), so that the server can let the identifiers it keeps go.
    @Test func aClientReportsTheVectorItForgotDeletedObjectsBelowOnItsNextPulls() async throws {
        let server = FakeSyncServer()
        try server.start()
        let (a, b) = try await ClientCompactionTests.twoReplicasWithStableHistory(server)
        let doomed = try #require(try a.context.fetchAll(Note.self).first { $0.title == "note 0" })
        a.context.delete(doomed)
        try a.context.save()
        func forgottenHeaders() -> [String?] {
            server.state.withLock { $0.requests }.filter { $0.method == "GET" && $0.path.hasSuffix("/changesets") }.map(\.forgottenBelow)
        }
        // A client that only drops change sets records nothing.
        _ = try await a.client(server) { $0.historyCompaction = .changeSets }.sync()
        #expect(try a.replica.forgottenBelow() == nil)
        // The pull that learns a vector covering the delete compacts below it: the note is
        // forgotten, and only the pulls after that report it.
        let stable = VersionVector([a.replica.replicaID: 4, b.replica.replicaID: 2])
        server.state.withLock { $0.stable = stable }
        let client = a.client(server) { $0.historyCompaction = .changeSetsAndDeletedObjects }
        let report = try await client.sync()
        #expect(report.compaction?.forgottenObjects == 1, "\(String(describing: report.compaction))")
        #expect(try a.replica.forgottenBelow() == stable)
        #expect(forgottenHeaders().allSatisfy { $0 == nil })
        _ = try await client.sync()
        #expect(forgottenHeaders().last == ReplicaRegistry.text(of: stable))
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

import Foundation
import Testing
@testable import SyncEngine
import SyncKit

/// A pulling client reports what its oldest unpushed change set had not seen
/// (`Sync-Unpushed-Bounds`), so that the server's stable vector never passes history that
/// change set may still meet; once everything it wrote is acknowledged it reports nothing.
@Suite(.serialized) struct UnpushedBoundsTests {
    /// The bounds header of each pull the server received, in order.
    static func pullBounds(_ server: FakeSyncServer) -> [String?] {
        server.state.withLock { $0.requests }.filter { $0.method == "GET" && $0.path.hasSuffix("/changesets") }.map(\.unpushedBounds)
    }

    @Test func aPullReportsWhatTheOldestUnpushedChangeSetHadNotSeenUntilItIsAcknowledged() async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica(), b = try ClientReplica()
        try a.addNotes(3)
        _ = try await a.client(server).sync()
        // B writes offline, before it has seen any of A's notes, and only pulls.
        try b.addNotes(1, prefix: "b")
        let client = b.client(server)
        #expect(try await client.pull().pulled == 3)
        #expect(try await client.pull().pulled == 0)
        let aID = a.replica.replicaID
        // The first pull found B holding nothing beyond its own note; the second found A's three,
        // which B's unpushed note had not seen.
        #expect(UnpushedBoundsTests.pullBounds(server).suffix(2) == [nil, "\(aID.storageText):0"])
        #expect(try b.replica.unpushedBounds() == UnpushedBounds(seqs: [aID: 0]))
        // A later note saw A's three, but the oldest one still decides.
        try b.addNotes(1, prefix: "later")
        #expect(try b.replica.unpushedBounds() == UnpushedBounds(seqs: [aID: 0]))

        // Pushed and acknowledged: nothing is left to bound.
        _ = try await client.sync()
        #expect(try b.replica.unpushedBounds() == .none)
        _ = try await client.pull()
        #expect(UnpushedBoundsTests.pullBounds(server).last == .some(nil))
    }

    @Test func theBoundsTextRoundTripsAndRejectsWhatIsNotAReplicaSeqList() throws {
        let first = UUID(), second = UUID()
        let bounds = UnpushedBounds(seqs: [first: 0, second: 7])
        #expect(UnpushedBounds(text: bounds.text) == bounds)
        #expect(UnpushedBounds(text: "") == UnpushedBounds.none)
        #expect(UnpushedBounds(text: "*") == UnpushedBounds.everything)
        for malformed in ["x:1", "\(first.storageText)", "\(first.storageText):-1", "\(first.storageText):1,\(first.storageText):2",
                          "\(first.storageText):1,", "\(first.storageText):1:2"] {
            #expect(UnpushedBounds(text: malformed) == nil, "\(malformed)")
        }
    }

    @Test func boundsLowerOnlyTheEntriesTheyName() {
        let first = UUID(), second = UUID(), third = UUID()
        let held = VersionVector([first: 5, second: 3, third: 2])
        let bounds = UnpushedBounds(held: held, oldestUnpushed: VersionVector([first: 2, second: 3]))
        #expect(bounds == UnpushedBounds(seqs: [first: 2, third: 0]))
        #expect(bounds.bound(VersionVector([first: 4, second: 4, third: 1])) == VersionVector([first: 2, second: 4]))
        #expect(UnpushedBounds.everything.bound(held) == VersionVector())
        #expect(UnpushedBounds(held: held, oldestUnpushed: nil) == .none)
        #expect(UnpushedBounds.none.bound(held) == held)
    }
}

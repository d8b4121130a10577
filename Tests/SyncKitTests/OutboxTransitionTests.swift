import Foundation
import Testing
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport

/// The outbox only moves forward, `pending` → `sent` → `acknowledged`; other marks are refused
/// with an error naming the change set, and mark nothing.
@Suite struct OutboxTransitionTests {
    private static let dot = Dot(replica: UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!, seq: 4)

    @Test func everyPairOfStatusesIsAllowedOrRefused() throws {
        let allowed: Set<[OutboxStatus]> = [[.pending, .sent], [.pending, .acknowledged], [.sent, .sent], [.sent, .acknowledged],
                                            [.acknowledged, .acknowledged]]
        let all: [OutboxStatus] = [.pending, .sent, .acknowledged, .remote]
        for from in all {
            for to in all {
                if allowed.contains([from, to]) {
                    #expect(try from.moving(to: to, changeSet: OutboxTransitionTests.dot) == to)
                } else {
                    let error = #expect(throws: SyncError.self, "\(from) → \(to)") { try from.moving(to: to, changeSet: OutboxTransitionTests.dot) }
                    #expect(error?.code == .invalidOutboxTransition)
                    #expect(error?.message.contains(OutboxTransitionTests.dot.description) == true, "\(error.map(String.init(describing:)) ?? "")")
                }
            }
        }
    }

    @Test func markingMovesChangeSetsForwardAndRefusesGoingBack() throws {
        let a = try TestReplica(name: "outbox")
        try a.saveTeams("one", "two")
        let first = Dot(replica: a.replica.replicaID, seq: 1), second = Dot(replica: a.replica.replicaID, seq: 2)
        try a.replica.mark([first, second], as: .sent)
        try a.replica.mark([first], as: .acknowledged)
        // Acknowledged again (a server restored from a backup stored it a second time): no change.
        try a.replica.mark([first], as: .acknowledged)
        #expect(try a.replica.localChangeSets(status: .acknowledged).map(\.dot) == [first])
        #expect(try a.replica.localChangeSets(status: .sent).map(\.dot) == [second])

        // One refused change set refuses the whole call: `second` stays sent.
        let back = try #require(throws: SyncError.self) { try a.replica.mark([second, first], as: .sent) }
        #expect(back.code == .invalidOutboxTransition)
        #expect(back.message.contains("\(first)") && back.message.contains("acknowledged"), "\(back)")
        #expect(try a.replica.localChangeSets(status: .sent).map(\.dot) == [second])
        #expect(try a.replica.unacknowledgedCount() == 1)

        let unknown = try #require(throws: SyncError.self) { try a.replica.mark([Dot(replica: a.replica.replicaID, seq: 9)], as: .sent) }
        #expect(unknown.code == .invalidOutboxTransition)
        #expect(throws: SyncError.self) { try a.replica.mark([second], as: .pending) }
        // Other replicas' change sets are not in the outbox: skipped.
        try a.replica.mark([Dot(replica: UUID(), seq: 1)], as: .acknowledged)
    }
}

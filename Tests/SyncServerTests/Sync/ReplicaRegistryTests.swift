import Foundation
@testable import HTTPServer
import Synchronization
@testable import SyncEngine
import SyncKit
import Testing

@testable import SyncServer

/// A wall clock for the replica registry that tests move by hand.
final class ManualClock: Sendable {
    private let now = Mutex(Date(timeIntervalSince1970: 1_800_000_000))

    func read() -> Date { now.withLock { $0 } }

    func advance(by seconds: TimeInterval) {
        now.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}

/// The replica registry: acknowledged vectors from pushes and pull cursors, the stable vector
/// as their meet, the horizon, and the refusal of retired replicas, with either storage.
@Suite struct ReplicaRegistryTests {
    /// A server whose registry runs on `clock`, with a schema, and `a` having pushed three change sets.
    static func server(storage: ServerStorage, clock: ManualClock = ManualClock(),
                       horizon: TimeInterval = ReplicaPolicy.defaultHorizon) throws -> (ServerFixture, ClientReplica) {
        let server = try ServerFixture(storage: storage, replicaPolicy: ReplicaPolicy(horizon: horizon, now: { clock.read() }))
        try server.registerSchema()
        let a = try ClientReplica()
        for index in 0..<3 { try a.addBoard("a\(index)") }
        server.push(try a.batch(), as: try a.credentials).expectOK()
        return (server, a)
    }

    static func records(_ server: ServerFixture) throws -> [ReplicaID: ReplicaRecord] {
        Dictionary(uniqueKeysWithValues: try server.service.registry.dataset("main").replicas().records.map { ($0.replica, $0) })
    }

    static func stable(_ response: HTTPResponse) throws -> VersionVector {
        #expect(response.status == .ok, "\(response.text)")
        let object = try #require(response.json["stable"] as? [String: Any])
        return VersionVector(Dictionary(uniqueKeysWithValues: try object.map { key, value in
            (try #require(UUID(storageText: key)), try #require((value as? NSNumber)?.uint64Value))
        }))
    }

    @Test(arguments: ServerStorage.allCases) func pushesAndPullCursorsMakeTheAcknowledgedVectorsAndTheStableVectorIsTheirMeet(
        storage: ServerStorage
    ) throws {
        let (server, a) = try ReplicaRegistryTests.server(storage: storage)
        let aID = a.replica.replicaID, b = try ClientReplica()
        #expect(try ReplicaRegistryTests.records(server)[aID]?.acknowledged == VersionVector([aID: 3]))

        // B has seen nothing yet: the stable vector waits for it.
        #expect(try ReplicaRegistryTests.stable(server.pull(after: "0", exclude: b.replica.replicaID)) == VersionVector())
        #expect(try ReplicaRegistryTests.records(server)[b.replica.replicaID]?.acknowledged == VersionVector())
        // Pulling after cursor 2 proves it holds the log up to there: A's first two.
        #expect(try ReplicaRegistryTests.stable(server.pull(after: "2", exclude: b.replica.replicaID)) == VersionVector([aID: 2]))
        let recordB = try #require(try ReplicaRegistryTests.records(server)[b.replica.replicaID])
        #expect(recordB.acknowledged == VersionVector([aID: 2]) && recordB.acknowledgedCursor == 2)

        // B pushes its own: its vector joins them; A has not pulled B's yet.
        try b.addBoard("b0")
        server.push(try b.batch(), as: try b.credentials).expectOK()
        #expect(try ReplicaRegistryTests.records(server)[b.replica.replicaID]?.acknowledged == VersionVector([aID: 2, b.replica.replicaID: 1]))
        // Everyone holds A's three, but B's change set had not seen them and A has yet to receive
        // it: A's three stay out of the stable vector until A has it.
        #expect(try ReplicaRegistryTests.stable(server.pull(after: "3", exclude: b.replica.replicaID)) == VersionVector())
        #expect(try ReplicaRegistryTests.stable(server.pull(after: "4", exclude: aID)) == VersionVector([aID: 3, b.replica.replicaID: 1]))
        // A pull that names no replica records nothing and still carries the stable vector.
        #expect(try ReplicaRegistryTests.stable(server.pull(after: "0")) == VersionVector([aID: 3, b.replica.replicaID: 1]))
        #expect(try ReplicaRegistryTests.records(server).count == 2)
    }

    @Test(arguments: ServerStorage.allCases) func theStableVectorStaysBelowWhatAPullersUnpushedChangeSetsHadNotSeen(
        storage: ServerStorage
    ) throws {
        let (server, a) = try ReplicaRegistryTests.server(storage: storage)
        let aID = a.replica.replicaID, b = try ClientReplica()
        func pull(after cursor: String, bounds: String?) -> HTTPResponse {
            server.send(.get, "/v1/datasets/main/changesets", query: [("after", cursor), ("exclude", b.replica.replicaID.uuidString)],
                        extraHeaders: bounds.map { [("Sync-Unpushed-Bounds", $0)] } ?? [])
        }
        // B holds all three of A's, but wrote a change set after seeing only the first.
        #expect(try ReplicaRegistryTests.stable(pull(after: "3", bounds: "\(aID.storageText):1")) == VersionVector([aID: 1]))
        let record = try #require(try ReplicaRegistryTests.records(server)[b.replica.replicaID])
        #expect(record.acknowledged == VersionVector([aID: 3]) && record.unpushedBounds == UnpushedBounds(seqs: [aID: 1]))
        // Too many bounds to send: B holds the stable vector at nothing.
        #expect(try ReplicaRegistryTests.stable(pull(after: "3", bounds: "*")) == VersionVector())
        // Pushed meanwhile: a pull without bounds releases them (within the cache's second).
        let released = try ReplicaRegistryTests.records(server)[b.replica.replicaID]
        #expect(released?.unpushedBounds == .everything)
        pull(after: "3", bounds: nil).expectOK()
        #expect(try ReplicaRegistryTests.records(server)[b.replica.replicaID]?.unpushedBounds == UnpushedBounds.none)
        #expect(try server.service.registry.dataset("main").replicas().records.first { $0.replica == b.replica.replicaID }?.settled
            == VersionVector([aID: 3]))

        let malformed = pull(after: "3", bounds: "\(aID.storageText):one")
        #expect(malformed.status == .badRequest && malformed.errorCode == "invalid_parameter" && malformed.text.contains("Sync-Unpushed-Bounds"),
                "\(malformed.text)")
    }

    /// A pull's `Sync-Forgotten-Below` replaces what the replica reported before; a pull without
    /// one keeps it (it stays true); a malformed one is refused naming the header.
    @Test(arguments: ServerStorage.allCases) func aPullRecordsTheVectorItsReplicaForgotDeletedObjectsBelow(storage: ServerStorage) throws {
        let (server, a) = try ReplicaRegistryTests.server(storage: storage)
        let aID = a.replica.replicaID, b = try ClientReplica()
        func pull(forgotten: String?) -> HTTPResponse {
            server.send(.get, "/v1/datasets/main/changesets", query: [("after", "3"), ("exclude", b.replica.replicaID.uuidString)],
                        extraHeaders: forgotten.map { [("Sync-Forgotten-Below", $0)] } ?? [])
        }
        pull(forgotten: nil).expectOK()
        #expect(try ReplicaRegistryTests.records(server)[b.replica.replicaID]?.forgottenBelow == nil)
        pull(forgotten: "\(aID.storageText):2").expectOK()
        #expect(try ReplicaRegistryTests.records(server)[b.replica.replicaID]?.forgottenBelow == VersionVector([aID: 2]))
        pull(forgotten: nil).expectOK()
        #expect(try ReplicaRegistryTests.records(server)[b.replica.replicaID]?.forgottenBelow == VersionVector([aID: 2]))
        pull(forgotten: "\(aID.storageText):3").expectOK()
        #expect(try ReplicaRegistryTests.records(server)[b.replica.replicaID]?.forgottenBelow == VersionVector([aID: 3]))
        for malformed in ["*", "\(aID.storageText):three", "\(aID.storageText):1,\(aID.storageText):2"] {
            let response = pull(forgotten: malformed)
            #expect(response.status == .badRequest && response.errorCode == "invalid_parameter" && response.text.contains("Sync-Forgotten-Below"),
                    "\(malformed): \(response.text)")
        }
        #expect(try ReplicaRegistryTests.records(server)[b.replica.replicaID]?.forgottenBelow == VersionVector([aID: 3]))
    }

    @Test(arguments: ServerStorage.allCases) func theStableVectorStaysBelowAPushedChangeSetThatHadNotSeenItAndIsNotEverywhereYet(
        storage: ServerStorage
    ) throws {
        let (server, a) = try ReplicaRegistryTests.server(storage: storage)
        let aID = a.replica.replicaID, b = try ClientReplica(), c = try ClientReplica()
        // B wrote before it saw any of A's three, and pushed; C holds A's three, not B's.
        try b.addBoard("b0")
        server.push(try b.batch(), as: try b.credentials).expectOK()
        server.pull(after: "4", exclude: b.replica.replicaID).expectOK()
        server.pull(after: "4", exclude: aID).expectOK()
        // Every replica holds A's three, but B's change set, which C has yet to receive, had not
        // seen them: they are not stable until C has it.
        #expect(try ReplicaRegistryTests.stable(server.pull(after: "3", exclude: c.replica.replicaID)) == VersionVector())
        #expect(try ReplicaRegistryTests.stable(server.pull(after: "4", exclude: c.replica.replicaID))
            == VersionVector([aID: 3, b.replica.replicaID: 1]))
    }

    /// Three replicas sync in turns (push, then pull and merge), each writing before its turn:
    /// every round's change sets were written concurrently with the others' of the round before.
    /// The stable vector still follows them, a round or two behind, instead of waiting for all
    /// three to stop writing.
    @Test(arguments: ServerStorage.allCases) func replicasSyncingInTurnsSeeTheStableVectorFollowThem(storage: ServerStorage) throws {
        let (server, a) = try ReplicaRegistryTests.server(storage: storage)
        let replicas = [a, try ClientReplica(), try ClientReplica()]
        var cursors = ["0", "0", "0"]
        var stable = VersionVector()
        for round in 1...4 {
            for (index, replica) in replicas.enumerated() {
                try replica.addBoard("round \(round)")
                server.push(try replica.batch(missingFrom: try server.serverVector()), as: try replica.credentials).expectOK()
                let response = server.pull(after: cursors[index], exclude: replica.replica.replicaID)
                let page = try PullRouteTests.page(response)
                _ = try replica.replica.apply(page.changeSets)
                cursors[index] = page.cursor
                stable = try ReplicaRegistryTests.stable(response)
            }
        }
        // At the last turn every replica holds A's change sets through round 3 (A's seq 6), B's
        // and C's through round 2; the stable vector stays below what B's and C's round-3 change
        // sets had seen when written (B's: A through round 2, C through round 1; C's: A and B
        // through round 2).
        let (aID, bID, cID) = (replicas[0].replica.replicaID, replicas[1].replica.replicaID, replicas[2].replica.replicaID)
        #expect(stable == VersionVector([aID: 5, bID: 2, cID: 1]))
    }

    @Test(arguments: ServerStorage.allCases) func aRetiredReplicaIsRefusedOnPushAndPullAndNoLongerHoldsTheStableVectorBack(
        storage: ServerStorage
    ) throws {
        let (server, a) = try ReplicaRegistryTests.server(storage: storage)
        let b = try ClientReplica()
        #expect(try ReplicaRegistryTests.stable(server.pull(after: "0", exclude: b.replica.replicaID)) == VersionVector())
        // Retired from outside the server, as `syncd replica retire` does while it runs.
        let administered: ReplicaAdministration.Storage = server.database.map { .database($0.url) } ?? .dataDirectory(server.directory)
        try ReplicaAdministration.retire(b.replica.replicaID, of: "main", in: administered)
        #expect(try ReplicaAdministration.replicas(of: "main", in: administered).first { $0.replica == b.replica.replicaID }?.retired == true)

        let pull = server.pull(after: "0", exclude: b.replica.replicaID)
        #expect(pull.status == .gone && pull.errorCode == "replica_retired", "\(pull.text)")
        try b.addBoard("b0")
        let vectorBefore = try server.serverVector()
        let push = server.push(try b.batch(), as: try b.credentials)
        #expect(push.status == .gone && push.errorCode == "replica_retired", "\(push.text)")
        #expect(try server.serverVector() == vectorBefore)
        // Others go on; the stable vector (recomputed within a second) no longer waits for B.
        try a.addBoard("a3")
        server.push(try a.batch(missingFrom: vectorBefore), as: try a.credentials).expectOK()
        #expect(try ReplicaRegistryTests.stable(server.pull(after: "4", exclude: a.replica.replicaID)) == VersionVector([a.replica.replicaID: 4]))
    }

    @Test(arguments: ServerStorage.allCases) func aReplicaSilentBeyondTheHorizonCountsAsRetired(storage: ServerStorage) throws {
        let clock = ManualClock()
        let (server, a) = try ReplicaRegistryTests.server(storage: storage, clock: clock, horizon: 100)
        let b = try ClientReplica()
        #expect(try ReplicaRegistryTests.stable(server.pull(after: "0", exclude: b.replica.replicaID)) == VersionVector())
        clock.advance(by: 60)
        server.pull(after: "3", exclude: a.replica.replicaID).expectOK()
        clock.advance(by: 60)
        // B was last seen 120 s ago: silent, so refused, and not waited for.
        let refused = server.pull(after: "0", exclude: b.replica.replicaID)
        #expect(refused.status == .gone && refused.errorCode == "replica_retired", "\(refused.text)")
        let (records, policy) = try server.service.registry.dataset("main").replicas()
        #expect(records.first { $0.replica == b.replica.replicaID }?.state(at: policy.now(), horizon: policy.horizon) == .silent)
        #expect(try ReplicaRegistryTests.stable(server.pull(after: "3", exclude: a.replica.replicaID)) == VersionVector([a.replica.replicaID: 3]))
    }

    @Test(arguments: ServerStorage.allCases) func theStableVectorLagIsAMetric(storage: ServerStorage) throws {
        let (server, _) = try ReplicaRegistryTests.server(storage: storage)
        server.pull(after: "1", exclude: UUID()).expectOK()
        let metrics = server.send(.get, "/metrics", token: nil).text
        #expect(metrics.contains("syncd_stable_vector_lag{dataset=\"main\"} 2"), "\(metrics)")
    }

    @Test func aPollThatBringsNothingNewWritesNothing() throws {
        let clock = ManualClock()
        let policy = ReplicaPolicy(horizon: 1000, now: { clock.read() })
        let replica = UUID(), author = UUID()
        let logVector: (Int64, Int64) throws -> VersionVector = { _, through in VersionVector([author: UInt64(through)]) }
        let first = try #require(try ReplicaRegistry.contact(nil, replica: replica, pulledAfter: 5, policy: policy, logVector: logVector))
        #expect(first.acknowledged == VersionVector([author: 5]) && first.acknowledgedCursor == 5)
        #expect(try ReplicaRegistry.contact(first, replica: replica, pulledAfter: 5, policy: policy, logVector: logVector) == nil)
        clock.advance(by: 99)
        #expect(try ReplicaRegistry.contact(first, replica: replica, pulledAfter: 5, policy: policy, logVector: logVector) == nil)
        // The last-seen time is written again once it is a tenth of the horizon old, or the vector grows.
        clock.advance(by: 1)
        #expect(try ReplicaRegistry.contact(first, replica: replica, pulledAfter: 5, policy: policy, logVector: logVector)?.lastSeen == clock.read())
        #expect(try ReplicaRegistry.contact(first, replica: replica, pushed: VersionVector([replica: 1]), policy: policy, logVector: logVector)?
            .acknowledged == VersionVector([author: 5, replica: 1]))
        // An older cursor never shrinks what the replica holds.
        let older = try ReplicaRegistry.contact(first, replica: replica, pulledAfter: 2, policy: policy, logVector: logVector)
        #expect(older?.acknowledged == first.acknowledged && older?.acknowledgedCursor == 5)
    }

    @Test func theStableVectorIsTheMeetOfActiveReplicasCappedByTheDatasetVector() throws {
        let now = Date(), x = UUID(), y = UUID()
        func record(_ acknowledged: VersionVector, seen: TimeInterval = 0, retired: Bool = false) -> ReplicaRecord {
            ReplicaRecord(replica: UUID(), acknowledged: acknowledged, acknowledgedCursor: 0, lastSeen: now.addingTimeInterval(-seen), retired: retired)
        }
        let dataset = VersionVector([x: 5, y: 3])
        let records = [record(VersionVector([x: 4, y: 3])), record(VersionVector([x: 5, y: 1])),
                       record(VersionVector(), retired: true), record(VersionVector(), seen: 200)]
        #expect(try ReplicaRegistry.stableVector(of: records, datasetVector: dataset, at: now, horizon: 100) { _, _ in nil }
            == VersionVector([x: 4, y: 1]))
        #expect(try ReplicaRegistry.stableVector(of: [], datasetVector: dataset, at: now, horizon: 100) { _, _ in nil } == dataset)
        #expect(ReplicaRegistry.lag(of: VersionVector([x: 4, y: 1]), behind: dataset) == 3)
    }

    /// Replicas that sync in turns always hold change sets that were concurrent when written.
    /// Only those not yet everywhere lower the stable vector: lowering again below the change sets
    /// every replica holds would walk back through each round of turns to the first.
    @Test func concurrencyAmongChangeSetsEveryReplicaHoldsDoesNotLowerTheStableVector() throws {
        let now = Date(), x = UUID(), y = UUID()
        // Both active replicas hold x1, x2, y1, y2: x2 was written before y1 arrived, y2 before
        // x1 arrived. x3, not yet everywhere, was written before y2 arrived.
        let held = VersionVector([x: 2, y: 2])
        let records = [x, y].map { ReplicaRecord(replica: $0, acknowledged: held, acknowledgedCursor: 4, lastSeen: now, retired: false) }
        let stored: [Dot: VersionVector] = [
            Dot(replica: x, seq: 1): VersionVector(), Dot(replica: x, seq: 2): VersionVector([x: 1]),
            Dot(replica: x, seq: 3): VersionVector([x: 2, y: 1]),
            Dot(replica: y, seq: 1): VersionVector(), Dot(replica: y, seq: 2): VersionVector([y: 1]),
        ]
        var lookedUp: [Dot] = []
        let stable = try ReplicaRegistry.stableVector(of: records, datasetVector: VersionVector([x: 3, y: 2]), at: now, horizon: 100) { replica, seq in
            lookedUp.append(Dot(replica: replica, seq: seq + 1))
            return stored[Dot(replica: replica, seq: seq + 1)]
        }
        // x3 lowers y's entry to what it had seen; x2 and y2, held everywhere, lower nothing.
        #expect(stable == VersionVector([x: 2, y: 1]))
        #expect(lookedUp == [Dot(replica: x, seq: 3)])
    }
}

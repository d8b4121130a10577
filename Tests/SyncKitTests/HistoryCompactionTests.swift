import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport
import Testing

/// CONTRACT.md "History compaction": a replica drops history below a stable vector, and every
/// merge after it ends as it would have without it.
@Suite struct HistoryCompactionTests {
    /// What a scenario leaves on A, B and the observer C: each store's graph and journal.
    struct Outcome: Equatable {
        var digests: [String]
        var journals: [[String]]
    }

    /// The vector every replica of the trio has reached.
    static func stableVector(of trio: ReplicaTrio) throws -> VersionVector {
        let vectors = try [trio.a, trio.b, trio.c].map { try $0.replica.versionVector() }
        return vectors.dropFirst().reduce(vectors[0]) { SyncReplica.meet($0, $1) }
    }

    /// Marks every local change set of `replica` acknowledged, as a server's answer would.
    static func acknowledgeEverything(of replica: TestReplica) throws {
        try replica.replica.mark(try replica.replica.localChangeSets(status: .pending).map(\.dot), as: .acknowledged)
    }

    /// A saves `objects` (and what they reach), everyone takes them; then A deletes `doomed` and
    /// everyone takes that too.
    static func deleteEverywhere(_ doomed: Member, savedWith objects: [any PersistentEntity], in trio: ReplicaTrio) throws {
        for object in objects { trio.a.context.insert(object) }
        try trio.a.context.save()
        try trio.shareBase()
        trio.a.context.delete(try trio.a.object(Member.self, doomed.objectID))
        try trio.a.context.save()
        try trio.shareBase()
    }

    /// A's change sets acknowledged, A and B compact below what all three have.
    static func compactAAndB(of trio: ReplicaTrio) throws -> [SyncReplica.HistoryCompaction] {
        try acknowledgeEverything(of: trio.a)
        let stable = try stableVector(of: trio)
        return [try trio.a.replica.compactHistory(stable: stable), try trio.b.replica.compactHistory(stable: stable)]
    }

    /// Each journal entry as text, without its number (which counts per replica).
    static func journal(of replica: TestReplica) throws -> [String] {
        try replica.replica.conflicts().map { entry in
            "\(entry.kind.rawValue) \(entry.entity) \(entry.objectID) \(entry.property ?? "-") \(String(describing: entry.winner)) \(entry.loser) \(entry.cause)"
        }
    }

    /// A team with two members, one of them deleted and the delete known everywhere; then, with
    /// or without A and B compacting below the delete, changes made after it: A and B change the
    /// other member concurrently, A deletes the team's label, and B links the survivor to the
    /// team. C observes without compacting.
    static func deleteThenLaterChanges(compacting: Bool, order: ExchangeOrder, later: ReplicaTrio.Side) throws -> (Outcome, [SyncReplica.HistoryCompaction]) {
        let trio = try ReplicaTrio()
        let team = Team(), doomed = Member(), survivor = Member(), label = Label()
        team.name = "T"; doomed.name = "doomed"; survivor.name = "survivor"; label.text = "L"
        doomed.team = team
        doomed.manager = survivor
        doomed.addToLabels(label)
        try deleteEverywhere(doomed, savedWith: [team, survivor], in: trio)
        let reports = compacting ? try compactAAndB(of: trio) : []
        if compacting {
            // Forgotten: no record of the deleted member is left on A and B.
            for replica in [trio.a, trio.b] {
                #expect(try traces(of: doomed.objectID, in: replica) == 0)
            }
            #expect(try traces(of: doomed.objectID, in: trio.c) > 0)
        }

        trio.make(later: later)
        try trio.a.object(Member.self, survivor.objectID).level = 1
        trio.a.context.delete(try trio.a.object(Label.self, label.objectID))
        try trio.a.context.save()
        let survivorOnB = try trio.b.object(Member.self, survivor.objectID)
        survivorOnB.level = 2
        survivorOnB.team = try trio.b.object(Team.self, team.objectID)
        try trio.b.context.save()
        try trio.exchange(order)
        try trio.expectConverged()
        #expect(try trio.a.fetch(Member.self, doomed.objectID) == nil)
        return (try outcome(of: trio, naming: [(team.objectID, "team"), (doomed.objectID, "doomed"), (survivor.objectID, "survivor"),
                                               (label.objectID, "label")]), reports)
    }

    /// The rows of the sync tables that name `id`: creation, deletes, stamps, positions, edges.
    static func traces(of id: UUID, in replica: TestReplica) throws -> Int64 {
        try replica.replica.withConnection { connection in
            let stored = id.storedValue
            var count: Int64 = 0
            for query in ["SELECT count(*) FROM _sync_object WHERE id = ?", "SELECT count(*) FROM _sync_delete WHERE id = ?",
                          "SELECT count(*) FROM _sync_field_stamps WHERE id = ?", "SELECT count(*) FROM _sync_position WHERE id = ? OR member = ?1",
                          "SELECT count(*) FROM _sync_edge WHERE id = ? OR target = ?1"] {
                if case .integer(let rows)? = try connection.rows(query, [stored]).first?.first { count += rows }
            }
            return count
        }
    }

    /// The graphs and journals of A, B and C, with the replicas and `objects` named by their
    /// roles (identifiers differ from run to run) and each graph's rows sorted (they come in
    /// identifier order).
    static func outcome(of trio: ReplicaTrio, naming objects: [(UUID, String)]) throws -> Outcome {
        let names = [(trio.a.replica.replicaID, "A"), (trio.b.replica.replicaID, "B"), (trio.c.replica.replicaID, "C")] + objects
        func named(_ text: String) -> String {
            names.reduce(text) { $0.replacingOccurrences(of: $1.0.uuidString, with: $1.1) }
        }
        let replicas = [trio.a, trio.b, trio.c]
        let digests = try replicas.map { named(try $0.digest()).split(separator: "\n").sorted().joined(separator: "\n") }
        return Outcome(digests: digests, journals: try replicas.map { try journal(of: $0).map(named) })
    }

    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func aStableDeleteLosesItsTombstoneAndLaterChangesMergeAsWithout(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let (compacted, reports) = try HistoryCompactionTests.deleteThenLaterChanges(compacting: true, order: order, later: later)
        let (uncompacted, _) = try HistoryCompactionTests.deleteThenLaterChanges(compacting: false, order: order, later: later)
        #expect(compacted == uncompacted)
        for report in reports {
            // Both stores dropped the two change sets, the deleted member's last values, its
            // stamps and position, then forgot it: its creation row, delete record and edges
            // (to its team, manager and label) went, and the delete's kept stamps with them.
            #expect(report.changeSets == 2 && report.changeSetStampsKept == 1, "\(report)")
            #expect(report.tombstones == 1 && report.bytes > 0, "\(report)")
            #expect(report.forgottenObjects == 1 && report.removedEdges + report.forgottenEdges == 3, "\(report)")
        }
    }

    /// A retired replica's unpushed edit replayed onto a store that forgot an object it names
    /// (deleted concurrently, the delete stable and compacted): what names the object is not
    /// replayed (no server could merge it) but journaled, and the rest of the edit is.
    @Test func aReplayedEditOfAForgottenObjectIsJournaledInsteadOfReplayed() throws {
        let clock = FakeClock()
        let a = try TestReplica(clock: clock, name: "a"), b = try TestReplica(clock: clock, name: "b")
        let doomed = Member(), other = Member()
        doomed.name = "doomed"; other.name = "other"
        a.context.insert(doomed)
        a.context.insert(other)
        try a.context.save()
        try b.pull(from: a)
        b.context.delete(try b.object(Member.self, doomed.objectID))
        try b.context.save()
        try b.replica.mark(try b.replica.localChangeSets(status: .pending).map(\.dot), as: .acknowledged)
        #expect(try b.replica.compactHistory(stable: try b.replica.versionVector()).forgottenObjects == 1)

        // Concurrently, A renames the doomed member, makes it the other's manager, and levels the other up.
        let doomedOnA = try a.object(Member.self, doomed.objectID), otherOnA = try a.object(Member.self, other.objectID)
        doomedOnA.name = "renamed"
        otherOnA.manager = doomedOnA
        otherOnA.level = 3
        try a.context.save()
        let edit = try #require(try a.replica.localChangeSets(status: .pending).last)

        let replayed = try #require(try b.replica.replayLocally(edit))
        #expect(replayed.operations == [.set(entity: "Member", id: other.objectID, attribute: "level", values: [.integer(3)])])
        #expect(try b.fetch(Member.self, other.objectID)?.level == 3)
        let entries = try b.replica.conflicts().filter { $0.cause == edit.dot }
        let renamed = entries.first { $0.kind == .updateVersusDelete && $0.objectID == doomed.objectID && $0.property == "name" }
        #expect(renamed?.loser.value == .string("renamed") && renamed?.winner == nil, "\(entries)")
        let dropped = entries.first { $0.kind == .referenceDropped && $0.objectID == other.objectID && $0.property == "manager" }
        #expect(dropped?.loser.value == .string(doomed.objectID.storageText), "\(entries)")
        #expect(entries.count == 2, "\(entries)")
    }

    /// Merges after compaction that change the neighbours of a forgotten object (the team its
    /// deleted member belonged to) end as in the store that never compacted: nothing of the
    /// delete is left to re-judge, and nothing needed it.
    @Test(arguments: ExchangeOrder.allCases)
    func aForgottenDeleteLeavesLaterMergesOfItsNeighboursAsWithout(order: ExchangeOrder) throws {
        let trio = try ReplicaTrio()
        let team = Team(), member = Member(), other = Member()
        team.name = "T"; member.name = "M"; other.name = "O"
        member.team = team
        other.team = team
        try HistoryCompactionTests.deleteEverywhere(member, savedWith: [team], in: trio)
        _ = try HistoryCompactionTests.compactAAndB(of: trio)
        let deleteDot = Dot(replica: trio.a.replica.replicaID, seq: 2)
        #expect(try trio.b.replica.withConnection { try ChangeSetTable.changeSet(deleteDot, on: $0) } == nil)
        #expect(try trio.b.replica.withConnection { try ChangeSetTable.vector(of: deleteDot, on: $0) } == nil)
        #expect(try HistoryCompactionTests.traces(of: member.objectID, in: trio.b) == 0)

        // The team the deleted member belonged to changes on both sides.
        trio.make(later: .a)
        try trio.a.object(Team.self, team.objectID).name = "A"
        try trio.a.context.save()
        try trio.b.object(Team.self, team.objectID).insertIntoMembers(try trio.b.object(Member.self, other.objectID), at: 0)
        try trio.b.context.save()
        try trio.exchange(order)
        try trio.expectConverged()
        #expect(try trio.c.fetch(Team.self, team.objectID)?.members.map(\.objectID) == [other.objectID])
    }

    /// A worker with a manager and a team; then A unlinks the manager and moves the worker to
    /// another team, and everyone takes it; then, with or without A and B compacting below that,
    /// A deletes the former manager (whose `reports` deny a delete) while B links the worker to
    /// that manager again and back to the first team. C observes without compacting.
    static func unlinkThenLaterChanges(compacting: Bool, order: ExchangeOrder, later: ReplicaTrio.Side) throws -> (Outcome, [SyncReplica.HistoryCompaction]) {
        let trio = try ReplicaTrio()
        let first = Team(), second = Team(), boss = Member(), worker = Member()
        first.name = "first"; second.name = "second"; boss.name = "boss"; worker.name = "worker"
        worker.manager = boss
        worker.team = first
        for object in [first, second, boss, worker] as [any PersistentEntity] { trio.a.context.insert(object) }
        try trio.a.context.save()
        try trio.shareBase()
        let workerOnA = try trio.a.object(Member.self, worker.objectID)
        workerOnA.manager = nil
        workerOnA.team = try trio.a.object(Team.self, second.objectID)
        try trio.a.context.save()
        try trio.shareBase()
        let reports = compacting ? try compactAAndB(of: trio) : []

        trio.make(later: later)
        trio.a.context.delete(try trio.a.object(Member.self, boss.objectID))
        try trio.a.context.save()
        let workerOnB = try trio.b.object(Member.self, worker.objectID)
        workerOnB.manager = try trio.b.object(Member.self, boss.objectID)
        workerOnB.team = try trio.b.object(Team.self, first.objectID)
        try trio.b.context.save()
        try trio.exchange(order)
        try trio.expectConverged()
        // The link B made concurrently with the delete voids it: the manager stays.
        #expect(try trio.c.fetch(Member.self, worker.objectID)?.manager?.objectID == boss.objectID)
        return (try outcome(of: trio, naming: [(first.objectID, "first"), (second.objectID, "second"), (boss.objectID, "boss"),
                                               (worker.objectID, "worker")]), reports)
    }

    /// Edges a plain unlink removed, addition and removal both stable, between objects never
    /// deleted, are dropped; later links and a delete whose deny rule they meet merge as without.
    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func aStableUnlinkLosesItsRemovedEdgeAndLaterChangesMergeAsWithout(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let (compacted, reports) = try HistoryCompactionTests.unlinkThenLaterChanges(compacting: true, order: order, later: later)
        let (uncompacted, _) = try HistoryCompactionTests.unlinkThenLaterChanges(compacting: false, order: order, later: later)
        #expect(compacted == uncompacted)
        #expect(compacted.journals[2].contains { $0.hasPrefix("voided_delete Member boss") }, "\(compacted.journals[2])")
        for report in reports {
            // The worker's former manager and former team: two removed additions on each store.
            #expect(report.removedEdges == 2 && report.tombstones == 0, "\(report)")
        }
    }

    /// A worker deleted by A while B made it report to a manager (the reference stays, hidden
    /// behind the delete), and everyone takes both; then, with or without A and B compacting below
    /// that (which forgets the worker and its reference), A deletes a team while B moves the
    /// manager into it. C observes without compacting.
    static func cascadeOntoAManagerOfADeletedWorker(compacting: Bool, order: ExchangeOrder, later: ReplicaTrio.Side) throws -> (Outcome, [SyncReplica.HistoryCompaction]) {
        let trio = try ReplicaTrio()
        let team = Team(), home = Team(), manager = Member(), worker = Member()
        team.name = "T"; home.name = "H"; manager.name = "manager"; worker.name = "worker"
        manager.team = home
        for object: any PersistentEntity in [team, home, worker] { trio.a.context.insert(object) }
        try trio.a.context.save()
        try trio.shareBase()
        trio.a.context.delete(try trio.a.object(Member.self, worker.objectID))
        try trio.a.context.save()
        try trio.b.object(Member.self, worker.objectID).manager = try trio.b.object(Member.self, manager.objectID)
        try trio.b.context.save()
        try trio.exchange(.aThenB)
        let reports = compacting ? try compactAAndB(of: trio) : []
        if compacting {
            for replica in [trio.a, trio.b] { #expect(try traces(of: worker.objectID, in: replica) == 0) }
            #expect(try traces(of: worker.objectID, in: trio.c) > 0)
        }

        trio.make(later: later)
        trio.a.context.delete(try trio.a.object(Team.self, team.objectID))
        try trio.a.context.save()
        try trio.b.object(Member.self, manager.objectID).team = try trio.b.object(Team.self, team.objectID)
        try trio.b.context.save()
        try trio.exchange(order)
        try trio.expectConverged()
        return (try outcome(of: trio, naming: [(team.objectID, "team"), (home.objectID, "home"), (manager.objectID, "manager"),
                                               (worker.objectID, "worker")]), reports)
    }

    /// A cascade that reaches an object is refused (deny) by that object's current references,
    /// but not by one from an object the deleter had seen deleted: a store that compacted no
    /// longer holds that object or its reference, and one that did not must judge as it does.
    /// Here the manager's `reports` (deny) still holds the deleted worker's hidden reference on C.
    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func aReferenceFromAnObjectTheDeleterSawDeletedDoesNotDenyACascadeWhetherCompactedOrNot(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let (compacted, reports) = try HistoryCompactionTests.cascadeOntoAManagerOfADeletedWorker(compacting: true, order: order, later: later)
        let (uncompacted, _) = try HistoryCompactionTests.cascadeOntoAManagerOfADeletedWorker(compacting: false, order: order, later: later)
        #expect(compacted == uncompacted)
        for journal in compacted.journals {
            #expect(journal.contains { $0.hasPrefix("cascaded_delete Member manager") }, "\(journal)")
            #expect(!journal.contains { $0.hasPrefix("voided_delete") }, "\(journal)")
        }
        #expect(!compacted.digests[2].contains("'manager'") && !compacted.digests[2].contains("'T'"), "\(compacted.digests[2])")
        for report in reports { #expect(report.forgottenObjects == 1 && report.forgottenEdges == 1, "\(report)") }
    }

    /// Runs `scenario` with and without compaction: the outcomes are equal, and the compacting
    /// store dropped change sets but kept every deleted object's values and records.
    static func expectKeptAndOutcomeAsWithout(_ scenario: (_ compacting: Bool) throws -> (Outcome, [SyncReplica.HistoryCompaction]),
                                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (compacted, reports) = try scenario(true)
        let (uncompacted, _) = try scenario(false)
        #expect(compacted == uncompacted, sourceLocation: sourceLocation)
        for report in reports {
            #expect(report.changeSets > 0 && report.tombstones == 0 && report.forgottenObjects == 0, "\(report)", sourceLocation: sourceLocation)
        }
    }

    /// A delete that is stable but judged one way on the change sets at or below the stable vector
    /// and the other way with a later one: A deletes a peer while B makes it the twin of a peer
    /// that has a sponsor, and everyone takes both, so the cascade through the twin meets the
    /// sponsor (deny) and the delete is void. Then, with or without B compacting below that, B
    /// unlinks the twin (the delete stands on B again) while A, which holds the peer alive, makes
    /// it a sponsor of another (the deny rule voids the delete for good). A compacting B must not
    /// take the delete for settled: A's change set names the peer. C observes without compacting.
    static func voidDeleteThenLaterUnlinkAndLink(compacting: Bool, order: ExchangeOrder) throws -> (Outcome, [SyncReplica.HistoryCompaction]) {
        let trio = try ReplicaTrio(entities: everyShapeEntities)
        let doomed = Peer(), twin = Peer(), sponsor = Peer()
        doomed.name = "doomed"; twin.name = "twin"; sponsor.name = "sponsor"
        twin.addToSponsors(sponsor)
        for peer in [doomed, twin, sponsor] { trio.a.context.insert(peer) }
        try trio.a.context.save()
        try trio.shareBase()
        trio.a.context.delete(try trio.a.object(Peer.self, doomed.objectID))
        try trio.a.context.save()
        try trio.b.object(Peer.self, doomed.objectID).twin = try trio.b.object(Peer.self, twin.objectID)
        try trio.b.context.save()
        try trio.exchange(.aThenB)
        #expect(try trio.a.exists(Peer.self, doomed.objectID) && trio.b.exists(Peer.self, doomed.objectID))

        let stable = try stableVector(of: trio)
        try trio.b.object(Peer.self, doomed.objectID).twin = nil
        try trio.b.context.save()
        #expect(try !trio.b.exists(Peer.self, doomed.objectID))
        try trio.a.object(Peer.self, doomed.objectID).addToSponsors(try trio.a.object(Peer.self, sponsor.objectID))
        try trio.a.context.save()
        let reports = compacting ? [try trio.b.replica.compactHistory(stable: stable)] : []
        try trio.exchange(order)
        try trio.expectConverged()
        #expect(try trio.c.fetch(Peer.self, doomed.objectID)?.sponsors.map(\.objectID) == [sponsor.objectID])
        return (try outcome(of: trio, naming: [(doomed.objectID, "doomed"), (twin.objectID, "twin"), (sponsor.objectID, "sponsor")]), reports)
    }

    /// Whether a delete is settled is judged on the change sets at or below the stable vector:
    /// an object whose edges a later change set added or removed, or that has an edge to such a
    /// deleted object, keeps its last values and records.
    @Test(arguments: ExchangeOrder.allCases)
    func aDeleteWhoseEdgesChangedAboveTheStableVectorIsNotSettled(order: ExchangeOrder) throws {
        try HistoryCompactionTests.expectKeptAndOutcomeAsWithout { try HistoryCompactionTests.voidDeleteThenLaterUnlinkAndLink(compacting: $0, order: order) }
    }

    /// A delete judged through a neighbour's delete that is itself judged otherwise above the
    /// stable vector. A deletes team T (and its member Q with it) while B moves M, who has a
    /// report, into T: the cascade meets M's reports (deny), so the delete is void everywhere. Then
    /// C deletes P while B makes P Q's manager, and everyone takes both: P's reports (deny) gained
    /// Q, who is alive, so P's delete is void too. Then, with or without B compacting below that,
    /// B moves M out of T again (T's delete stands on B, Q is gone, and so P's delete stands
    /// there too) while A, holding P alive, makes P the manager of M's report. No edge of P or Q
    /// changed above the vector, but they are linked, through deleted objects, to T, whose edges
    /// did: a compacting B must keep their records. C observes without compacting.
    static func deleteJudgedThroughAVoidNeighbourThenLaterUnlinkAndLink(compacting: Bool, order: ExchangeOrder)
        throws -> (Outcome, [SyncReplica.HistoryCompaction]) {
        let trio = try ReplicaTrio()
        let team = Team(), q = Member(), m = Member(), report = Member(), p = Member()
        team.name = "T"; q.name = "Q"; m.name = "M"; report.name = "report"; p.name = "P"
        q.team = team
        report.manager = m
        for object: any PersistentEntity in [team, m, report, p] { trio.a.context.insert(object) }
        try trio.a.context.save()
        try trio.shareBase()
        trio.a.context.delete(try trio.a.object(Team.self, team.objectID))
        try trio.a.context.save()
        try trio.b.object(Member.self, m.objectID).team = try trio.b.object(Team.self, team.objectID)
        try trio.b.context.save()
        try trio.exchange(.aThenB)
        trio.c.context.delete(try trio.c.object(Member.self, p.objectID))
        try trio.c.context.save()
        try trio.b.object(Member.self, q.objectID).manager = try trio.b.object(Member.self, p.objectID)
        try trio.b.context.save()
        for (to, from) in [(trio.a, trio.b), (trio.a, trio.c), (trio.b, trio.c), (trio.c, trio.b)] { try to.pull(from: from) }
        for replica in [trio.a, trio.b, trio.c] {
            #expect(try replica.exists(Member.self, p.objectID) && replica.exists(Member.self, q.objectID))
        }

        let stable = try stableVector(of: trio)
        try trio.b.object(Member.self, m.objectID).team = nil
        try trio.b.context.save()
        #expect(try !trio.b.exists(Member.self, q.objectID) && !trio.b.exists(Member.self, p.objectID))
        try trio.a.object(Member.self, report.objectID).manager = try trio.a.object(Member.self, p.objectID)
        try trio.a.context.save()
        let reports = compacting ? [try trio.b.replica.compactHistory(stable: stable)] : []
        try trio.exchange(order)
        try trio.expectConverged()
        #expect(try trio.c.fetch(Member.self, report.objectID)?.manager?.objectID == p.objectID)
        #expect(try !trio.c.exists(Member.self, q.objectID))
        return (try outcome(of: trio, naming: [(team.objectID, "T"), (q.objectID, "Q"), (m.objectID, "M"), (report.objectID, "report"),
                                               (p.objectID, "P")]), reports)
    }

    /// A deleted object linked to one whose delete may be judged otherwise above the stable
    /// vector is not settled either, however far the chain of deleted neighbours goes.
    @Test(arguments: ExchangeOrder.allCases)
    func aDeleteLinkedToOneJudgedAboveTheStableVectorIsNotSettledEither(order: ExchangeOrder) throws {
        try HistoryCompactionTests.expectKeptAndOutcomeAsWithout { try HistoryCompactionTests.deleteJudgedThroughAVoidNeighbourThenLaterUnlinkAndLink(compacting: $0, order: order) }
    }

    /// A removed edge stays at an object whose delete a merge may still re-judge (here one above
    /// the stable vector), and every removed edge stays while an older app may be active.
    @Test func removedEdgesStayWhereADeleteMayBeReJudgedOrWhenAskedTo() throws {
        let a = try TestReplica(name: "a")
        let boss = Member(), worker = Member(), other = Member(), loner = Member()
        boss.name = "boss"; worker.name = "worker"; other.name = "other"; loner.name = "loner"
        worker.manager = boss
        loner.manager = boss
        for object in [boss, worker, other, loner] as [any PersistentEntity] { a.context.insert(object) }
        try a.context.save()
        worker.manager = other
        loner.manager = other
        try a.context.save()
        let stable = try a.replica.versionVector()
        // Deleted after the stable vector: a concurrent change set may still void the delete.
        a.context.delete(worker)
        try a.context.save()
        try HistoryCompactionTests.acknowledgeEverything(of: a)
        let keeping = try a.replica.compactHistory(stable: stable, droppingDeletedObjects: false)
        #expect(keeping.removedEdges == 0, "\(keeping)")
        let dropping = try a.replica.compactHistory(stable: stable)
        // The loner's former manager goes; the worker's stays.
        #expect(dropping.removedEdges == 1, "\(dropping)")
        let workerEdges = try a.replica.withConnection { try EdgeTable.edges(from: ObjectKey(entity: "Member", id: worker.objectID), "manager", on: $0) }
        #expect(Set(workerEdges.map(\.target)) == [boss.objectID, other.objectID], "\(workerEdges)")
    }

    /// Only change sets the outbox is done with go; a peer that lacks dropped ones is told so; the
    /// outbox still accepts a repeated acknowledgement of a dropped change set and refuses to send it.
    @Test func theOutboxKeepsWhatItMustPushAndPeersLackingDroppedChangeSetsAreRefused() throws {
        let a = try TestReplica(name: "a"), b = try TestReplica(name: "b")
        for text in ["one", "two", "three"] {
            let label = Label()
            label.text = text
            a.context.insert(label)
            try a.context.save()
        }
        try b.pull(from: a)
        let dots = try a.replica.localChangeSets(status: .pending).map(\.dot)
        try a.replica.mark([dots[0]], as: .acknowledged)
        try a.replica.mark([dots[1]], as: .sent)
        let stable = SyncReplica.meet(try a.replica.versionVector(), try b.replica.versionVector())

        let report = try a.replica.compactHistory(stable: stable)
        #expect(report.changeSets == 1, "only the acknowledged one: \(report)")
        #expect(try a.replica.localChangeSets(status: .sent).map(\.dot) == [dots[1]])
        #expect(try a.replica.localChangeSets(status: .pending).map(\.dot) == [dots[2]])
        #expect(try a.replica.compactedVector() == stable)
        let history = try a.replica.heldHistory()
        #expect(history.changeSets == 2 && history.lastCompaction == report && history.compactedThrough == stable)

        // Acknowledged again (a server restored from a backup): still fine; sent again: refused.
        try a.replica.mark([dots[0]], as: .acknowledged)
        let transition = #expect(throws: SyncError.self) { try a.replica.mark([dots[0]], as: .sent) }
        #expect(transition?.code == .invalidOutboxTransition)

        let fresh = try TestReplica(name: "fresh")
        let refusal = #expect(throws: SyncError.self) { try fresh.pull(from: a) }
        #expect(refusal?.code == .historyCompacted)
        #expect(refusal?.message.contains("\(a.replica.replicaID) after 0 through 3") == true, "\(refusal?.message ?? "")")
        // A peer that has what was dropped still gets the rest.
        #expect(try a.replica.changeSets(missingFrom: VersionVector([a.replica.replicaID: 1])).map(\.dot) == [dots[1], dots[2]])
    }

    /// This replica's unacknowledged change set that did not see a change set at or below the
    /// given vector lowers it: what that change set may meet stays.
    @Test func anUnpushedConcurrentChangeSetLowersTheStableVector() throws {
        let a = try TestReplica(name: "a"), b = try TestReplica(name: "b")
        let label = Label()
        label.text = "shared"
        a.context.insert(label)
        try a.context.save()
        try b.pull(from: a)
        try HistoryCompactionTests.acknowledgeEverything(of: a)
        // B edits without having seen A's next change set, and has not pushed yet.
        try b.object(Label.self, label.objectID).text = "b"
        try b.context.save()
        a.context.delete(try a.object(Label.self, label.objectID))
        try a.context.save()
        try b.pull(from: a)
        let given = try a.replica.versionVector()
        let report = try b.replica.compactHistory(stable: given)
        #expect(report.stable == VersionVector([a.replica.replicaID: 1]), "\(report)")
        #expect(report.tombstones == 0 && report.changeSets == 1, "\(report)")
    }

    /// While an older app is active, deleted objects keep their last values: only change sets go.
    @Test func deletedObjectsStayWhenAskedTo() throws {
        let a = try TestReplica(name: "a")
        let label = Label()
        label.text = "gone"
        a.context.insert(label)
        try a.context.save()
        a.context.delete(label)
        try a.context.save()
        try HistoryCompactionTests.acknowledgeEverything(of: a)
        let keeping = try a.replica.compactHistory(stable: try a.replica.versionVector(), droppingDeletedObjects: false)
        #expect(keeping.changeSets == 2 && keeping.tombstones == 0, "\(keeping)")
        #expect(try a.replica.lastKnownRecord("Label", id: label.objectID)?.attributes.first { $0.name == "text" }?.values == [.text("gone")])
        let dropping = try a.replica.compactHistory(stable: try a.replica.versionVector())
        #expect(dropping.changeSets == 0 && dropping.tombstones == 1, "\(dropping)")
    }

    /// A store that keeps a change set for a newer schema (it creates an object of an entity the
    /// store does not know) drops nothing: its upgrade merges the whole history again.
    @Test func aStoreKeepingChangeSetsForANewerSchemaDropsNothing() throws {
        let a = try TestReplica(name: "a")
        let author = UUID()
        let newer = ChangeSet(dot: Dot(replica: author, seq: 1), hlc: HLC(rawValue: 1_700_000_000_000 << 16), vector: VersionVector([author: 1]),
                              operations: [.create(entity: "Badge", id: UUID())])
        _ = try a.replica.apply([newer])
        #expect(try a.replica.keptChangeSetCount() == 1)
        let report = try a.replica.compactHistory(stable: try a.replica.versionVector())
        #expect(report.heldForNewerSchema && report.droppedRows == 0, "\(report)")
        #expect(try a.replica.compactedVector() == VersionVector())
    }

    /// A store that keeps change sets for a newer schema drops nothing; a compacted store that must
    /// merge its history again (its schema renames something) refuses to open and stays as it was.
    @Test func mergingTheHistoryAgainNeedsTheWholeHistory() throws {
        let file = TemporaryStoreFile(prefix: "sync-compacted-rename")
        let clock = FakeClock()
        do {
            let store = try ObjectStore(path: file.path, entities: RenameVersion1.entities)
            let replica = try SyncReplica(store: store, wallClock: { clock.read() }, newReplicaID: UUID())
            let context = try store.makeContext()
            let deck = RenameVersion1.Deck(), card = RenameVersion1.Card()
            deck.title = "D"; card.text = "C"
            card.deck = deck
            context.insert(deck)
            try context.save()
            context.delete(card)
            try context.save()
            try replica.mark(try replica.localChangeSets(status: .pending).map(\.dot), as: .acknowledged)
            let report = try replica.compactHistory(stable: try replica.versionVector())
            #expect(report.changeSets == 2 && report.tombstones == 1 && report.forgottenObjects == 1, "\(report)")
        }
        let error = #expect(throws: SyncError.self) {
            _ = try SyncReplica(store: try ObjectStore(path: file.path, entities: RenameVersion2.entities), wallClock: { clock.read() }, newReplicaID: UUID())
        }
        #expect(error?.code == .historyCompacted)
        #expect(error?.message.contains("bootstrap it from a server's snapshot") == true, "\(error?.message ?? "")")
        // The sync tables are as the compaction left them (LocalStore has migrated the rows).
        let after = try SQLiteConnection(path: file.path)
        #expect(try after.rows("SELECT count(*) FROM _sync_object").first?.first == .integer(1))
        #expect(try SyncStateTable.mergedSchema(on: after)?.entities.contains { $0.name == "Card" } == true)
    }
}

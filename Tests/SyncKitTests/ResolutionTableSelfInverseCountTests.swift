import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import Testing

/// CONTRACT.md §3.10 on a self-inverse to-many (`Pal.pals`, one or two pals): an edge counts at
/// both ends and shows only when both ends' bounds let it.
@Suite struct ResolutionTableSelfInverseCountTests {
    /// Pals shared by A, B and C, linked in the pairs given by index.
    private func sharePals(_ trio: ReplicaTrio, count: Int, pairs: [(Int, Int)]) throws -> [UUID] {
        let pals = (0..<count).map { index in
            let pal = Pal()
            pal.name = "pal\(index)"
            return pal
        }
        for pal in pals { trio.a.context.insert(pal) }
        for (left, right) in pairs { pals[left].pals.insert(pals[right]) }
        try trio.a.context.save()
        try trio.shareBase()
        return pals.map(\.objectID)
    }

    private func palIDs(of pal: UUID, on replica: TestReplica) throws -> Set<UUID> {
        Set(try #require(try replica.fetch(Pal.self, pal)).pals.map(\.objectID))
    }

    /// Pals p–q and r–s; A links q–r and B links p–r, so r gets three edges. The later one is
    /// hidden at r by r's bound, and so at its other end too, where that end's bound has room.
    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func concurrentLinksBeyondOneEndsMaxCountHideTheLaterEdgeAtBothEnds(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let trio = try ReplicaTrio(entities: countEntities)
        let ids = try sharePals(trio, count: 4, pairs: [(0, 1), (2, 3)])
        let (p, q, r, s) = (ids[0], ids[1], ids[2], ids[3])
        trio.make(later: later)
        try trio.a.object(Pal.self, q).pals.insert(try trio.a.object(Pal.self, r))
        try trio.a.context.save()
        try trio.b.object(Pal.self, p).pals.insert(try trio.b.object(Pal.self, r))
        try trio.b.context.save()
        let hiddenDot = try trio.lastDot(later)

        try trio.exchange(order)

        // The later edge is hidden at both ends; its other end keeps only its first pal.
        let (shown, hidden) = later == .a ? (p, q) : (q, p)
        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try palIDs(of: r, on: replica) == [s, shown], "r's pals on \(name)")
            #expect(try palIDs(of: shown, on: replica) == [later == .a ? q : p, r], "the shown end's pals on \(name)")
            #expect(try palIDs(of: hidden, on: replica) == [later == .a ? p : q], "the hidden end's pals on \(name)")
        }
        // One entry, on the end whose bound hides the edge.
        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            let entries = try replica.replica.conflicts()
            #expect(entries.map(\.kind) == [.aboveMaxCount], "journal of \(name): \(entries)")
            #expect(entries.first?.entity == "Pal" && entries.first?.objectID == r && entries.first?.property == "pals")
            #expect(entries.first?.loser.value == journalJSON(hidden))
            #expect(entries.first?.loser.dot == hiddenDot)
        }
        try trio.expectConverged()

        // Unlinking the shown edge frees r: the hidden edge shows at both ends, with no new entry.
        try trio.a.object(Pal.self, r).pals.remove(try trio.a.object(Pal.self, shown))
        try trio.a.context.save()
        try trio.b.pull(from: trio.a)
        try trio.c.pull(from: trio.a)
        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try palIDs(of: r, on: replica) == [s, hidden], "r's pals after the unlink on \(name)")
            #expect(try palIDs(of: hidden, on: replica).contains(r), "the freed edge at its other end on \(name)")
            #expect(try replica.replica.conflicts().count == 1, "no new entry on \(name)")
        }
        try trio.expectConverged()
    }

    /// Both ends full: each end's bound hides the later edge, and each end journals it.
    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func anEdgeBeyondBothEndsMaxCountIsJournaledAtBothEnds(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let trio = try ReplicaTrio(entities: countEntities)
        // p–q, r–s, t–u, v–w: A links p–t and r–v, B links p–r, so p and r get three edges each.
        let ids = try sharePals(trio, count: 8, pairs: [(0, 1), (2, 3), (4, 5), (6, 7)])
        let (p, r, t, v) = (ids[0], ids[2], ids[4], ids[6])
        trio.make(later: later)
        try trio.a.object(Pal.self, p).pals.insert(try trio.a.object(Pal.self, t))
        try trio.a.object(Pal.self, r).pals.insert(try trio.a.object(Pal.self, v))
        try trio.a.context.save()
        try trio.b.object(Pal.self, p).pals.insert(try trio.b.object(Pal.self, r))
        try trio.b.context.save()

        try trio.exchange(order)

        // B later: p–r is hidden by both ends' bounds. A later: p–t is hidden by p's, r–v by r's.
        let expectedP: Set<UUID> = later == .b ? [ids[1], t] : [ids[1], r]
        let expectedR: Set<UUID> = later == .b ? [ids[3], v] : [ids[3], p]
        let losers: Set<ConflictEntry.Value> = Set((later == .b ? [r, p] : [t, v]).map { journalJSON($0) })
        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try palIDs(of: p, on: replica) == expectedP, "p's pals on \(name)")
            #expect(try palIDs(of: r, on: replica) == expectedR, "r's pals on \(name)")
            #expect(try palIDs(of: t, on: replica).contains(p) == (later == .b), "t's pals on \(name)")
            #expect(try palIDs(of: v, on: replica).contains(r) == (later == .b), "v's pals on \(name)")
            let entries = try replica.replica.conflicts()
            #expect(entries.map(\.kind) == [.aboveMaxCount, .aboveMaxCount], "journal of \(name): \(entries)")
            #expect(Set(entries.map(\.objectID)) == [p, r] && Set(entries.compactMap(\.loser.value)) == losers, "journal of \(name): \(entries)")
        }
        try trio.expectConverged()
    }

    /// A triangle p, q, r; A unlinks p–q and B unlinks p–r: p keeps no pal, and every replica
    /// journals it once.
    @Test(arguments: ExchangeOrder.allCases)
    func concurrentUnlinksBelowMinCountAreKeptAndJournaledOnTheEmptiedEnd(order: ExchangeOrder) throws {
        let trio = try ReplicaTrio(entities: countEntities)
        let ids = try sharePals(trio, count: 3, pairs: [(0, 1), (1, 2), (2, 0)])
        let (p, q, r) = (ids[0], ids[1], ids[2])
        try trio.a.object(Pal.self, p).pals.remove(try trio.a.object(Pal.self, q))
        try trio.a.context.save()
        try trio.b.object(Pal.self, r).pals.remove(try trio.b.object(Pal.self, p))
        try trio.b.context.save()

        try trio.exchange(order)

        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try palIDs(of: p, on: replica).isEmpty, "p's pals on \(name)")
            #expect(try palIDs(of: q, on: replica) == [r] && palIDs(of: r, on: replica) == [q], "q and r on \(name)")
            let entries = try replica.replica.conflicts()
            #expect(entries.map(\.kind) == [.belowMinCount], "journal of \(name): \(entries)")
            #expect(entries.first?.objectID == p && entries.first?.property == "pals")
        }
        try trio.expectConverged()
    }

    /// syncd runs the same merge: pushed the two sides' change sets in either order, its copy of
    /// the dataset shows the same pals as the replicas.
    @Test(arguments: ExchangeOrder.allCases)
    func syncdsEngineShowsTheSamePalsAsTheReplicas(order: ExchangeOrder) throws {
        let trio = try ReplicaTrio(entities: countEntities)
        let ids = try sharePals(trio, count: 4, pairs: [(0, 1), (2, 3)])
        let syncd = try SyncdCopy(of: trio, name: "self-inverse-count-engine")
        defer { syncd.remove() }
        trio.make(later: .a)
        try trio.a.object(Pal.self, ids[1]).pals.insert(try trio.a.object(Pal.self, ids[2]))
        try trio.a.context.save()
        try trio.b.object(Pal.self, ids[0]).pals.insert(try trio.b.object(Pal.self, ids[2]))
        try trio.b.context.save()
        try syncd.push(from: order == .aThenB ? [trio.a, trio.b] : [trio.b, trio.a])
        try trio.exchange(order)
        #expect(try syncd.digest() == trio.a.digest())
        #expect(try palIDs(of: ids[2], on: trio.a) == [ids[3], ids[0]])
    }
}

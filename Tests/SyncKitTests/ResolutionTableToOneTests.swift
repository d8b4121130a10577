import Foundation
@testable import SyncEngine
import SyncKit
import Testing

/// CONTRACT.md §3.4: a to-one relationship set to different targets concurrently.
@Suite struct ResolutionTableToOneTests {
    /// Member.manager / Member.reports (one-to-many, the to-one side is canonical).
    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func toOneSetToDifferentTargetsOneWinsAndLoserInverseForgetsIt(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let trio = try ReplicaTrio()
        let old = Member(), first = Member(), second = Member(), report = Member()
        old.name = "old"; first.name = "first"; second.name = "second"; report.name = "report"
        report.manager = old
        for member in [old, first, second, report] { trio.a.context.insert(member) }
        try trio.a.context.save()
        try trio.shareBase()

        trio.make(later: later)
        try trio.a.object(Member.self, report.objectID).manager = try trio.a.object(Member.self, first.objectID)
        try trio.a.context.save()
        try trio.b.object(Member.self, report.objectID).manager = try trio.b.object(Member.self, second.objectID)
        try trio.b.context.save()
        let dotA = try trio.lastDot(.a), dotB = try trio.lastDot(.b)

        try trio.exchange(order)

        let (winner, loser) = later == .a ? (first.objectID, second.objectID) : (second.objectID, first.objectID)
        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try replica.fetch(Member.self, report.objectID)?.manager?.objectID == winner, "manager on \(name)")
            #expect(try replica.fetch(Member.self, winner)?.reports.map(\.objectID) == [report.objectID], "winner's reports on \(name)")
            #expect(try replica.fetch(Member.self, loser)?.reports.isEmpty == true, "loser's reports on \(name)")
            #expect(try replica.fetch(Member.self, old.objectID)?.reports.isEmpty == true, "old manager's reports on \(name)")
        }
        try expectOneToOneEntry(in: trio, entity: "Member", object: report.objectID, property: "manager",
                                winner: winner, loser: loser, winnerDot: later == .a ? dotA : dotB, loserDot: later == .a ? dotB : dotA)
        try trio.expectConverged()
    }

    /// One-to-one Team.leader / Member.leads, set from the team's side: two members claim one team.
    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func oneToOneSetFromEitherSideKeepsOnePairAndTheLoserLeadsNothing(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let trio = try ReplicaTrio()
        let team = Team(), first = Member(), second = Member()
        team.name = "T"; first.name = "first"; second.name = "second"
        for object in [first, second] { trio.a.context.insert(object) }
        trio.a.context.insert(team)
        try trio.a.context.save()
        try trio.shareBase()

        trio.make(later: later)
        try trio.a.object(Team.self, team.objectID).leader = try trio.a.object(Member.self, first.objectID)
        try trio.a.context.save()
        try trio.b.object(Team.self, team.objectID).leader = try trio.b.object(Member.self, second.objectID)
        try trio.b.context.save()
        let dotA = try trio.lastDot(.a), dotB = try trio.lastDot(.b)

        try trio.exchange(order)

        let (winner, loser) = later == .a ? (first.objectID, second.objectID) : (second.objectID, first.objectID)
        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try replica.fetch(Team.self, team.objectID)?.leader?.objectID == winner, "leader on \(name)")
            #expect(try replica.fetch(Member.self, winner)?.leads?.objectID == team.objectID, "winner leads on \(name)")
            #expect(try replica.fetch(Member.self, loser)?.leads == nil, "loser leads on \(name)")
        }
        try expectOneToOneEntry(in: trio, entity: "Team", object: team.objectID, property: "leader",
                                winner: winner, loser: loser, winnerDot: later == .a ? dotA : dotB, loserDot: later == .a ? dotB : dotA)
        try trio.expectConverged()
    }

    /// One-to-one set from the member's side: one member made leader of two teams.
    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func oneToOneMemberClaimedByTwoTeamsLeadsOneAndTheOtherTeamHasNoLeader(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let trio = try ReplicaTrio()
        let first = Team(), second = Team(), member = Member()
        first.name = "first"; second.name = "second"; member.name = "M"
        for team in [first, second] { trio.a.context.insert(team) }
        trio.a.context.insert(member)
        try trio.a.context.save()
        try trio.shareBase()

        trio.make(later: later)
        try trio.a.object(Team.self, first.objectID).leader = try trio.a.object(Member.self, member.objectID)
        try trio.a.context.save()
        try trio.b.object(Member.self, member.objectID).leads = try trio.b.object(Team.self, second.objectID)
        try trio.b.context.save()
        let dotA = try trio.lastDot(.a), dotB = try trio.lastDot(.b)

        try trio.exchange(order)

        let (winner, loser) = later == .a ? (first.objectID, second.objectID) : (second.objectID, first.objectID)
        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try replica.fetch(Member.self, member.objectID)?.leads?.objectID == winner, "leads on \(name)")
            #expect(try replica.fetch(Team.self, winner)?.leader?.objectID == member.objectID, "winner's leader on \(name)")
            #expect(try replica.fetch(Team.self, loser)?.leader == nil, "loser's leader on \(name)")
        }
        try expectOneToOneEntry(in: trio, entity: "Member", object: member.objectID, property: "leads",
                                winner: winner, loser: loser, winnerDot: later == .a ? dotA : dotB, loserDot: later == .a ? dotB : dotA)
        try trio.expectConverged()
    }

    /// Both replicas that wrote journal exactly one to-one resolution: `winner` over `loser`.
    private func expectOneToOneEntry(
        in trio: ReplicaTrio, entity: String, object: UUID, property: String,
        winner: UUID, loser: UUID, winnerDot: Dot, loserDot: Dot, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        for (name, replica) in trio.both {
            let entries = try replica.replica.conflicts()
            #expect(entries.map(\.kind) == [.toOne], "journal of \(name): \(entries)", sourceLocation: sourceLocation)
            guard let entry = entries.first else { continue }
            #expect(entry.entity == entity, sourceLocation: sourceLocation)
            #expect(entry.objectID == object, sourceLocation: sourceLocation)
            #expect(entry.property == property, sourceLocation: sourceLocation)
            #expect(entry.winner?.value == journalJSON(winner), sourceLocation: sourceLocation)
            #expect(entry.winner?.dot == winnerDot, sourceLocation: sourceLocation)
            #expect(entry.loser.value == journalJSON(loser), sourceLocation: sourceLocation)
            #expect(entry.loser.dot == loserDot, sourceLocation: sourceLocation)
        }
    }
}

import Foundation
@testable import SyncEngine
import SyncKit
import Testing

/// CONTRACT.md §3.3 and §3.5: add vs remove in a to-many, and concurrent inserts and moves in
/// an ordered to-many.
@Suite struct ResolutionTableToManyTests {
    // MARK: Add vs remove of the same member

    /// Many-to-many: A removes a label; B removes it and adds it back (from the label's side).
    /// A's remove only removes the add it had seen; B's re-add survives.
    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func manyToManyRemoveDoesNotRemoveAnUnseenReAdd(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let trio = try ReplicaTrio()
        let member = Member(), label = Label(), other = Label()
        member.name = "M"; label.text = "L"; other.text = "O"
        member.addToLabels(label)
        member.addToLabels(other)
        trio.a.context.insert(member)
        try trio.a.context.save()
        try trio.shareBase()

        trio.make(later: later)
        try trio.a.object(Member.self, member.objectID).removeFromLabels(try trio.a.object(Label.self, label.objectID))
        try trio.a.context.save()
        let bLabel = try trio.b.object(Label.self, label.objectID)
        bLabel.removeFromMembers(try trio.b.object(Member.self, member.objectID))
        try trio.b.context.save()
        bLabel.addToMembers(try trio.b.object(Member.self, member.objectID))
        try trio.b.context.save()

        try trio.exchange(order)

        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try Set(replica.fetch(Member.self, member.objectID)?.labels.map(\.objectID) ?? []) == [label.objectID, other.objectID], "labels on \(name)")
            #expect(try replica.fetch(Label.self, label.objectID)?.members.map(\.objectID) == [member.objectID], "members on \(name)")
            #expect(try replica.replica.conflicts() == [], "journal of \(name)")
        }
        try trio.expectConverged()
    }

    /// Many-to-many: both add the same label concurrently, then A removes it having seen only
    /// its own add: B's add survives.
    @Test(arguments: ExchangeOrder.allCases)
    func manyToManyConcurrentAddsSurviveARemoveThatSawOnlyOne(order: ExchangeOrder) throws {
        let trio = try ReplicaTrio()
        let member = Member(), label = Label()
        member.name = "M"; label.text = "L"
        trio.a.context.insert(member)
        trio.a.context.insert(label)
        try trio.a.context.save()
        try trio.shareBase()

        trio.make(later: .a)
        let aMember = try trio.a.object(Member.self, member.objectID)
        aMember.addToLabels(try trio.a.object(Label.self, label.objectID))
        try trio.a.context.save()
        aMember.removeFromLabels(try trio.a.object(Label.self, label.objectID))
        try trio.a.context.save()
        try trio.b.object(Member.self, member.objectID).addToLabels(try trio.b.object(Label.self, label.objectID))
        try trio.b.context.save()

        try trio.exchange(order)

        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try replica.fetch(Member.self, member.objectID)?.labels.map(\.objectID) == [label.objectID], "labels on \(name)")
            #expect(try replica.fetch(Label.self, label.objectID)?.members.map(\.objectID) == [member.objectID], "members on \(name)")
        }
        try trio.expectConverged()
    }

    /// One-to-many (Member.manager / reports): A removes a report from the manager's side; B
    /// removes and re-adds it from the report's side. The re-add, unseen by A, survives.
    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func oneToManyRemoveAndReAddSurvivesAConcurrentRemove(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let trio = try ReplicaTrio()
        let boss = Member(), report = Member(), colleague = Member()
        boss.name = "boss"; report.name = "report"; colleague.name = "colleague"
        report.manager = boss
        colleague.manager = boss
        for member in [boss, report, colleague] { trio.a.context.insert(member) }
        try trio.a.context.save()
        try trio.shareBase()

        trio.make(later: later)
        try trio.a.object(Member.self, boss.objectID).removeFromReports(try trio.a.object(Member.self, report.objectID))
        try trio.a.context.save()
        let bReport = try trio.b.object(Member.self, report.objectID)
        bReport.manager = nil
        try trio.b.context.save()
        bReport.manager = try trio.b.object(Member.self, boss.objectID)
        try trio.b.context.save()

        try trio.exchange(order)

        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try replica.fetch(Member.self, report.objectID)?.manager?.objectID == boss.objectID, "manager on \(name)")
            #expect(try Set(replica.fetch(Member.self, boss.objectID)?.reports.map(\.objectID) ?? []) == [report.objectID, colleague.objectID],
                    "reports on \(name)")
            #expect(try replica.replica.conflicts() == [], "journal of \(name)")
        }
        try trio.expectConverged()
    }

    /// Ordered one-to-many (Team.members): the same shape of remove vs remove-and-re-add.
    @Test(arguments: ExchangeOrder.allCases)
    func orderedOneToManyRemoveAndReAddSurvivesAConcurrentRemove(order: ExchangeOrder) throws {
        let trio = try ReplicaTrio()
        let team = Team(), first = Member(), second = Member(), third = Member()
        team.name = "T"; first.name = "1"; second.name = "2"; third.name = "3"
        for member in [first, second, third] { team.addToMembers(member) }
        trio.a.context.insert(team)
        try trio.a.context.save()
        try trio.shareBase()

        trio.make(later: .a)
        try trio.a.object(Team.self, team.objectID).removeFromMembers(try trio.a.object(Member.self, second.objectID))
        try trio.a.context.save()
        let bSecond = try trio.b.object(Member.self, second.objectID)
        bSecond.team = nil
        try trio.b.context.save()
        try trio.b.object(Team.self, team.objectID).addToMembers(bSecond)
        try trio.b.context.save()

        try trio.exchange(order)

        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try replica.fetch(Member.self, second.objectID)?.team?.objectID == team.objectID, "team on \(name)")
            // B appended it at the end.
            #expect(try replica.fetch(Team.self, team.objectID)?.members.map(\.name) == ["1", "3", "2"], "members on \(name)")
        }
        try trio.expectConverged()
    }

    // MARK: Ordered to-many

    /// Concurrent inserts at the same place: all survive, in the same order everywhere.
    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func orderedConcurrentInsertsAllSurviveInOneOrder(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let trio = try ReplicaTrio()
        let team = Team(), first = Member(), last = Member()
        team.name = "T"; first.name = "first"; last.name = "last"
        team.addToMembers(first)
        team.addToMembers(last)
        trio.a.context.insert(team)
        try trio.a.context.save()
        try trio.shareBase()

        trio.make(later: later)
        let fromA = Member(), fromB = Member(), endA = Member(), endB = Member()
        fromA.name = "fromA"; fromB.name = "fromB"; endA.name = "endA"; endB.name = "endB"
        let aTeam = try trio.a.object(Team.self, team.objectID)
        aTeam.insertIntoMembers(fromA, at: 1)
        aTeam.addToMembers(endA)
        try trio.a.context.save()
        let bTeam = try trio.b.object(Team.self, team.objectID)
        bTeam.insertIntoMembers(fromB, at: 1)
        bTeam.addToMembers(endB)
        try trio.b.context.save()

        try trio.exchange(order)

        // Both inserts at one place get the same key; the smaller (HLC, replica ID) sorts first.
        let expected = later == .a ? ["first", "fromB", "fromA", "last", "endB", "endA"] : ["first", "fromA", "fromB", "last", "endA", "endB"]
        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try replica.fetch(Team.self, team.objectID)?.members.map(\.name) == expected, "members on \(name)")
            #expect(try replica.replica.conflicts() == [], "journal of \(name)")
        }
        try trio.expectConverged()
    }

    /// Concurrent moves of one member: the larger (HLC, replica ID) places it, the other move is journaled.
    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func orderedConcurrentMovesOfOneMemberLargerHLCWins(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let trio = try ReplicaTrio()
        let team = Team()
        team.name = "T"
        let members = ["1", "2", "3", "4"].map { name -> Member in
            let member = Member()
            member.name = name
            team.addToMembers(member)
            return member
        }
        trio.a.context.insert(team)
        try trio.a.context.save()
        try trio.shareBase()
        let moved = members[3].objectID

        trio.make(later: later)
        let aTeam = try trio.a.object(Team.self, team.objectID)
        aTeam.insertIntoMembers(try trio.a.object(Member.self, moved), at: 0)
        try trio.a.context.save()
        #expect(aTeam.members.map(\.name) == ["4", "1", "2", "3"])
        let bTeam = try trio.b.object(Team.self, team.objectID)
        bTeam.insertIntoMembers(try trio.b.object(Member.self, moved), at: 2)
        try trio.b.context.save()
        #expect(bTeam.members.map(\.name) == ["1", "2", "4", "3"])
        let dotA = try trio.lastDot(.a), dotB = try trio.lastDot(.b)

        try trio.exchange(order)

        let expected = later == .a ? ["4", "1", "2", "3"] : ["1", "2", "4", "3"]
        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try replica.fetch(Team.self, team.objectID)?.members.map(\.name) == expected, "members on \(name)")
        }
        for (name, replica) in trio.both {
            let entries = try replica.replica.conflicts()
            #expect(entries.map(\.kind) == [.move], "journal of \(name): \(entries)")
            guard let entry = entries.first else { continue }
            #expect(entry.entity == "Team")
            #expect(entry.objectID == team.objectID)
            #expect(entry.property == "members")
            #expect(entry.winner?.dot == (later == .a ? dotA : dotB))
            #expect(entry.loser.dot == (later == .a ? dotB : dotA))
            #expect(entry.detail.contains(moved.uuidString))
        }
        try trio.expectConverged()
    }
}

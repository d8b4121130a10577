import Foundation
@testable import SyncEngine
import SyncKit
import Testing

/// CONTRACT.md §3.1 and §3.2: concurrent attribute writes, and an update concurrent with a delete.
@Suite struct ResolutionTableAttributeTests {
    /// A member both sides know, created by A.
    private func memberTrio() throws -> (ReplicaTrio, UUID) {
        let trio = try ReplicaTrio()
        let member = Member()
        member.name = "Base"
        member.level = 1
        trio.a.context.insert(member)
        try trio.a.context.save()
        try trio.shareBase()
        return (trio, member.objectID)
    }

    // MARK: Same attribute of the same object

    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func sameAttributeLargerHLCWinsAndLoserIsJournaled(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let (trio, id) = try memberTrio()
        trio.make(later: later)
        try trio.a.object(Member.self, id).name = "from A"
        try trio.a.context.save()
        try trio.b.object(Member.self, id).name = "from B"
        try trio.b.context.save()
        let dotA = try trio.lastDot(.a), dotB = try trio.lastDot(.b)

        try trio.exchange(order)

        let (winner, loser) = later == .a ? ("from A", "from B") : ("from B", "from A")
        let (winnerDot, loserDot) = later == .a ? (dotA, dotB) : (dotB, dotA)
        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try replica.fetch(Member.self, id)?.name == winner, "name on \(name)")
            #expect(try replica.fetch(Member.self, id)?.level == 1, "level on \(name)")
        }
        for (name, replica) in trio.both {
            let entries = try replica.replica.conflicts()
            #expect(entries.count == 1, "journal of \(name): \(entries)")
            let entry = try #require(entries.first)
            #expect(entry.kind == .attribute)
            #expect(entry.entity == "Member")
            #expect(entry.objectID == id)
            #expect(entry.property == "name")
            #expect(entry.winner?.value == journalJSON(winner), "winner on \(name)")
            #expect(entry.winner?.dot == winnerDot)
            #expect(entry.loser.value == journalJSON(loser), "loser on \(name)")
            #expect(entry.loser.dot == loserDot)
            #expect(entry.loser.hlc < entry.winner!.hlc)
            #expect([dotA, dotB].contains(entry.cause))
        }
        try trio.expectConverged()
    }

    @Test(arguments: ExchangeOrder.allCases)
    func sameAttributeEqualHLCBreaksTieOnReplicaID(order: ExchangeOrder) throws {
        let (trio, id) = try memberTrio()
        trio.makeClocksTie()
        try trio.a.object(Member.self, id).note = "from A"
        try trio.a.context.save()
        try trio.b.object(Member.self, id).note = "from B"
        try trio.b.context.save()
        let dotA = try trio.lastDot(.a), dotB = try trio.lastDot(.b)
        let hlcA = try trio.a.replica.latestHLC(), hlcB = try trio.b.replica.latestHLC()
        #expect(hlcA == hlcB, "the clocks were meant to tie")

        try trio.exchange(order)

        let winner = trio.tieWinner == .a ? "from A" : "from B"
        let winnerDot = trio.tieWinner == .a ? dotA : dotB
        for replica in [trio.a, trio.b, trio.c] {
            #expect(try replica.fetch(Member.self, id)?.note == winner)
        }
        for (name, replica) in trio.both {
            let entry = try #require(try replica.journal(.attribute).first, "no journal entry on \(name)")
            #expect(try replica.replica.conflicts().count == 1)
            #expect(entry.property == "note")
            #expect(entry.winner?.dot == winnerDot)
            #expect(entry.winner?.value == journalJSON(winner))
            #expect(entry.loser.dot == (winnerDot == dotA ? dotB : dotA))
        }
        try trio.expectConverged()
    }

    @Test(arguments: ExchangeOrder.allCases)
    func differentAttributesOfOneObjectMergeWithoutConflict(order: ExchangeOrder) throws {
        let (trio, id) = try memberTrio()
        trio.make(later: .a)
        try trio.a.object(Member.self, id).name = "renamed by A"
        try trio.a.context.save()
        let bMember = try trio.b.object(Member.self, id)
        bMember.level = 7
        bMember.note = "noted by B"
        try trio.b.context.save()

        try trio.exchange(order)

        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            let member = try #require(try replica.fetch(Member.self, id))
            #expect(member.name == "renamed by A", "on \(name)")
            #expect(member.level == 7, "on \(name)")
            #expect(member.note == "noted by B", "on \(name)")
            #expect(try replica.replica.conflicts() == [], "journal of \(name)")
        }
        try trio.expectConverged()
    }

    /// An attribute of several columns wins or loses whole, next to a concurrent write of another
    /// attribute, for several objects in one change set (their rows are read together).
    @Test(arguments: ExchangeOrder.allCases)
    func multiColumnAttributeWinsWholeAndLoserIsJournaled(order: ExchangeOrder) throws {
        let trio = try ReplicaTrio(entities: syncEntities + compositionEntities)
        let spots = (0..<3).map { index -> Spot in
            let spot = Spot()
            spot.name = "spot \(index)"
            spot.location = GeoPoint(latitude: 1, longitude: 2)
            trio.a.context.insert(spot)
            return spot
        }
        try trio.a.context.save()
        try trio.shareBase()
        trio.make(later: .b)
        for spot in spots {
            let onA = try trio.a.object(Spot.self, spot.objectID)
            onA.location = GeoPoint(latitude: 10.25, longitude: 20.5)
            onA.rating = 3
        }
        try trio.a.context.save()
        for spot in spots { try trio.b.object(Spot.self, spot.objectID).location = GeoPoint(latitude: 30.75, longitude: 40.125) }
        try trio.b.context.save()

        try trio.exchange(order)

        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            for spot in spots {
                let merged = try #require(try replica.fetch(Spot.self, spot.objectID))
                #expect(merged.location == GeoPoint(latitude: 30.75, longitude: 40.125), "location on \(name)")
                #expect(merged.rating == 3, "rating on \(name)")
            }
        }
        for (name, replica) in trio.both {
            let entries = try replica.replica.conflicts()
            #expect(Set(entries.map(\.objectID)) == Set(spots.map(\.objectID)), "journal of \(name): \(entries)")
            for entry in entries {
                #expect(entry.kind == .attribute && entry.property == "location")
                // One value per column, each a real in the protocol's JSON form.
                #expect(entry.winner?.value == [.object(["real": .number(30.75)]), .object(["real": .number(40.125)])], "winner on \(name)")
                #expect(entry.loser.value == [.object(["real": .number(10.25)]), .object(["real": .number(20.5)])], "loser on \(name)")
                #expect(entry.loser.value?.jsonText == #"[{"real":10.25},{"real":20.5}]"#)
            }
        }
        try trio.expectConverged()
    }

    // MARK: Update vs delete

    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func deleteWinsOverConcurrentUpdateWhichIsJournaled(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        // The delete wins whichever side's HLC is larger.
        let trio = try ReplicaTrio()
        let team = Team()
        team.name = "Team"
        let member = Member()
        member.name = "Doomed"
        member.level = 1
        team.addToMembers(member)
        let label = Label()
        label.text = "L"
        member.addToLabels(label)
        trio.a.context.insert(team)
        try trio.a.context.save()
        try trio.shareBase()
        let id = member.objectID

        trio.make(later: later)
        trio.a.context.delete(try trio.a.object(Member.self, id))
        try trio.a.context.save()
        try trio.b.object(Member.self, id).level = 5
        try trio.b.context.save()
        let deleteDot = try trio.lastDot(.a), updateDot = try trio.lastDot(.b)

        try trio.exchange(order)

        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try !replica.exists(Member.self, id), "member still on \(name)")
            #expect(try replica.fetch(Team.self, team.objectID)?.members.isEmpty == true, "team members on \(name)")
            #expect(try replica.fetch(Label.self, label.objectID)?.members.isEmpty == true, "label members on \(name)")
        }
        for (name, replica) in trio.both {
            let entries = try replica.replica.conflicts()
            #expect(entries.map(\.kind) == [.updateVersusDelete], "journal of \(name): \(entries)")
            guard let entry = entries.first else { continue }
            #expect(entry.entity == "Member")
            #expect(entry.objectID == id)
            #expect(entry.property == "level")
            #expect(entry.loser.value == .integer(5), "loser on \(name)")
            #expect(entry.loser.dot == updateDot)
            #expect(entry.winner?.dot == deleteDot)
            #expect(entry.winner?.value == nil)
        }
        try trio.expectConverged()
    }
}

import Foundation
@testable import SyncEngine
import SyncKit
import Testing

@Suite struct ConvergenceSmokeTests {
    @Test func twoReplicasExchangeInsertsUpdatesAndRelationships() throws {
        let clock = FakeClock()
        let a = try TestReplica(clock: clock, name: "a")
        let b = try TestReplica(clock: clock, name: "b")
        let team = Team()
        team.name = "Red"
        let ada = Member()
        ada.name = "Ada"
        ada.team = team
        let bob = Member()
        bob.name = "Bob"
        team.addToMembers(bob)
        bob.manager = ada
        team.leader = ada
        let label = Label()
        label.text = "x"
        ada.addToLabels(label)
        a.context.insert(team)
        try a.context.save()
        #expect(try a.replica.versionVector()[a.replica.replicaID] == 1)

        let result = try b.pull(from: a)
        #expect(result.applied.count == 1)
        let bTeam = try #require(try b.fetch(Team.self, team.objectID))
        #expect(bTeam.name == "Red")
        #expect(bTeam.members.map(\.name) == ["Ada", "Bob"])
        #expect(bTeam.leader?.name == "Ada")
        #expect(bTeam.members[1].manager?.name == "Ada")
        #expect(bTeam.members[0].labels.map(\.text) == ["x"])
        #expect(try a.digest() == b.digest())
        #expect(try b.integrityProblems().isEmpty)

        // b edits, a pulls back; applying again changes nothing.
        let bContext = b.context
        let bBob = try #require(try bContext.object(Member.self, id: bob.objectID))
        bBob.level = 3
        bBob.team?.insertIntoMembers(bBob, at: 0)
        try bContext.save()
        try a.pull(from: b)
        #expect(try a.digest() == b.digest())
        #expect(try a.pull(from: b).applied.isEmpty)
        #expect(try a.fetch(Team.self, team.objectID)?.members.map(\.name) == ["Bob", "Ada"])
        #expect(bob.level == 3)
    }
}

import Foundation
import Testing
import SyncKit

/// `lastKnownRecord` lets an app say what a conflict journal entry's object was, after a merge deleted it.
@Suite struct LastKnownRecordTests {
    @Test func aCascadedDeleteKeepsTheDeletedObjectsValues() throws {
        let clock = FakeClock()
        let alice = try TestReplica(clock: clock, name: "alice")
        let bob = try TestReplica(clock: clock, name: "bob")
        let team = Team()
        team.name = "Red"
        alice.context.insert(team)
        try alice.context.save()
        try bob.pull(from: alice)

        // Alice deletes the team (cascade) while Bob adds a member to it.
        alice.context.delete(try #require(try alice.context.object(Team.self, id: team.objectID)))
        try alice.context.save()
        let eve = Member()
        eve.name = "Eve"
        eve.level = 7
        eve.team = try bob.context.object(Team.self, id: team.objectID)
        try bob.context.save()
        try bob.pull(from: alice)

        let entry = try #require(try bob.replica.conflicts().first { $0.kind == .cascadedDelete })
        #expect(entry.objectID == eve.objectID)
        #expect(try bob.replica.record("Member", id: eve.objectID) == nil)
        let record = try #require(try bob.replica.lastKnownRecord(entry.entity, id: entry.objectID))
        #expect(record.value(of: "name") == .text("Eve"))
        #expect(record.value(of: "level") == .integer(7))
        #expect(record.value(of: "nonexistent") == nil)
        #expect(record.relationships.allSatisfy { $0.members.isEmpty })
        // The deleting side knows the team's last values too.
        #expect(try alice.replica.lastKnownRecord("Team", id: team.objectID)?.value(of: "name") == .text("Red"))
    }

    @Test func aLiveObjectIsItsStoredRecordAndAnUnknownOneIsNil() throws {
        let replica = try TestReplica()
        let team = Team()
        team.name = "Blue"
        replica.context.insert(team)
        try replica.context.save()
        #expect(try replica.replica.lastKnownRecord("Team", id: team.objectID) == replica.replica.record("Team", id: team.objectID))
        #expect(try replica.replica.lastKnownRecord("Team", id: UUID()) == nil)
        #expect(throws: SyncError.self) { try replica.replica.lastKnownRecord("Nope", id: UUID()) }
    }
}

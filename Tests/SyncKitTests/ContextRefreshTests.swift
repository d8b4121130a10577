import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import Testing

/// Open contexts see merged changes after `refresh` without losing their own unsaved edits.
@Suite struct ContextRefreshTests {
    @Test func refreshTakesMergedValuesAndKeepsUnsavedEdits() throws {
        let a = try TestReplica(name: "a")
        let b = try TestReplica(name: "b")
        let team = Team()
        team.name = "Red"
        let ada = Member()
        ada.name = "Ada"
        ada.team = team
        a.context.insert(team)
        try a.context.save()
        try b.pull(from: a)

        // B holds the objects in an open context and edits the team's name without saving.
        let bTeam = try #require(try b.context.object(Team.self, id: team.objectID))
        #expect(bTeam.members.map(\.name) == ["Ada"])
        bTeam.name = "Unsaved"

        // Meanwhile A changes the score, renames Ada, and adds a member.
        team.score = 4
        ada.name = "Ada L."
        let bob = Member()
        bob.name = "Bob"
        bob.team = team
        try a.context.save()
        let merged = try b.replica.apply(try a.replica.changeSets(missingFrom: b.replica.versionVector()))
        try b.context.refresh(objectIDs: merged.changedObjectIDs)

        #expect(bTeam.score == 4)                                   // merged value
        #expect(bTeam.name == "Unsaved")                            // unsaved edit kept
        #expect(bTeam.members.map(\.name) == ["Ada L.", "Bob"])     // relationship reloaded
        try b.context.save()
        #expect(try b.fetch(Team.self, team.objectID)?.name == "Unsaved")
        #expect(try b.fetch(Team.self, team.objectID)?.score == 4)
    }

    @Test func objectsDeletedByAMergeLeaveTheContext() throws {
        let a = try TestReplica(name: "a")
        let b = try TestReplica(name: "b")
        let label = Label()
        label.text = "x"
        a.context.insert(label)
        try a.context.save()
        try b.pull(from: a)
        let bLabel = try #require(try b.context.object(Label.self, id: label.objectID))
        a.context.delete(label)
        try a.context.save()
        let merged = try b.replica.apply(try a.replica.changeSets(missingFrom: b.replica.versionVector()))
        try b.context.refresh(objectIDs: merged.changedObjectIDs)
        #expect(bLabel.context == nil)
        #expect(try b.context.object(Label.self, id: label.objectID) == nil)
    }
}

import Foundation
@testable import LocalStoreCore
import SQLiteDatabase
@testable import SyncEngine
import SyncKit
import TestSupport
import Testing

/// `ObjectStore.changes` reports what each committed save or merge changed, and contexts that
/// refresh automatically pick up merged values.
@Suite struct StoreChangeTests {
    /// A store without sync, on a file removed when the test ends.
    let file = TemporaryStoreFile(prefix: "changes")

    /// Fails every save inside its transaction, after the rows were written.
    final class FailingSaveObserver: SaveObserver {
        struct Refused: Error {}
        func storeWillCommit(_ changes: [SavedObjectChange], connection: SQLiteConnection) throws -> Set<UUID> {
            throw Refused()
        }
    }

    private func openStore() throws -> (ObjectStore, ObjectContext) {
        let store = try ObjectStore(path: file.path, entities: syncEntities)
        return (store, try store.makeContext())
    }

    @Test func localSavesReportInsertedUpdatedAndDeletedObjectsWithNames() async throws {
        let (store, context) = try openStore()
        var changes = store.changes.makeAsyncIterator()

        let team = Team()
        team.name = "Red"
        let ada = Member()
        ada.name = "Ada"
        context.insert(team)
        context.insert(ada)
        try context.save()
        let inserted = try #require(await changes.next())
        #expect(inserted.origin == .save && !inserted.isFromMerge)
        #expect(inserted.inserted == [team.objectID, ada.objectID])
        #expect(inserted.updated.isEmpty && inserted.deleted.isEmpty)
        #expect(inserted.entityName(of: team.objectID) == "Team")
        #expect(inserted.entityName(of: ada.objectID) == "Member")
        #expect(inserted.changedEntityNames == ["Team", "Member"])

        team.score = 3
        ada.team = team
        try context.save()
        let updated = try #require(await changes.next())
        #expect(updated.inserted.isEmpty && updated.deleted.isEmpty)
        #expect(updated.updated == [team.objectID, ada.objectID])
        #expect(updated.changedPropertyNames(of: team.objectID) == ["score", "members"])
        #expect(updated.changedPropertyNames(of: ada.objectID) == ["team"])

        context.delete(team)
        try context.save()
        let deleted = try #require(await changes.next())
        // The cascade rule deletes the team's members with it.
        #expect(deleted.deleted == [team.objectID, ada.objectID])
        #expect(deleted.entityName(of: ada.objectID) == "Member")
    }

    @Test func aRolledBackSaveReportsNothing() async throws {
        let (store, context) = try openStore()
        var changes = store.changes.makeAsyncIterator()

        store.saveObserver = FailingSaveObserver()
        let refused = Label()
        context.insert(refused)
        #expect(throws: FailingSaveObserver.Refused.self) { try context.save() }
        context.rollback()

        store.saveObserver = nil
        let kept = Label()
        context.insert(kept)
        try context.save()
        // The next change is the committed save: the rolled-back one was never delivered.
        let next = try #require(await changes.next())
        #expect(next.inserted == [kept.objectID])
    }

    @Test func eachSubscriptionGetsEveryChangeFromWhenItStarted() async throws {
        let (store, context) = try openStore()
        var early = store.changes.makeAsyncIterator()
        let first = Label()
        context.insert(first)
        try context.save()
        var late = store.changes.makeAsyncIterator()
        let second = Label()
        context.insert(second)
        try context.save()

        #expect(await early.next()?.inserted == [first.objectID])
        #expect(await early.next()?.inserted == [second.objectID])
        #expect(await late.next()?.inserted == [second.objectID])
    }

    @Test func aMergeFromAnotherReplicaIsReportedAsMerged() async throws {
        let a = try TestReplica(name: "a")
        let b = try TestReplica(name: "b")
        let team = Team()
        team.name = "Red"
        let label = Label()
        a.context.insert(team)
        a.context.insert(label)
        try a.context.save()
        var changes = b.store.changes.makeAsyncIterator()
        _ = try b.replica.apply(try a.replica.changeSets(missingFrom: b.replica.versionVector()))
        let created = try #require(await changes.next())
        #expect(created.isFromMerge)
        #expect(created.inserted == [team.objectID, label.objectID])
        #expect(created.entityName(of: team.objectID) == "Team")
        #expect(created.changedEntityNames.contains("Team"))

        team.name = "Blue"
        a.context.delete(label)
        try a.context.save()
        _ = try b.replica.apply(try a.replica.changeSets(missingFrom: b.replica.versionVector()))
        let changed = try #require(await changes.next())
        #expect(changed.isFromMerge)
        #expect(changed.updated == [team.objectID])
        #expect(changed.changedPropertyNames(of: team.objectID) == ["name"])
        #expect(changed.deleted == [label.objectID])
        #expect(changed.entityName(of: label.objectID) == "Label")

        // Applying the same change sets again changes nothing, so nothing is reported; the
        // next change is B's own save.
        _ = try b.replica.apply(try a.replica.changeSets(missingFrom: VersionVector()))
        let local = Label()
        b.context.insert(local)
        try b.context.save()
        let next = try #require(await changes.next())
        #expect(!next.isFromMerge && next.inserted == [local.objectID])
    }

    @Test func anAutomaticallyRefreshingContextSeesMergedValues() throws {
        let a = try TestReplica(name: "a")
        let b = try TestReplica(name: "b")
        let team = Team()
        team.name = "Red"
        a.context.insert(team)
        try a.context.save()
        try b.pull(from: a)

        let watching = try b.store.makeContext()
        watching.automaticallyRefreshes = true
        let still = try b.store.makeContext()
        let watchedTeam = try #require(try watching.object(Team.self, id: team.objectID))
        let stillTeam = try #require(try still.object(Team.self, id: team.objectID))
        watchedTeam.score = 9  // unsaved edit, kept by the refresh

        team.name = "Blue"
        try a.context.save()
        _ = try b.replica.apply(try a.replica.changeSets(missingFrom: b.replica.versionVector()))

        #expect(try watching.object(Team.self, id: team.objectID) === watchedTeam)
        #expect(watchedTeam.name == "Blue")
        #expect(watchedTeam.score == 9)
        // A context that does not refresh itself keeps what it read.
        #expect(try still.object(Team.self, id: team.objectID)?.name == "Red")
        _ = stillTeam
    }
}

import Foundation
import LocalStoreCore
import Observation
import Synchronization
import SyncKit
import TestSupport
import Testing

/// Entities work with Swift Observation, and live queries follow saves and merges.
@Suite struct ObservationTests {
    /// Counts how often the observations it set up fired.
    final class Observer: Sendable {
        private let fired = Atomic<Int>(0)

        /// How many times an observed property changed.
        var changes: Int { fired.load(ordering: .acquiring) }

        /// Reads what `read` reads inside `withObservationTracking`; the count goes up at the
        /// first change of any of it (an observation fires once).
        @discardableResult
        func track<T>(_ read: () -> T) -> T {
            withObservationTracking(read, onChange: { [self] in fired.add(1, ordering: .releasing) })
        }

        /// A new observer of what `read` reads.
        static func watching<T>(_ read: () -> T) -> Observer {
            let observer = Observer()
            observer.track(read)
            return observer
        }
    }

    /// A new replica whose context has inserted and saved `objects`.
    private func replica(saving objects: [any PersistentEntity]) throws -> TestReplica {
        let replica = try TestReplica(name: "a")
        for object in objects { replica.context.insert(object) }
        try replica.context.save()
        return replica
    }

    @Test func aLocalSetFiresTheObserversOfThatAttributeOnly() throws {
        let red = Team()
        let blue = Team()
        _ = try replica(saving: [red, blue])
        let nameObserver = Observer.watching { red.name }
        let scoreObserver = Observer.watching { red.score }
        blue.name = "Blue"  // another object's attribute
        red.score = 3
        #expect(nameObserver.changes == 0)
        #expect(scoreObserver.changes == 1)
        red.name = "Red"
        #expect(nameObserver.changes == 1)
    }

    @Test func aRelationshipChangeFiresTheObserversOfBothSides() throws {
        let team = Team()
        let ada = Member()
        let a = try replica(saving: [team, ada])
        let membersObserver = Observer.watching { team.members.count }
        let teamObserver = Observer.watching { ada.team }
        ada.team = team
        #expect(membersObserver.changes == 1)
        #expect(teamObserver.changes == 1)
        #expect(team.members == [ada])

        // Rolling back restores the relationship as saved, and tells the observers again.
        teamObserver.track { ada.team }
        a.context.rollback()
        #expect(teamObserver.changes == 2)
        #expect(ada.team == nil)
    }

    @Test func aRefreshAfterAnotherContextsSaveFiresObserversOfWhatChanged() throws {
        let team = Team()
        team.name = "Red"
        let a = try replica(saving: [team])
        let reader = try a.store.makeContext()
        let shown = try #require(try reader.object(Team.self, id: team.objectID))
        let nameObserver = Observer.watching { shown.name }
        let scoreObserver = Observer.watching { shown.score }
        let membersObserver = Observer.watching { shown.members }

        team.name = "Blue"
        let ada = Member()
        ada.team = team
        try a.context.save()
        #expect(nameObserver.changes == 0)  // nothing changed in `reader` yet
        try reader.refresh(objectIDs: [team.objectID])
        #expect(nameObserver.changes == 1)
        #expect(shown.name == "Blue")
        #expect(membersObserver.changes == 1)
        #expect(shown.members.map(\.objectID) == [ada.objectID])
        // The score was written back unchanged: its observers hear nothing.
        #expect(scoreObserver.changes == 0)
    }

    @Test func aMergeFromAnotherReplicaFiresObserversAndUpdatesALiveQuery() throws {
        let red = Team()
        red.name = "Red"
        let ada = Member()
        ada.name = "Ada"
        let a = try replica(saving: [red, ada])
        let b = try TestReplica(name: "b")
        try b.pull(from: a)

        b.context.automaticallyRefreshes = true
        let teams = try b.context.liveQuery(FetchDescriptor<Team>(sortBy: [SortDescriptor(\.name)]))
        let shownRed = try #require(teams.results.first)
        let shownAda = try #require(try b.context.object(Member.self, id: ada.objectID))
        let queryObserver = Observer.watching { teams.results }
        let teamNameObserver = Observer.watching { shownRed.name }
        let levelObserver = Observer.watching { shownAda.level }

        red.name = "Ruby"
        ada.level = 4
        let amber = Team()
        amber.name = "Amber"
        a.context.insert(amber)
        try a.context.save()
        _ = try b.replica.apply(try a.replica.changeSets(missingFrom: b.replica.versionVector()))

        // The query hears of the merge as it commits; objects change when the context
        // refreshes: here at the query's fetch, or when the app asks for it.
        #expect(queryObserver.changes == 1)
        #expect(levelObserver.changes == 0)
        try b.context.refreshMergedObjects()
        #expect(levelObserver.changes == 1)
        #expect(shownAda.level == 4)
        #expect(teams.results.map(\.name) == ["Amber", "Ruby"])
        #expect(teams.results.last === shownRed)
        #expect(teamNameObserver.changes == 1)
    }

    @Test func aLiveQueryShowsWhatAnotherContextSaved() throws {
        let a = try TestReplica(name: "a")
        let writer = try a.store.makeContext()
        let team = Team()
        team.name = "Red"
        writer.insert(team)
        try writer.save()

        let teams = try a.context.liveQuery(FetchDescriptor<Team>())
        let shown = try #require(teams.results.first)
        let nameObserver = Observer.watching { shown.name }
        team.name = "Blue"
        try writer.save()
        #expect(teams.results == [shown])
        #expect(shown.name == "Blue")
        #expect(nameObserver.changes == 1)
    }

    /// Saves `object` through `context` when asked; Observation's change handlers must be
    /// `Sendable`, and this one runs synchronously on the test's own thread, inside its save.
    final class SaveWhenCalled: @unchecked Sendable {
        let context: ObjectContext
        let object: any PersistentEntity
        var error: (any Error)?

        init(_ object: any PersistentEntity, in context: ObjectContext) {
            self.context = context
            self.object = object
        }

        func callAsFunction() {
            context.insert(object)
            do { try context.save() } catch { self.error = error }
        }
    }

    @Test func aLiveQueryObserverMaySaveAndItsChangeFollowsTheOneThatFiredIt() async throws {
        let a = try TestReplica(name: "a")
        let writer = try a.store.makeContext()
        let note = Member()
        note.name = "noted"
        let saveNote = SaveWhenCalled(note, in: try a.store.makeContext())
        var changes = a.store.changes.makeAsyncIterator()
        let teams = try a.context.liveQuery(FetchDescriptor<Team>())
        withObservationTracking({ _ = teams.results }, onChange: { saveNote() })

        let team = Team()
        writer.insert(team)
        try writer.save()

        #expect(saveNote.error == nil)
        let first = try #require(await changes.next())
        let second = try #require(await changes.next())
        #expect(first.inserted == [team.objectID])
        #expect(second.inserted == [note.objectID])
        #expect(try a.store.makeContext().fetch(FetchDescriptor<Member>()).map(\.name) == ["noted"])
    }

    @Test func aLiveQueryKeepsItsOrderAndFilterAcrossSaves() throws {
        let a = try TestReplica(name: "a")
        let writer = try a.store.makeContext()
        let seniors = try a.context.liveQuery(FetchDescriptor<Member>(
            predicate: #Predicate { $0.level >= 2 }, sortBy: [SortDescriptor(\.name)]))
        #expect(seniors.results.isEmpty)

        let members = ["Cy", "Ada", "Bo", "Dee"].map { name -> Member in
            let member = Member()
            member.name = name
            member.level = name == "Bo" ? 1 : 2
            writer.insert(member)
            return member
        }
        try writer.save()
        #expect(seniors.results.map(\.name) == ["Ada", "Cy", "Dee"])

        let observer = Observer.watching { seniors.results }
        members[0].level = 0  // Cy leaves the predicate
        members[3].name = "Aa"  // Dee moves to the front
        try writer.save()
        #expect(observer.changes == 1)
        #expect(seniors.results.map(\.name) == ["Aa", "Ada"])
        #expect(seniors.lastError == nil)

        // Unsaved changes in the query's own context show after `update()`.
        let eve = Member()
        eve.name = "Eve"
        eve.level = 5
        a.context.insert(eve)
        observer.track { seniors.results }
        #expect(seniors.results.count == 2)
        try seniors.update()
        #expect(observer.changes == 2)
        #expect(seniors.results.map(\.name) == ["Aa", "Ada", "Eve"])
    }

    @Test func aLiveQueryIgnoresChangesToEntitiesItCannotReach() throws {
        let a = try TestReplica(name: "a", entities: syncEntities + compositionEntities)
        let spots = try a.context.liveQuery(FetchDescriptor<Spot>())
        let observer = Observer.watching { spots.results }

        let team = Team()
        a.context.insert(team)
        try a.context.save()
        #expect(observer.changes == 0)

        let spot = Spot()
        a.context.insert(spot)
        try a.context.save()
        #expect(observer.changes == 1)
        #expect(spots.results == [spot])
    }
}

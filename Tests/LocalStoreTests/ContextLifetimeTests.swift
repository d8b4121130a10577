import Foundation
import LocalStore
@testable import LocalStoreCore
import TestSupport
import Testing

/// Objects do not keep their context alive, and an object that outlives its context finds none.
@Suite struct ContextLifetimeTests {
    let file = TemporaryStoreFile()

    /// Stores Ada in Paris and returns both, fetched by a context that is gone when this returns.
    private func fetchFromAContextThatIsGone(_ store: ObjectStore) throws -> (HandPerson, HandPlace, gone: Bool) {
        weak var weakContext: ObjectContext?
        let (ada, paris): (HandPerson, HandPlace) = try {
            let writer = try store.makeContext()
            let paris = HandPlace()
            paris.name = "Paris"
            let ada = HandPerson()
            ada.name = "Ada"
            ada.place = paris
            writer.insert(ada)
            try writer.save()

            let reader = try store.makeContext()
            weakContext = reader
            let ada2 = try #require(try reader.fetchAll(HandPerson.self).first)
            let paris2 = try #require(try reader.fetchAll(HandPlace.self).first)
            #expect(ada2.context === reader && paris2.context === reader)
            return (ada2, paris2)
        }()
        return (ada, paris, weakContext == nil)
    }

    @Test func anObjectThatOutlivesItsContextHasNone() throws {
        let store = try ObjectStore(path: file.path, entities: [HandPlace.self, HandPerson.self])
        let (ada, paris, gone) = try fetchFromAContextThatIsGone(store)
        #expect(gone, "the fetched objects kept their context alive")
        #expect(ada.context == nil)
        #expect(paris.context == nil)
        // Its values stay readable and writable; nothing records the change.
        #expect(ada.name == "Ada")
        ada.name = "Changed"
        #expect(ada.name == "Changed")
        // A relationship it had not loaded reads as empty: there is no context to load it from.
        #expect(paris.people.isEmpty)
        let fresh = try store.makeContext()
        #expect(try fresh.fetchAll(HandPerson.self).map(\.name) == ["Ada"])
    }

    @Test func aNewContextOfTheSameStoreIsNotTheGoneOne() throws {
        let store = try ObjectStore(path: file.path, entities: [HandPlace.self, HandPerson.self])
        let (ada, _, gone) = try fetchFromAContextThatIsGone(store)
        #expect(gone)
        let next = try store.makeContext()
        let again = try #require(try next.fetchAll(HandPerson.self).first)
        #expect(again !== ada)
        #expect(again.context === next)
        #expect(ada.context == nil)
    }
}

import Foundation
import LocalStore
@testable import LocalStoreCore
import TestSupport
import Testing

@Suite struct HandExpandedRuntimeTests {
    let file = TemporaryStoreFile()

    func openStore() throws -> ObjectStore {
        try ObjectStore(path: file.path, entities: [HandPlace.self, HandPerson.self, HandAuthor.self, HandBook.self])
    }

    @Test func insertSaveAndFetchBackAllAttributeKinds() throws {
        let store = try openStore()
        let context = try store.makeContext()
        let place = HandPlace()
        place.name = "Paris"
        place.location = HandPoint(latitude: 48.85, longitude: 2.35)
        let ada = HandPerson()
        ada.email = "ada@example.com"
        ada.name = "Ada"
        ada.born = Date(timeIntervalSince1970: 1_000)
        ada.mood = .busy
        ada.prefs = HandPrefs(theme: "light")
        ada.nickname = "A"
        ada.place = place
        #expect(place.people == [ada])
        context.insert(ada)
        #expect(place.context === context)
        try context.save()

        let other = try store.makeContext()
        let fetched = try #require(try other.object(HandPerson.self, id: ada.objectID))
        #expect(fetched !== ada)
        #expect(fetched.email == "ada@example.com")
        #expect(fetched.born == Date(timeIntervalSince1970: 1_000))
        #expect(fetched.mood == .busy)
        #expect(fetched.prefs == HandPrefs(theme: "light"))
        #expect(fetched.nickname == "A")
        #expect(fetched.score == nil)
        #expect(fetched.place?.name == "Paris")
        #expect(fetched.place?.location == HandPoint(latitude: 48.85, longitude: 2.35))
        #expect(fetched.place?.people.map(\.objectID) == [ada.objectID])
        #expect(try other.object(HandPerson.self, id: ada.objectID) === fetched)
    }

    @Test func orderedRelationshipKeepsOrderAndCascades() throws {
        let store = try openStore()
        let context = try store.makeContext()
        let author = HandAuthor()
        context.insert(author)
        let titles = ["C", "A", "B"]
        for title in titles {
            let book = HandBook()
            book.title = title
            book.author = author
        }
        try context.save()
        let second = try store.makeContext()
        let loaded = try #require(try second.object(HandAuthor.self, id: author.objectID))
        #expect(loaded.books.map(\.title) == titles)
        let moved = loaded.books[2]
        loaded.insertIntoBooks(moved, at: 0)
        try second.save()
        let third = try store.makeContext()
        #expect(try third.object(HandAuthor.self, id: author.objectID)?.books.map(\.title) == ["B", "C", "A"])
        third.delete(try #require(try third.object(HandAuthor.self, id: author.objectID)))
        try third.save()
        #expect(try store.makeContext().fetchAll(HandBook.self).isEmpty)
    }
}

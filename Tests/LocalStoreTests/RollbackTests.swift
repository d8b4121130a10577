import Foundation
import LocalStore
@testable import LocalStoreCore
import TestSupport
import Testing

@Suite struct RollbackTests {
    let file = TemporaryStoreFile()

    @Test func rollbackRestoresAttributesRelationshipsAndDeletes() throws {
        let store = try ObjectStore(path: file.path, entities: [HandPlace.self, HandPerson.self])
        let context = try store.makeContext()
        let paris = HandPlace()
        paris.name = "Paris"
        let rome = HandPlace()
        rome.name = "Rome"
        let ada = HandPerson()
        ada.name = "Ada"
        ada.place = paris
        context.insert(ada)
        context.insert(rome)
        try context.save()

        ada.name = "Changed"
        ada.place = rome
        context.delete(paris)
        let newcomer = HandPerson()
        newcomer.place = rome
        #expect(context.hasChanges)
        context.rollback()

        #expect(!context.hasChanges)
        #expect(ada.name == "Ada")
        #expect(ada.place === paris)
        #expect(paris.people == [ada])
        #expect(rome.people.isEmpty)
        #expect(!paris.isDeleted)
        #expect(newcomer.context == nil)
        try context.save()
        let fresh = try store.makeContext()
        #expect(try fresh.fetchAll(HandPerson.self).map(\.name) == ["Ada"])
    }

    @Test func identityMapReturnsOneObjectPerRow() throws {
        let store = try ObjectStore(path: file.path, entities: [HandAuthor.self, HandBook.self])
        let context = try store.makeContext()
        let author = HandAuthor()
        let book = HandBook()
        book.author = author
        context.insert(book)
        try context.save()
        let fresh = try store.makeContext()
        let fetchedBook = try #require(try fresh.fetchAll(HandBook.self).first)
        let fetchedAuthor = try #require(try fresh.object(HandAuthor.self, id: author.objectID))
        #expect(fetchedBook.author === fetchedAuthor)
        #expect(fetchedAuthor.books.first === fetchedBook)
    }
}

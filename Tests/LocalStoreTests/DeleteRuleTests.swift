import Foundation
import LocalStore
@testable import LocalStoreCore
import TestSupport
import Testing

@Suite struct DeleteRuleTests {
    let file = TemporaryStoreFile()

    @Test func nullifyClearsTheInverseInMemoryAndInTheStore() throws {
        let store = try ObjectStore(path: file.path, entities: [HandPlace.self, HandPerson.self])
        let context = try store.makeContext()
        let place = HandPlace()
        let person = HandPerson()
        person.place = place
        context.insert(person)
        try context.save()
        context.delete(place)
        try context.save()
        #expect(person.place == nil)
        #expect(place.isDeleted)
        let fresh = try store.makeContext()
        #expect(try fresh.object(HandPerson.self, id: person.objectID)?.place == nil)
        #expect(try fresh.object(HandPlace.self, id: place.objectID) == nil)
    }

    @Test func cascadeDeletesMembersTransitively() throws {
        let store = try ObjectStore(path: file.path, entities: [HandAuthor.self, HandBook.self])
        let context = try store.makeContext()
        let author = HandAuthor()
        context.insert(author)
        for title in ["A", "B"] {
            let book = HandBook()
            book.title = title
            author.addToBooks(book)
        }
        try context.save()
        let fresh = try store.makeContext()
        fresh.delete(try #require(try fresh.object(HandAuthor.self, id: author.objectID)))
        try fresh.save()
        #expect(try store.makeContext().fetchAll(HandBook.self).isEmpty)
        #expect(try store.makeContext().fetchAll(HandAuthor.self).isEmpty)
    }

    @Test func denyRefusesTheSaveNamingEntityObjectAndRelationship() throws {
        let store = try openFolderStore(file)
        let context = try store.makeContext()
        let folder = Folder(name: "docs")
        let document = File(name: "a.txt")
        document.folder = folder
        context.insert(folder)
        try context.save()
        context.delete(folder)
        let error = try #require(throws: StoreError.self) { try context.save() }
        #expect(error.code == .deleteDenied)
        #expect(error.entity == "Folder")
        #expect(error.relationship == "files")
        #expect(error.objectID == folder.objectID)
        // Nothing was written, and the graph is untouched.
        #expect(document.folder === folder)
        #expect(try store.makeContext().fetchAll(Folder.self).count == 1)
        context.rollback()
        #expect(!folder.isDeleted)
    }

    @Test func denyAllowsTheDeleteOnceTheRelationshipIsEmpty() throws {
        let store = try openFolderStore(file)
        let context = try store.makeContext()
        let folder = Folder(name: "docs")
        let other = Folder(name: "other")
        let document = File(name: "a.txt")
        document.folder = folder
        context.insert(folder)
        context.insert(other)
        try context.save()
        document.folder = other
        context.delete(folder)
        try context.save()
        #expect(try store.makeContext().fetchAll(Folder.self).map(\.name) == ["other"])
    }

    @Test func manyToManyNullifyRemovesJoinRows() throws {
        let store = try openFolderStore(file)
        let context = try store.makeContext()
        let folder = Folder(name: "docs")
        let tag = Tag(label: "red")
        folder.addToTags(tag)
        #expect(tag.folders == [folder])
        context.insert(folder)
        try context.save()
        context.delete(tag)
        try context.save()
        let fresh = try store.makeContext()
        #expect(try fresh.object(Folder.self, id: folder.objectID)?.tags.isEmpty == true)
        let rows = try fresh.connection.rows("SELECT count(*) FROM \"Tag_folders\"")
        #expect(rows.first?.first == .integer(0))
    }
}

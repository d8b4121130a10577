import Foundation
import SyncKit
import Testing

/// A shelf holds one or two books and cannot be deleted while it holds any.
@Entity final class Shelf {
    var label: String = ""
    @Relationship(inverse: "shelf", deleteRule: .deny, minCount: 1, maxCount: 2) var books: [Book] = []
}

/// A book, known by its unique ISBN, and by its title and edition together.
@Entity final class Book {
    #Unique<Book>([\.title, \.edition])
    @Attribute(.unique) var isbn: String = ""
    var title: String?
    var edition: Int = 1
    @Relationship(inverse: "books", deleteRule: .nullify) var shelf: Shelf?
}

/// `sync put`, `link`, `unlink` and `delete` refuse what a context's save refuses, with the same
/// error, and change nothing when they do.
extension CLIStoreTests {
    /// A store set up for sync by `sync init` and opened with the Swift types as well, holding a
    /// shelf with two books and a shelf with one.
    struct ShelfStore {
        let path: String
        let store: ObjectStore
        let replica: SyncReplica
        let full: Shelf, single: Shelf
        let first: Book, second: Book, only: Book

        init(_ tests: CLIStoreTests) throws {
            let typedPath = tests.directory.appendingPathComponent("typed-shelves.sqlite").path
            let schemaPath = tests.directory.appendingPathComponent("shelf-schema.json").path
            try ObjectStore(path: typedPath, entities: [Shelf.self, Book.self]).exportSchema().write(to: URL(fileURLWithPath: schemaPath))
            path = tests.directory.appendingPathComponent("shelves.sqlite").path
            let initialized = try tests.cli.run("init", path, "--schema", schemaPath, "--server", "http://127.0.0.1:9", "--dataset", "shelves", "--token", "t0k")
            #expect(initialized.status == 0, "\(initialized.stderr)")
            store = try ObjectStore(path: path, entities: [Shelf.self, Book.self])
            replica = try SyncReplica(store: store)
            let context = try store.makeContext()
            full = Shelf()
            full.label = "full"
            single = Shelf()
            single.label = "single"
            first = Book()
            first.isbn = "1"
            second = Book()
            second.isbn = "2"
            only = Book()
            only.isbn = "3"
            full.books = [first, second]
            single.books = [only]
            context.insert(full)
            context.insert(single)
            try context.save()
        }

        /// The error a save through the Swift API throws for `change`; the save is rolled back.
        func swiftError(_ change: (ObjectContext) throws -> Void) throws -> StoreError {
            let context = try store.makeContext()
            try change(context)
            return try #require(throws: StoreError.self) { try context.save() }
        }
    }

    /// Runs a command that must fail with `expected`, and checks that the store is unchanged.
    private func expectRefusal(_ shelves: ShelfStore, _ arguments: String..., as expected: StoreError) throws {
        let before = try shelves.replica.versionVector()
        let result = try cli.run(["--store", shelves.path] + arguments)
        #expect(result.status == 1, "sync \(arguments.joined(separator: " ")) succeeded: \(result.stdout)")
        #expect(result.stderr.contains("sync \(arguments[0]): \(expected.code.rawValue): \(expected.message)"),
                "sync \(arguments.joined(separator: " ")) said \(result.stderr), the Swift API \(expected.message)")
        #expect(try shelves.replica.versionVector() == before, "a refused edit commits no change set")
    }

    @Test func putWithAUniqueValueAnotherObjectHasFailsNamingEntityAttributeAndValue() throws {
        let shelves = try ShelfStore(self)
        var duplicate = UUID()
        let expected = try shelves.swiftError { context in
            let book = Book()
            book.isbn = "1"
            context.insert(book)
            duplicate = book.objectID
        }
        #expect(expected.code == .uniqueViolation)
        #expect(expected.entity == "Book" && expected.attribute == "isbn")
        #expect(expected.message.contains("Book.isbn must be unique") && expected.message.contains("'1'"))
        // The same new identifier, so that the messages can be compared whole.
        try expectRefusal(shelves, "put", "Book", duplicate.uuidString, "isbn=1", as: expected)
        // Changing an existing book's value to a taken one is refused too.
        let changed = try shelves.swiftError { context in try context.object(Book.self, id: shelves.second.objectID)?.isbn = "1" }
        try expectRefusal(shelves, "put", "Book", shelves.second.objectID.uuidString, "isbn=1", as: changed)
        #expect(try shelves.replica.records("Book").count == 3)
        #expect(try cli.run("--store", shelves.path, "put", "Book", "isbn=4").status == 0)
    }

    @Test func putWithAUniqueKeyAnotherObjectHasFailsAsASaveDoes() throws {
        let shelves = try ShelfStore(self)
        let put = try cli.run("--store", shelves.path, "put", "Book", "isbn=5", "title=Dune", "edition=2")
        #expect(put.status == 0, "\(put.stderr)")
        var duplicate = UUID()
        let expected = try shelves.swiftError { context in
            let book = Book()
            book.isbn = "6"
            book.title = "Dune"
            book.edition = 2
            context.insert(book)
            duplicate = book.objectID
        }
        #expect(expected.code == .uniqueViolation)
        #expect(expected.message.contains("Book.(title, edition) must be unique"))
        try expectRefusal(shelves, "put", "Book", duplicate.uuidString, "isbn=6", "title=Dune", "edition=2", as: expected)
        // Another edition, or no title (NULL never collides), is accepted.
        #expect(try cli.run("--store", shelves.path, "put", "Book", "isbn=6", "title=Dune", "edition=3").status == 0)
        #expect(try cli.run("--store", shelves.path, "put", "Book", "isbn=7", "edition=2").status == 0)
    }

    @Test func linkBeyondMaxCountFailsAsASaveDoes() throws {
        let shelves = try ShelfStore(self)
        let third = try cli.run("--store", shelves.path, "put", "Book", "isbn=9").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let thirdID = try #require(UUID(uuidString: third))
        let expected = try shelves.swiftError { context in
            let book = try #require(try context.object(Book.self, id: thirdID))
            book.shelf = try context.object(Shelf.self, id: shelves.full.objectID)
        }
        #expect(expected.code == .countViolation)
        #expect(expected.message == "Shelf.books of \(shelves.full.objectID.uuidString) has 3 member(s), more than its maxCount 2")
        try expectRefusal(shelves, "link", "Book", third, "shelf", shelves.full.objectID.uuidString, as: expected)
        try expectRefusal(shelves, "link", "Shelf", shelves.full.objectID.uuidString, "books", third, as: expected)
        #expect(try shelves.replica.record("Book", id: thirdID)?.relationships.first?.members == [])
    }

    @Test func unlinkAndDeleteBelowMinCountFailAsASaveDoes() throws {
        let shelves = try ShelfStore(self)
        let expected = try shelves.swiftError { context in
            try context.object(Book.self, id: shelves.only.objectID)?.shelf = nil
        }
        #expect(expected.code == .countViolation)
        #expect(expected.message == "Shelf.books of \(shelves.single.objectID.uuidString) has 0 member(s), fewer than its minCount 1")
        let single = shelves.single.objectID.uuidString, only = shelves.only.objectID.uuidString
        try expectRefusal(shelves, "unlink", "Shelf", single, "books", only, as: expected)
        try expectRefusal(shelves, "unlink", "Book", only, "shelf", single, as: expected)
        let deleted = try shelves.swiftError { context in
            context.delete(try #require(try context.object(Book.self, id: shelves.only.objectID)))
        }
        #expect(deleted.message == expected.message)
        try expectRefusal(shelves, "delete", "Book", only, as: deleted)
        #expect(try shelves.replica.record("Book", id: shelves.only.objectID) != nil)
    }

    @Test func deleteRefusedByDenyFailsAsASaveDoes() throws {
        let shelves = try ShelfStore(self)
        let expected = try shelves.swiftError { context in
            context.delete(try #require(try context.object(Shelf.self, id: shelves.full.objectID)))
        }
        #expect(expected.code == .deleteDenied)
        let example = [shelves.first.objectID, shelves.second.objectID].min { $0.uuidString < $1.uuidString }!
        #expect(expected.message == "cannot delete Shelf \(shelves.full.objectID.uuidString): its relationship 'books' (delete rule deny) still holds 2 object(s), e.g. Book \(example.uuidString)")
        try expectRefusal(shelves, "delete", "Shelf", shelves.full.objectID.uuidString, as: expected)
        #expect(try shelves.replica.records("Shelf").count == 2)
    }
}

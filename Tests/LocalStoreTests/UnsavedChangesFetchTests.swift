import Foundation
import LocalStore
@testable import LocalStoreCore
import TestSupport
import Testing

/// A query sees the context as it is in memory: unsaved inserts are found, unsaved changes
/// match by their new values, objects marked for deletion are left out; and nothing a query
/// writes to evaluate this stays in the store.
@Suite struct UnsavedChangesFetchTests {
    let fixture: QueryFixture

    init() throws { fixture = try QueryFixture(seed: 5, people: 100) }

    var context: ObjectContext { fixture.context }

    @Test func unsavedInsertIsFoundCountedAndPaged() throws {
        let ada = fixture.addPerson()
        ada.name = "zzz unsaved"
        let descriptor = FetchDescriptor<QPerson>(predicate: #Predicate { $0.name.starts(with: "zzz") })
        #expect(try context.fetch(descriptor) == [ada])
        #expect(try context.fetchCount(descriptor) == 1)
        #expect(try context.fetchIdentifiers(descriptor) == [ada.objectID])
        var last = FetchDescriptor<QPerson>(sortBy: [SortDescriptor(\.name, order: .reverse)])
        last.fetchLimit = 1
        #expect(try context.fetch(last) == [ada])
        #expect(ada.isInserted)
    }

    @Test func unsavedChangeMatchesByItsNewValue() throws {
        let person = fixture.people[3]
        let old = person.name
        person.name = "Changed in memory"
        #expect(try context.fetch(FetchDescriptor<QPerson>(predicate: #Predicate { $0.name == "Changed in memory" })) == [person])
        #expect(try !context.fetch(FetchDescriptor<QPerson>(predicate: #Predicate { $0.name == old })).contains(person))
        #expect(person.name == "Changed in memory")
    }

    @Test func objectMarkedForDeletionIsLeftOut() throws {
        let person = fixture.people[0]
        context.delete(person)
        #expect(try !context.fetch(FetchDescriptor<QPerson>()).contains(person))
        #expect(try context.fetchCount(FetchDescriptor<QPerson>()) == fixture.people.count - 1)
        #expect(try context.aggregate(.count(\QPerson.email)) == fixture.people.count - 1)
    }

    @Test func queriesLeaveNothingWritten() throws {
        let inserted = fixture.addPerson()
        fixture.people[1].name = "Renamed"
        context.delete(fixture.people[2])
        _ = try context.fetch(FetchDescriptor<QPerson>(predicate: #Predicate { $0.name == "Renamed" }))
        _ = try context.fetchCount(FetchDescriptor<QPerson>())
        #expect(!context.connection.isInTransaction)
        let other = try fixture.store.makeContext()
        #expect(try other.fetchCount(FetchDescriptor<QPerson>()) == fixture.people.count - 1)
        #expect(try other.object(QPerson.self, id: inserted.objectID) == nil)
        #expect(try other.fetch(FetchDescriptor<QPerson>(predicate: #Predicate { $0.name == "Renamed" })).isEmpty)
        // The changes are still pending and save as usual.
        #expect(context.hasChanges)
        try context.save()
        #expect(try other.fetch(FetchDescriptor<QPerson>(predicate: #Predicate { $0.name == "Renamed" })).count == 1)
    }

    @Test func withoutChangesNoWriteLockIsNeeded() throws {
        let writer = try fixture.store.makeContext()
        try writer.connection.execute("BEGIN IMMEDIATE")
        defer { try? writer.connection.execute("ROLLBACK") }
        #expect(!context.hasChanges)
        #expect(try context.fetchCount(FetchDescriptor<QPerson>()) == fixture.people.count)
    }

    @Test func includePendingChangesFalseQueriesTheSavedState() throws {
        let inserted = fixture.addPerson()
        inserted.name = "Not saved"
        var descriptor = FetchDescriptor<QPerson>(predicate: #Predicate { $0.name == "Not saved" })
        descriptor.includePendingChanges = false
        #expect(try context.fetch(descriptor).isEmpty)
        descriptor.includePendingChanges = true
        #expect(try context.fetch(descriptor) == [inserted])
    }

    @Test func pendingUniqueConflictThrowsAndKeepsTheContext() throws {
        let copy = fixture.addPerson()
        copy.email = fixture.people[0].email
        #expect { try context.fetch(FetchDescriptor<QPerson>()) } throws: { ($0 as? StoreError)?.code == .uniqueViolation }
        #expect(!context.connection.isInTransaction)
        copy.email = "now-unique@example.org"
        #expect(try context.fetchCount(FetchDescriptor<QPerson>()) == fixture.people.count)
        try context.save()
    }

    @Test func deleteRulesWaitForSave() throws {
        // Documented rule: a query sees a deleted object's row as gone, but cascades run on save.
        let author = try #require(fixture.authors.first { !$0.books.isEmpty })
        let books = author.books
        context.delete(author)
        let name = author.name
        #expect(try context.fetch(FetchDescriptor<QAuthor>(predicate: #Predicate { $0.name == name })).allSatisfy { $0 !== author })
        let remaining = try context.fetch(FetchDescriptor<QBook>())
        #expect(books.allSatisfy { book in remaining.contains { $0 === book } })
        // The books still refer to the author, as they do in memory, but a path through it finds no row.
        #expect(try context.fetch(FetchDescriptor<QBook>(predicate: #Predicate { $0.author == nil })).filter { books.contains($0) }.isEmpty)
        #expect(try context.fetch(FetchDescriptor<QBook>(predicate: #Predicate { $0.author?.name == name })).isEmpty)
        #expect(books.allSatisfy { $0.author === author })
        try context.save()
        let afterSave = try context.fetch(FetchDescriptor<QBook>())
        #expect(books.allSatisfy { book in !afterSave.contains { $0 === book } })
    }

    @Test(arguments: [11, 12, 13] as [UInt64]) func randomUnsavedChangesMatchFoundation(seed: UInt64) throws {
        let fixture = try QueryFixture(seed: seed, people: 150)
        var random = SeededGenerator(seed: seed &* 31)
        var people = fixture.people
        let savedCount = people.count
        for _ in 0..<30 {
            let person = people.randomElement(using: &random)!
            switch Int.random(in: 0..<5, using: &random) {
            case 0: person.name = fixture.word()
            case 1: person.score = Bool.random(using: &random) ? nil : Double(Int.random(in: 0...10, using: &random))
            case 2: person.place = Bool.random(using: &random) ? nil : fixture.places.randomElement(using: &random)
            case 3:
                fixture.context.delete(person)
                people.removeAll { $0 === person }
            default: people.append(fixture.addPerson())
            }
        }
        let prefix = "b"
        try fixture.check(people, #Predicate { $0.name.starts(with: prefix) }, sortBy: [SortDescriptor(\.name)])
        try fixture.check(people, #Predicate { ($0.score ?? 0) > 4 }, sortBy: [SortDescriptor(\.score, order: .reverse)])
        try fixture.check(people, #Predicate { $0.place?.name == "Paris" || $0.place == nil })
        try fixture.check(people, #Predicate { _ in true }, sortBy: [SortDescriptor(\.email)], discriminating: false)
        #expect(fixture.context.hasChanges)
        let other = try fixture.store.makeContext()
        #expect(try other.fetchCount(FetchDescriptor<QPerson>()) == savedCount)
    }

    @Test func unsavedRelationshipChangesAreSeenByQuantifiers() throws {
        let author = try #require(fixture.authors.first { $0.books.isEmpty })
        let name = author.name
        let book = QBook()
        book.title = "Unsaved title"
        book.author = author
        let withUnsavedBook = #Predicate<QAuthor> { $0.books.contains { $0.title == "Unsaved title" } }
        #expect(try context.fetch(FetchDescriptor(predicate: withUnsavedBook)) == [author])
        let counted = try context.fetch(FetchDescriptor<QAuthor>(predicate: #Predicate { $0.name == name && $0.books.count == 1 }))
        #expect(counted.contains(author))
        book.author = nil
        #expect(try context.fetch(FetchDescriptor(predicate: withUnsavedBook)).isEmpty)
    }
}

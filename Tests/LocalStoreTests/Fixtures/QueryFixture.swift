import Foundation
import LocalStore
@testable import LocalStoreCore
import TestSupport
import Testing

// A store filled with a seeded random data set for the query tests, and the check that the
// SQL path returns what Foundation's `Predicate.evaluate` and `SortDescriptor` give in memory.
//
// Entity types are named through these aliases so the tests follow a rename of the fixtures.
typealias QPerson = HandPerson
typealias QPlace = HandPlace
typealias QAuthor = HandAuthor
typealias QBook = HandBook
typealias QMood = HandMood
typealias QPrefs = HandPrefs
typealias QPoint = HandPoint

final class QueryFixture {
    let file = TemporaryStoreFile()
    let store: ObjectStore
    let context: ObjectContext
    var random: SeededGenerator
    /// In insertion order, which is storage order.
    var people: [QPerson] = []
    var places: [QPlace] = []
    var authors: [QAuthor] = []
    var books: [QBook] = []

    static let syllables = ["al", "bo", "Ca", "de", "ed", "fi", "Go", "o", "b"]
    static let placeNames = ["Paris", "Berlin", "Rome", "Oslo", "Lima", "paris", "Quito"]

    init(seed: UInt64 = 42, people count: Int = 300, empty: Bool = false) throws {
        store = try ObjectStore(path: file.path, entities: [QPlace.self, QPerson.self, QAuthor.self, QBook.self])
        context = try store.makeContext()
        random = SeededGenerator(seed: seed)
        guard !empty else { return }
        for name in QueryFixture.placeNames {
            let place = QPlace()
            place.name = name
            if Bool.random(using: &random) || name == "Paris" {
                place.location = QPoint(latitude: Double(Int.random(in: 30...60, using: &random)), longitude: Double(Int.random(in: -10...10, using: &random)))
            }
            context.insert(place)
            places.append(place)
        }
        for _ in 0..<count { addPerson() }
        for index in 0..<40 {
            let author = QAuthor()
            author.name = word()
            context.insert(author)
            authors.append(author)
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                let book = QBook()
                book.title = word() + " \(index)"
                book.author = author
                books.append(book)
            }
        }
        try context.save()
    }

    func word() -> String {
        (0..<Int.random(in: 1...3, using: &random)).map { _ in QueryFixture.syllables.randomElement(using: &random)! }.joined()
    }

    @discardableResult
    func addPerson() -> QPerson {
        let person = QPerson()
        person.email = "p\(people.count)-\(UUID().uuidString.prefix(8))@example.org"
        person.name = Int.random(in: 0..<20, using: &random) == 0 ? "" : word()
        if Int.random(in: 0..<4, using: &random) > 0 { person.score = Double(Int.random(in: 0...20, using: &random)) / 2 }
        if Int.random(in: 0..<5, using: &random) > 0 { person.born = Date(timeIntervalSince1970: Double(Int.random(in: 0...1_000_000, using: &random))) }
        person.mood = Bool.random(using: &random) ? .calm : .busy
        if Bool.random(using: &random) { person.prefs = QPrefs(theme: Bool.random(using: &random) ? "dark" : "light") }
        person.nickname = Bool.random(using: &random) ? "" : word()
        if Int.random(in: 0..<5, using: &random) > 0 { person.place = places.randomElement(using: &random) }
        context.insert(person)
        people.append(person)
        return person
    }

    /// Objects of `all` that the predicate accepts in memory, sorted by `sortBy` with ties in
    /// the given order (storage order), as the SQL path promises.
    static func evaluate<Entity: PersistentEntity>(
        _ all: [Entity], _ predicate: Predicate<Entity>?, _ sortBy: [SortDescriptor<Entity>]
    ) throws -> [Entity] {
        let matching = try all.enumerated().filter { try predicate?.evaluate($0.element) ?? true }
        return matching.sorted { first, second in
            for descriptor in sortBy {
                switch descriptor.compare(first.element, second.element) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            return first.offset < second.offset
        }.map(\.element)
    }

    /// Checks that fetch, fetchCount and fetchIdentifiers agree with Foundation's in-memory
    /// evaluation over `all`. `discriminating` also requires the predicate to keep some
    /// objects and drop others, so a translation that ignores it cannot pass.
    /// What the SQL path and Foundation's in-memory evaluation say for one predicate; the
    /// assertions on it are `check(_:_:sortBy:discriminating:)` in PredicateRandomizedTests.swift.
    struct Comparison {
        var expected: [UUID]
        var fetched: [UUID]
        var count: Int
        var identifiers: [UUID]
        var total: Int
    }

    func compare<Entity: PersistentEntity>(
        _ all: [Entity], _ predicate: Predicate<Entity>, sortBy: [SortDescriptor<Entity>]
    ) throws -> Comparison {
        let expected = try QueryFixture.evaluate(all, predicate, sortBy)
        let descriptor = FetchDescriptor(predicate: predicate, sortBy: sortBy)
        return Comparison(
            expected: expected.map(\.objectID), fetched: try context.fetch(descriptor).map(\.objectID),
            count: try context.fetchCount(descriptor), identifiers: try context.fetchIdentifiers(descriptor), total: all.count)
    }
}

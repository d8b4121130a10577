import Foundation
import LocalStore

/// `bench store`: the same workloads done by LocalStore and by the raw SQLite C API, with the
/// rows/s of each and their ratio, then LocalStore's memory growth while fetching.
///
/// - insert: `rows` people (8 attributes, a to-one to one of 100 places) in one save /
///   one transaction, from the same pre-generated values.
/// - insert, observed: the same with one subscriber to the store's changes attached, which
///   makes the save describe what it changed.
/// - fetch: every person back as an object.
/// - traverse: an author's ordered to-many of `rows` books, loaded and walked.
///
/// LocalStore and raw runs alternate, so both see the same noise from the rest of the machine;
/// each side's best run counts.
struct StoreBenchmark {
    let rows: Int
    let repeats: Int

    func run() throws {
        print("== store: LocalStore vs raw SQLite C API, \(grouped(rows)) rows, \(ProcessInfo.processInfo.activeProcessorCount) cores ==")
        let results = [try insert(observed: false), try insert(observed: true), try fetch(), try traverse()]
        ResultTable.print(results, repeats: repeats)
        print("")
        try MemoryProbe.printFetchGrowth(counts: [rows / 4, rows / 2, rows])
        print("peak resident set of this process: \(mebibytes(ProcessMemory.peakBytes()))")
    }

    // MARK: Workloads

    private func insert(observed: Bool) throws -> ComparisonResult {
        let places = BenchData.places()
        let people = BenchData.people(count: rows)
        var result = ComparisonResult(workload: observed ? "insert, observed" : "insert", rows: rows)
        for _ in 0..<repeats {
            result.localStore.append(try onFreshStore { path in
                let store = try ObjectStore(path: path, entities: benchEntities)
                let context = try store.makeContext()
                // Held for the whole run: the subscription lasts as long as its stream.
                let changes = observed ? store.changes : nil
                defer { withExtendedLifetime(changes) {} }
                return try measureSeconds { try StoreBenchmark.insert(people, places, into: context) }
            })
            result.raw.append(try onFreshStore { path in
                // LocalStore creates the tables, so both sides write the very same layout.
                _ = try ObjectStore(path: path, entities: benchEntities)
                let database = try RawDatabase(path: path)
                return try measureSeconds { try database.insert(people: people, places: places) }
            })
        }
        return result
    }

    private func fetch() throws -> ComparisonResult {
        var result = ComparisonResult(workload: "fetch", rows: rows)
        try onFreshStore { path in
            try StoreBenchmark.populatePeople(path, count: rows)
            for _ in 0..<repeats {
                // The fetched objects are kept outside the timed block on both sides, so neither
                // pays for freeing them inside it.
                let context = try ObjectStore(path: path, entities: benchEntities).makeContext()
                var fetched: [Person] = []
                result.localStore.append(try measureSeconds { fetched = try context.fetchAll(Person.self) })
                let database = try RawDatabase(path: path)
                var rawFetched: [RawPerson] = []
                result.raw.append(try measureSeconds { rawFetched = try database.fetchPeople() })
                try expect(fetched.count == rows && rawFetched.count == rows,
                           "fetch read \(fetched.count) (LocalStore) and \(rawFetched.count) (raw) of \(rows) rows")
            }
        }
        return result
    }

    private func traverse() throws -> ComparisonResult {
        var result = ComparisonResult(workload: "traverse", rows: rows)
        try onFreshStore { path in
            _ = try ObjectStore(path: path, entities: benchEntities)
            try RawDatabase(path: path).insertLibrary(authorID: UUID(), books: rows)
            for _ in 0..<repeats {
                let context = try ObjectStore(path: path, entities: benchEntities).makeContext()
                var books: [Book] = []
                var pages = 0
                result.localStore.append(try measureSeconds {
                    guard let author = try context.fetchAll(Author.self).first else { return }
                    books = author.books
                    for book in books { pages += book.pages }
                })
                let database = try RawDatabase(path: path)
                var rawBooks: [RawBook] = []
                var rawPages = 0
                result.raw.append(try measureSeconds { (rawBooks, rawPages) = try database.traverseBooks() })
                try expect(books.count == rows && rawBooks.count == rows && pages == rawPages,
                           "traverse read \(books.count) books (\(pages) pages) with LocalStore and \(rawBooks.count) (\(rawPages) pages) raw")
            }
        }
        return result
    }

    // MARK: Shared steps

    /// Creates people (and their places) as LocalStore objects from `people` and saves them.
    static func insert(_ people: [PersonRecord], _ places: [PlaceRecord], into context: ObjectContext) throws {
        let placeObjects = insertPlaces(places, into: context)
        for record in people { insertPerson(record, places: placeObjects, into: context) }
        try context.save()
    }

    /// Inserts one `Place` per record (not saved).
    static func insertPlaces(_ places: [PlaceRecord], into context: ObjectContext) -> [Place] {
        places.map { record -> Place in
            let place = Place()
            place.name = record.name
            context.insert(place)
            return place
        }
    }

    /// Inserts a `Person` with every attribute of `record` and its place (not saved).
    static func insertPerson(_ record: PersonRecord, places: [Place], into context: ObjectContext) {
        let person = Person()
        person.name = record.name
        person.email = record.email
        person.age = record.age
        person.score = record.score
        person.born = record.born
        person.isActive = record.isActive
        person.mood = record.mood
        person.token = record.token
        person.place = places[record.place]
        context.insert(person)
    }

    /// Fills a store file with `count` people, written by the raw baseline (the quickest way;
    /// LocalStore reads them back exactly as it reads its own rows).
    static func populatePeople(_ path: String, count: Int) throws {
        _ = try ObjectStore(path: path, entities: benchEntities)
        try RawDatabase(path: path).insert(people: BenchData.people(count: count), places: BenchData.places())
    }

    /// Runs `body` on a new store file, deleted afterwards.
    private func onFreshStore<T>(_ body: (String) throws -> T) throws -> T {
        let path = temporaryStorePath("store")
        defer { removeStoreFile(path) }
        return try body(path)
    }

    private func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw BenchmarkFailure(message()) }
    }
}

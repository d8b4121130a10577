import Codecs
import CSQLite
import Foundation
import LocalStore
import SQLiteDatabase

// The baseline: the store workloads written directly against the SQLite C API, the way a
// careful hand-written data layer would do them. It works on the tables LocalStore created
// (the store is opened on the file first), with the same connection settings and pragmas, one
// transaction and one prepared statement reused per table. Identifiers go through the same
// fast code LocalStore uses (random bits from `getrandom`, hand-written hex text written into
// a stack buffer and parsed straight from SQLite's bytes), not Foundation's `UUID()`,
// `uuidString` and `UUID(uuidString:)`, which cost several microseconds per row on Linux.

/// SQLite's "copy the bytes now" destructor (the C macro `SQLITE_TRANSIENT`).
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A person read back by the raw baseline: a plain Swift object holding the same Swift
/// values a LocalStore ``Person`` holds, so both sides do the same decoding work.
final class RawPerson {
    let id: UUID
    var name: String
    var email: String
    var age: Int
    var score: Double?
    var born: Date?
    var isActive: Bool
    var mood: Mood
    var token: UUID?
    var placeID: UUID?

    init(id: UUID, name: String, email: String, age: Int, score: Double?, born: Date?, isActive: Bool, mood: Mood, token: UUID?, placeID: UUID?) {
        self.id = id
        self.name = name
        self.email = email
        self.age = age
        self.score = score
        self.born = born
        self.isActive = isActive
        self.mood = mood
        self.token = token
        self.placeID = placeID
    }
}

/// A book read back by the raw baseline.
final class RawBook {
    let id: UUID
    var title: String
    var pages: Int
    var authorID: UUID?

    init(id: UUID, title: String, pages: Int, authorID: UUID?) {
        self.id = id
        self.title = title
        self.pages = pages
        self.authorID = authorID
    }
}

/// The benchmark failed in a way that makes its figures meaningless.
struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One raw SQLite connection configured like a LocalStore connection.
final class RawDatabase {
    private let handle: OpaquePointer
    /// LocalStore's WAL checkpoints, which run on a connection and queue of their own.
    private let checkpointer: WALCheckpointer

    init(path: String) throws {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK,
              let handle else {
            throw BenchmarkFailure("cannot open \(path)")
        }
        self.handle = handle
        // The settings and pragmas LocalStore gives each of its connections (SQLiteConnection's
        // initializer and ObjectStore.configure), the 16 MiB page cache included, and its
        // background checkpoints (ObjectStore.openConnection).
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 5_000)
        checkpointer = WALCheckpointer(path: path)
        checkpointer.install(onDatabase: handle)
        try execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = OFF; PRAGMA cache_size = -16384; PRAGMA journal_size_limit = \(ObjectStore.walSizeLimit)")
    }

    deinit {
        sqlite3_close_v2(handle)
        checkpointer.waitUntilIdle()
    }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw failure(sql) }
    }

    /// Prepares `sql`; the caller finalizes it.
    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        // Prepared as LocalStore prepares the statements it caches.
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK, let statement else {
            throw failure(sql)
        }
        return statement
    }

    /// Steps an INSERT and resets it for the next row.
    func stepInsert(_ statement: OpaquePointer) throws {
        guard sqlite3_step(statement) == SQLITE_DONE else { throw failure("INSERT") }
        sqlite3_reset(statement)
    }

    private func failure(_ sql: String) -> BenchmarkFailure {
        BenchmarkFailure("SQLite: \(String(cString: sqlite3_errmsg(handle))) in \(sql)")
    }

    // MARK: Workloads

    /// Inserts the places and people in one transaction.
    func insert(people: [PersonRecord], places: [PlaceRecord]) throws {
        try execute("BEGIN IMMEDIATE")
        let placeInsert = try prepare(#"INSERT INTO "Place" ("_object_id", "name") VALUES (?, ?)"#)
        defer { sqlite3_finalize(placeInsert) }
        // New rows get new ids, as new LocalStore objects do.
        let placeIDs = places.map { _ in UUID.random() }
        for (place, id) in zip(places, placeIDs) {
            bindID(placeInsert, 1, id)
            sqlite3_bind_text(placeInsert, 2, place.name, -1, transient)
            try stepInsert(placeInsert)
        }
        let personInsert = try prepare(#"""
            INSERT INTO "Person" ("_object_id", "name", "email", "age", "score", "born", "isActive", "mood", "token", "place")
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """#)
        defer { sqlite3_finalize(personInsert) }
        for person in people {
            bindID(personInsert, 1, UUID.random())
            sqlite3_bind_text(personInsert, 2, person.name, -1, transient)
            sqlite3_bind_text(personInsert, 3, person.email, -1, transient)
            sqlite3_bind_int64(personInsert, 4, Int64(person.age))
            if let score = person.score { sqlite3_bind_double(personInsert, 5, score) } else { sqlite3_bind_null(personInsert, 5) }
            if let born = person.born {
                sqlite3_bind_double(personInsert, 6, born.timeIntervalSince1970)
            } else {
                sqlite3_bind_null(personInsert, 6)
            }
            sqlite3_bind_int64(personInsert, 7, person.isActive ? 1 : 0)
            sqlite3_bind_text(personInsert, 8, person.mood.rawValue, -1, transient)
            if let token = person.token {
                bindID(personInsert, 9, token)
            } else {
                sqlite3_bind_null(personInsert, 9)
            }
            // Converted per row, as LocalStore does: an object layer holds the related object, not its id text.
            bindID(personInsert, 10, placeIDs[person.place])
            try stepInsert(personInsert)
        }
        try execute("COMMIT")
    }

    /// Reads every person into a ``RawPerson``.
    func fetchPeople() throws -> [RawPerson] {
        let select = try prepare(#"""
            SELECT "_object_id", "name", "email", "age", "score", "born", "isActive", "mood", "token", "place" FROM "Person"
            """#)
        defer { sqlite3_finalize(select) }
        var people: [RawPerson] = []
        while sqlite3_step(select) == SQLITE_ROW {
            guard let id = uuid(select, 0), let mood = Mood(rawValue: string(select, 7)) else { throw failure("SELECT Person") }
            people.append(RawPerson(
                id: id, name: string(select, 1), email: string(select, 2), age: Int(sqlite3_column_int64(select, 3)),
                score: sqlite3_column_type(select, 4) == SQLITE_NULL ? nil : sqlite3_column_double(select, 4),
                born: sqlite3_column_type(select, 5) == SQLITE_NULL ? nil : Date(timeIntervalSince1970: sqlite3_column_double(select, 5)),
                isActive: sqlite3_column_int64(select, 6) != 0, mood: mood,
                token: uuid(select, 8), placeID: uuid(select, 9)))
        }
        return people
    }

    /// How many people have `email` (a scan of the whole table: the column has no index).
    func countPeople(email: String) throws -> Int {
        let select = try prepare(#"SELECT count(*) FROM "Person" WHERE "email" = ?"#)
        defer { sqlite3_finalize(select) }
        sqlite3_bind_text(select, 1, email, -1, transient)
        guard sqlite3_step(select) == SQLITE_ROW else { throw failure("SELECT count(*) FROM Person") }
        return Int(sqlite3_column_int64(select, 0))
    }

    /// Inserts an author and `count` books in its ordered `books`, in one transaction.
    func insertLibrary(authorID: UUID, books count: Int) throws {
        try execute("BEGIN IMMEDIATE")
        let authorInsert = try prepare(#"INSERT INTO "Author" ("_object_id", "name") VALUES (?, 'Author')"#)
        defer { sqlite3_finalize(authorInsert) }
        bindID(authorInsert, 1, authorID)
        try stepInsert(authorInsert)
        let bookInsert = try prepare(#"INSERT INTO "Book" ("_object_id", "title", "pages", "author", "author_position") VALUES (?, ?, ?, ?, ?)"#)
        defer { sqlite3_finalize(bookInsert) }
        for index in 0..<count {
            bindID(bookInsert, 1, UUID.random())
            sqlite3_bind_text(bookInsert, 2, "Book \(index)", -1, transient)
            sqlite3_bind_int64(bookInsert, 3, Int64(100 + index % 400))
            bindID(bookInsert, 4, authorID)
            sqlite3_bind_int64(bookInsert, 5, Int64(index))
            try stepInsert(bookInsert)
        }
        try execute("COMMIT")
    }

    /// Finds the author, reads its books in order into ``RawBook``s (the query LocalStore runs
    /// to load an ordered to-many), and returns the sum of their pages.
    func traverseBooks() throws -> (books: [RawBook], pages: Int) {
        let authorSelect = try prepare(#"SELECT "_object_id", "name" FROM "Author""#)
        defer { sqlite3_finalize(authorSelect) }
        guard sqlite3_step(authorSelect) == SQLITE_ROW, let authorID = uuid(authorSelect, 0) else { throw failure("SELECT Author") }
        let bookSelect = try prepare(#"""
            SELECT "_object_id", "title", "pages", "author", "author_position" FROM "Book" WHERE "author" = ? ORDER BY "author_position", rowid
            """#)
        defer { sqlite3_finalize(bookSelect) }
        bindID(bookSelect, 1, authorID)
        var books: [RawBook] = []
        while sqlite3_step(bookSelect) == SQLITE_ROW {
            guard let id = uuid(bookSelect, 0) else { throw failure("SELECT Book") }
            books.append(RawBook(id: id, title: string(bookSelect, 1), pages: Int(sqlite3_column_int64(bookSelect, 2)), authorID: uuid(bookSelect, 3)))
        }
        var pages = 0
        for book in books { pages += book.pages }
        return (books, pages)
    }

    // MARK: Identifiers and columns

    /// Binds `id`'s stored text form, written into a stack buffer (SQLite copies it).
    private func bindID(_ statement: OpaquePointer, _ index: Int32, _ id: UUID) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { text in
            UUIDText.write(id, to: text.baseAddress!)
            text.withMemoryRebound(to: CChar.self) { _ = sqlite3_bind_text(statement, index, $0.baseAddress, 36, transient) }
        }
    }

    private func string(_ statement: OpaquePointer, _ column: Int32) -> String {
        guard let text = sqlite3_column_text(statement, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
    }

    /// The identifier in a text column, parsed from SQLite's bytes without making a `String`.
    private func uuid(_ statement: OpaquePointer, _ column: Int32) -> UUID? {
        guard sqlite3_column_type(statement, column) != SQLITE_NULL, let text = sqlite3_column_text(statement, column) else { return nil }
        return UUID(storageTextBytes: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, column))))
    }
}

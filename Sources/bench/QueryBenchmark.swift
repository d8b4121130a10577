import Codecs
import CSQLite
import Foundation
import LocalStore
import SyncKit

// Query benchmark: LocalStore's `fetch(FetchDescriptor)` (predicate translation, SQL, object
// materialization into the identity map) against the same SQL run through the SQLite C API,
// reading the same columns into Swift values. Call `runQueryBenchmark(rows:)`.

@Entity final class BenchPerson {
    @Attribute(.unique) var email: String = ""
    var name: String = ""
    @Attribute(.indexed) var age: Int = 0
    var score: Double? = nil
    var born: Date? = nil
}

/// The Swift values the raw C API path reads per row: what a hand-written data layer would build.
struct RawPersonRow {
    var id: UUID
    var email: String
    var name: String
    var age: Int
    var score: Double?
    var born: Date?
}

/// One query measured both ways.
struct QueryBenchmarkResult: CustomStringConvertible {
    var name: String
    /// Rows returned per run.
    var rowsPerRun: Int
    var runs: Int
    var localStoreSeconds: Double
    var rawSeconds: Double

    var localStoreRowsPerSecond: Double { Double(rowsPerRun * runs) / localStoreSeconds }
    var rawRowsPerSecond: Double { Double(rowsPerRun * runs) / rawSeconds }
    /// LocalStore's speed as a fraction of the raw C API's (goal: at least 0.5).
    var ratio: Double { rawSeconds / localStoreSeconds }

    var description: String {
        func rate(_ value: Double) -> String { String(format: "%12.0f", value) }
        return "\(name.padding(toLength: 34, withPad: " ", startingAt: 0)) \(String(format: "%7d", rowsPerRun)) rows x \(String(format: "%4d", runs))  LocalStore \(rate(localStoreRowsPerSecond)) rows/s  raw \(rate(rawRowsPerSecond)) rows/s  ratio \(String(format: "%.2f", ratio))x"
    }
}

/// Builds a store of `rows` people in a temporary directory and times three queries:
/// a unique-index lookup (`email ==`), an indexed range (`age` within one year, ~1 % of rows)
/// and a full scan (`(score ?? 0) > 50` on a column with no index, ~half the rows).
func runQueryBenchmark(rows: Int = 100_000) throws -> [QueryBenchmarkResult] {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("localstore-query-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("bench.sqlite").path
    let store = try ObjectStore(path: path, entities: [BenchPerson.self])
    try populate(store, rows: rows)

    let raw = try RawQueryRunner(path: path)
    var results: [QueryBenchmarkResult] = []

    // Unique-index lookups: many small queries, so per-query overhead (translation, statement
    // lookup, binding) dominates.
    let lookups = 2_000
    let emails = (0..<lookups).map { "person\(($0 * 7_919) % rows)@example.org" }
    results.append(try measure(name: "indexed lookup (email ==)", rowsPerRun: 1, runs: lookups, repeats: 5, localStore: {
        let context = try store.makeContext()
        for email in emails {
            let found = try context.fetch(FetchDescriptor<BenchPerson>(predicate: #Predicate { $0.email == email }))
            precondition(found.count == 1)
        }
    }, raw: {
        for email in emails {
            let found = try raw.rows(#"SELECT "_object_id", "email", "name", "age", "score", "born" FROM "BenchPerson" WHERE "email" = ?"#, text: email)
            precondition(found.count == 1)
        }
    }))

    let low = 30, high = 31
    let rangeCount = try raw.rows(#"SELECT "_object_id", "email", "name", "age", "score", "born" FROM "BenchPerson" WHERE "age" >= ?1 AND "age" < ?2"#, integers: [low, high]).count
    results.append(try measure(name: "indexed range (age in 30..<31)", rowsPerRun: rangeCount, runs: 20, repeats: 3, localStore: {
        for _ in 0..<20 {
            let context = try store.makeContext()
            let found = try context.fetch(FetchDescriptor<BenchPerson>(predicate: #Predicate { $0.age >= low && $0.age < high }))
            precondition(found.count == rangeCount)
        }
    }, raw: {
        for _ in 0..<20 {
            let found = try raw.rows(#"SELECT "_object_id", "email", "name", "age", "score", "born" FROM "BenchPerson" WHERE "age" >= ?1 AND "age" < ?2"#, integers: [low, high])
            precondition(found.count == rangeCount)
        }
    }))

    let threshold = 50.0
    let scanSQL = #"SELECT "_object_id", "email", "name", "age", "score", "born" FROM "BenchPerson" WHERE COALESCE("score", ?1) > ?2"#
    let scanCount = try raw.rows(scanSQL, reals: [0, threshold]).count
    results.append(try measure(name: "full scan ((score ?? 0) > 50)", rowsPerRun: scanCount, runs: 1, repeats: 3, localStore: {
        let context = try store.makeContext()
        let found = try context.fetch(FetchDescriptor<BenchPerson>(predicate: #Predicate { ($0.score ?? 0) > threshold }))
        precondition(found.count == scanCount)
    }, raw: {
        let found = try raw.rows(scanSQL, reals: [0, threshold])
        precondition(found.count == scanCount)
    }))
    return results
}

/// Runs `runQueryBenchmark` and prints one line per query.
func printQueryBenchmark(rows: Int = 100_000) throws {
    print("Query benchmark over \(rows) rows (best of several runs; ratio = LocalStore speed / raw C API speed)")
    for result in try runQueryBenchmark(rows: rows) { print(result) }
}

private func populate(_ store: ObjectStore, rows: Int) throws {
    let context = try store.makeContext()
    var generator = SystemRandomNumberGenerator()
    for index in 0..<rows {
        let person = BenchPerson()
        person.email = "person\(index)@example.org"
        person.name = "Name \(index % 977)"
        person.age = Int.random(in: 0..<100, using: &generator)
        person.score = index % 10 == 0 ? nil : Double.random(in: 0..<100, using: &generator)
        person.born = Date(timeIntervalSince1970: Double(index) * 1_000)
        context.insert(person)
        if index % 10_000 == 9_999 { try context.save() }
    }
    try context.save()
}

/// Best wall time of `repeats` runs of each closure, alternating so both see the same cache state.
private func measure(
    name: String, rowsPerRun: Int, runs: Int, repeats: Int, localStore: () throws -> Void, raw: () throws -> Void
) throws -> QueryBenchmarkResult {
    func time(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
    try localStore()
    try raw()
    var best = (localStore: Double.infinity, raw: Double.infinity)
    for _ in 0..<repeats {
        best.localStore = min(best.localStore, try time(localStore))
        best.raw = min(best.raw, try time(raw))
    }
    return QueryBenchmarkResult(name: name, rowsPerRun: rowsPerRun, runs: runs, localStoreSeconds: best.localStore, rawSeconds: best.raw)
}

/// The baseline: prepared statements through the C API, rows read into `RawPersonRow`s.
private final class RawQueryRunner {
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]

    init(path: String) throws {
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            throw RawQueryError(message: "cannot open \(path)")
        }
        // The page cache LocalStore gives its connections (ObjectStore.configure).
        guard sqlite3_exec(handle, "PRAGMA cache_size = -16384", nil, nil, nil) == SQLITE_OK else {
            throw RawQueryError(message: String(cString: sqlite3_errmsg(handle)))
        }
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    func rows(_ sql: String, text: String) throws -> [RawPersonRow] {
        try run(sql) { statement in sqlite3_bind_text(statement, 1, text, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self)) }
    }

    func rows(_ sql: String, integers: [Int]) throws -> [RawPersonRow] {
        try run(sql) { statement in
            for (index, value) in integers.enumerated() { sqlite3_bind_int64(statement, Int32(index + 1), Int64(value)) }
        }
    }

    func rows(_ sql: String, reals: [Double]) throws -> [RawPersonRow] {
        try run(sql) { statement in
            for (index, value) in reals.enumerated() { sqlite3_bind_double(statement, Int32(index + 1), value) }
        }
    }

    private func run(_ sql: String, bind: (OpaquePointer) -> Void) throws -> [RawPersonRow] {
        let statement = try prepared(sql)
        sqlite3_reset(statement)
        bind(statement)
        var result: [RawPersonRow] = []
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { break }
            guard step == SQLITE_ROW else { throw RawQueryError(message: String(cString: sqlite3_errmsg(handle))) }
            // Parsed from SQLite's bytes with the identifier code LocalStore uses, not Foundation's
            // `UUID(uuidString:)` (sscanf on Linux).
            guard let bytes = sqlite3_column_text(statement, 0),
                  let id = UUID(storageTextBytes: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, 0)))) else {
                throw RawQueryError(message: "bad id")
            }
            result.append(RawPersonRow(
                id: id, email: text(statement, 1), name: text(statement, 2), age: Int(sqlite3_column_int64(statement, 3)),
                score: sqlite3_column_type(statement, 4) == SQLITE_NULL ? nil : sqlite3_column_double(statement, 4),
                born: sqlite3_column_type(statement, 5) == SQLITE_NULL ? nil : Date(timeIntervalSince1970: sqlite3_column_double(statement, 5))))
        }
        return result
    }

    private func text(_ statement: OpaquePointer, _ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
    }

    private func prepared(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw RawQueryError(message: String(cString: sqlite3_errmsg(handle)))
        }
        statements[sql] = statement
        return statement
    }
}

private struct RawQueryError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}


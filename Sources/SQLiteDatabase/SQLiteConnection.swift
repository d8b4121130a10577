import CSQLite
import Codecs
import Foundation

/// SQLite's "copy this buffer now" destructor, which the C macro SQLITE_TRANSIENT spells as -1.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
/// SQLITE_CONSTRAINT_UNIQUE, a C macro Swift does not import.
let sqliteConstraintUnique = SQLITE_CONSTRAINT | (8 << 8)

/// One SQLite connection with a cache of prepared statements.
///
/// Not thread-safe: a connection belongs to one context (or one store-level task) at a time.
package final class SQLiteConnection {
    let handle: OpaquePointer
    package let path: String
    private var statementCache: [String: SQLiteStatement] = [:]
    /// How long a statement waits for another connection's lock (see ``setBusyTimeout(milliseconds:)``).
    package private(set) var busyTimeoutMilliseconds: Int32
    /// The checkpointer SQLite calls after each commit (``WALCheckpointer/install(on:)``), held
    /// so that it lives as long as the connection that calls it.
    var walCommitObserver: WALCheckpointer?

    /// Process-wide SQLite settings, made once before the first connection opens (SQLite takes
    /// them only before it initializes): no memory statistics, so allocations on different
    /// threads do not share a mutex. Nothing in the product reads those statistics.
    private static let configured: Void = {
        _ = csqlite_disable_memory_statistics()
    }()

    /// Opens (or creates) the database at `path`. `readOnly` opens without write access;
    /// without `creatingIfMissing`, a missing file is an error rather than a new database.
    package init(path: String, readOnly: Bool = false, creatingIfMissing: Bool = true, busyTimeoutMilliseconds: Int32 = 5_000) throws {
        SQLiteConnection.configured
        self.path = path
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        var handle: OpaquePointer?
        var flags = (readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | (creatingIfMissing ? SQLITE_OPEN_CREATE : 0))) | SQLITE_OPEN_NOMUTEX
        // `file:` names are URIs (an in-memory store's `file:…?mode=memory&cache=shared`); plain
        // paths keep their meaning even when they contain `?` or `%`.
        if path.hasPrefix("file:") { flags |= SQLITE_OPEN_URI }
        let result = sqlite3_open_v2(path, &handle, flags, nil)
        guard result == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let handle { sqlite3_close_v2(handle) }
            throw SQLiteConnection.error(code: result, message: "cannot open the database: \(message)", sql: nil, path: path)
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
    }

    deinit {
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Adds the SQL function `name(value)` to this connection: a UUID's text (8-4-4-4-12 hex, as
    /// ``Foundation/UUID/storageText`` writes it) becomes its 16 bytes, and any other value comes
    /// back as it is. Migrations use it to rewrite identifier columns in place.
    package func addUUIDBytesFunction(named name: String) throws {
        let function: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, arguments in
            guard let value = arguments?[0] else { return sqlite3_result_null(context) }
            if sqlite3_value_type(value) == SQLITE_TEXT, let text = sqlite3_value_text(value),
               let uuid = UUIDText.parse(UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value)))) {
                withUnsafeBytes(of: uuid) { sqlite3_result_blob(context, $0.baseAddress, 16, sqliteTransient) }
            } else {
                sqlite3_result_value(context, value)
            }
        }
        let result = sqlite3_create_function_v2(handle, name, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, function, nil, nil, nil)
        guard result == SQLITE_OK else {
            throw SQLiteConnection.error(code: result, message: "cannot add the SQL function \(name): \(String(cString: sqlite3_errmsg(handle)))", sql: nil, path: path)
        }
    }

    /// Runs one or more statements that return no rows.
    package func execute(_ sql: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if result != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw SQLiteConnection.error(code: result, message: message, sql: sql, path: path)
        }
    }

    /// A prepared statement for `sql`, reused across calls (reset and with bindings cleared).
    package func cachedStatement(_ sql: String) throws -> SQLiteStatement {
        if let statement = statementCache[sql] {
            statement.reset()
            return statement
        }
        let statement = try SQLiteStatement(connection: self, sql: sql)
        statementCache[sql] = statement
        return statement
    }

    /// The virtual machine instructions each cached statement has run since the last call, which
    /// starts the counts again (statements that ran none are left out): how much work a piece of
    /// the engine did, by statement, the same on every machine.
    package func takeStatementSteps() -> [String: Int] {
        var steps: [String: Int] = [:]
        for (sql, statement) in statementCache {
            let count = statement.takeSteps()
            if count > 0 { steps[sql] = count }
        }
        return steps
    }

    /// Runs `sql` with `arguments` and returns every row.
    package func rows(_ sql: String, _ arguments: [SQLValue] = []) throws -> [[SQLValue]] {
        var rows: [[SQLValue]] = []
        try forEachRow(sql, arguments) { rows.append($0.row()) }
        return rows
    }

    /// Runs `sql` with `arguments` and hands `body` the statement at each row, to read the
    /// columns it needs without making an array of values per row.
    package func forEachRow(_ sql: String, _ arguments: [SQLValue] = [], _ body: (SQLiteStatement) throws -> Void) throws {
        let statement = try cachedStatement(sql)
        // A statement left mid-way (body threw) would keep a read transaction open.
        defer { statement.reset() }
        try statement.bind(arguments)
        while try statement.step() { try body(statement) }
    }

    /// Runs `sql` with `arguments`, ignoring any rows.
    package func run(_ sql: String, _ arguments: [SQLValue] = []) throws {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        while try statement.step() {}
    }

    /// How long a statement waits for another connection's lock before failing with `.locked`.
    package func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
        busyTimeoutMilliseconds = milliseconds
    }

    /// Runs `body` with statements waiting at most `milliseconds` for another connection's lock,
    /// then restores the timeout: for work that is worth doing only when nobody is in the way.
    package func withBusyTimeout<T>(milliseconds: Int32, _ body: () throws -> T) rethrows -> T {
        let previous = busyTimeoutMilliseconds
        setBusyTimeout(milliseconds: milliseconds)
        defer { setBusyTimeout(milliseconds: previous) }
        return try body()
    }

    /// Returns once the background checkpoints this connection's commits asked for have run
    /// (at once without a ``WALCheckpointer``): for work that needs the WAL to itself, such as a
    /// truncating checkpoint.
    package func waitForBackgroundCheckpoints() {
        walCommitObserver?.waitUntilIdle()
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    package var changes: Int { Int(sqlite3_changes(handle)) }

    /// The rowid of the row the last successful INSERT on this connection added.
    package var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// The declared type of `column` in `table` of the main database, upper-cased; `nil` when
    /// the table or the column does not exist.
    package func declaredType(of column: String, in table: String) throws -> String? {
        guard case .text(let type)? = try rows("SELECT upper(type) FROM pragma_table_info(?) WHERE name = ?", [.text(table), .text(column)]).first?.first
        else { return nil }
        return type
    }

    /// Whether a transaction is open.
    package var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Runs `body` in a transaction (`BEGIN IMMEDIATE`, so the write lock is taken up front):
    /// committed if it returns, rolled back if it throws.
    package func inTransaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Whether the main database cannot be written (a read-only file, directory or mount).
    package var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// The function SQLite calls to compare two strings under a collation: the registration's
    /// context, then each string's byte count and UTF-8 bytes; returns <0, 0 or >0.
    package typealias CollationComparator = @convention(c) (
        UnsafeMutableRawPointer?, Int32, UnsafeRawPointer?, Int32, UnsafeRawPointer?
    ) -> Int32

    /// Registers the UTF-8 collation `name` on this connection; SQLite passes `context` to `compare`.
    package func createCollation(named name: String, context: UnsafeMutableRawPointer?, compare: CollationComparator) throws {
        let result = sqlite3_create_collation_v2(handle, name, SQLITE_UTF8, context, compare, nil)
        if result != SQLITE_OK {
            throw Self.error(code: result, message: "cannot register the collation \(name)", sql: nil, path: path)
        }
    }

    /// The message of the last error on this connection.
    var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    /// Maps an SQLite result code to a ``StoreError`` with a code callers can match on.
    package static func error(code: Int32, message: String, sql: String?, path: String?) -> StoreError {
        let storeCode: StoreError.Code
        switch code & 0xFF {
        case SQLITE_NOTADB: storeCode = .notADatabase
        case SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_PERM: storeCode = code & 0xFF == SQLITE_CANTOPEN ? .sqlite : .readOnly
        case SQLITE_BUSY, SQLITE_LOCKED: storeCode = .locked
        case SQLITE_CORRUPT: storeCode = .corrupt
        case SQLITE_FULL: storeCode = .diskFull
        case SQLITE_CONSTRAINT where code == sqliteConstraintUnique: storeCode = .uniqueViolation
        default: storeCode = .sqlite
        }
        return StoreError(storeCode, message, sql: sql, sqliteCode: code, path: path)
    }
}

extension SQLiteConnection {
    /// Replaces the rows of every table of this connection's database with those of the
    /// database at `sourcePath`, in one write transaction that `whileLocked` runs in first.
    ///
    /// The write lock is taken before `whileLocked` runs and held until the new rows are
    /// committed, so no other connection, in this process or another, commits between what
    /// `whileLocked` read and the replacement: a caller that carries the last changes over into
    /// the source there loses none. A crash leaves the old contents or the new ones, and other
    /// connections to the file keep working and see the new contents at their next read.
    /// Tables only the source has are created (with their indexes); columns only this database
    /// has keep their defaults.
    package func replaceContents(withDatabaseAt sourcePath: String, whileLocked: () throws -> Void) throws {
        try run("ATTACH DATABASE ? AS replacement", [.text(sourcePath)])
        defer { try? execute("DETACH DATABASE replacement") }
        try inTransaction {
            try whileLocked()
            let replacement = try tables(in: "replacement")
            var own = try tables(in: "main")
            // SQLite makes its AUTOINCREMENT counters itself, with the first table that needs them.
            for (table, definition) in replacement where own[table] == nil && table != "sqlite_sequence" {
                for statement in definition.statements { try execute(statement) }
            }
            own = try tables(in: "main")
            for table in own.keys.sorted() {
                let quoted = SQLiteConnection.quoted(table)
                try execute("DELETE FROM main.\(quoted)")
                guard let source = replacement[table] else { continue }
                let columns = (own[table]?.columns ?? source.columns).filter(source.columns.contains)
                let list = columns.map(SQLiteConnection.quoted).joined(separator: ", ")
                try execute("INSERT INTO main.\(quoted) (\(list)) SELECT \(list) FROM replacement.\(quoted)")
            }
        }
    }

    /// The tables of the attached database `schema` (but SQLite's own, except the
    /// AUTOINCREMENT counters), with their columns and the statements that create them.
    private func tables(in schema: String) throws -> [String: (columns: [String], statements: [String])] {
        var tables: [String: (columns: [String], statements: [String])] = [:]
        for row in try rows("SELECT name, sql FROM \(schema).sqlite_master WHERE type = 'table' AND (name NOT LIKE 'sqlite\\_%' ESCAPE '\\' OR name = 'sqlite_sequence')") {
            guard case .text(let name) = row[0] else { continue }
            let columns = try rows("SELECT name FROM pragma_table_info(?, ?)", [.text(name), .text(schema)]).compactMap { row -> String? in
                if case .text(let column)? = row.first { column } else { nil }
            }
            var statements: [String] = []
            if case .text(let sql) = row[1] { statements.append(sql) }
            for index in try rows("SELECT sql FROM \(schema).sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", [.text(name)]) {
                if case .text(let sql) = index[0] { statements.append(sql) }
            }
            tables[name] = (columns, statements)
        }
        return tables
    }

    /// `name` as an SQL identifier.
    private static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

import Codecs
import CSQLite
import Foundation

/// A prepared statement: bind arguments, step through rows, read columns.
package final class SQLiteStatement {
    private let handle: OpaquePointer
    private unowned let connection: SQLiteConnection
    package let sql: String
    package let columnCount: Int

    init(connection: SQLiteConnection, sql: String) throws {
        var handle: OpaquePointer?
        let result = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard result == SQLITE_OK, let handle else {
            throw SQLiteConnection.error(code: result, message: connection.lastErrorMessage, sql: sql, path: connection.path)
        }
        self.handle = handle
        self.connection = connection
        self.sql = sql
        self.columnCount = Int(sqlite3_column_count(handle))
    }

    deinit { sqlite3_finalize(handle) }

    /// The virtual machine instructions this statement has run since the last call, which starts
    /// the count again: a measure of its work that does not depend on the machine.
    package func takeSteps() -> Int {
        Int(sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_VM_STEP, 1))
    }

    /// Resets the statement so it can run again, and clears its bindings.
    package func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds `values` to the parameters 1...n.
    package func bind(_ values: [SQLValue]) throws {
        // Indices rather than `enumerated()`: unoptimized builds (every test run) spend a
        // generic iterator's metadata lookups on each of the millions of values bound.
        for index in values.indices { try bind(values[index], at: Int32(index + 1)) }
    }

    /// Binds one value to the 1-based parameter `index`.
    package func bind(_ value: SQLValue, at index: Int32) throws {
        switch value {
        case .null: try check(sqlite3_bind_null(handle, index))
        case .integer(let number): try check(sqlite3_bind_int64(handle, index, number))
        case .real(let number): try check(sqlite3_bind_double(handle, index, number))
        case .text(let text):
            try bind(text: text, at: index)
        case .blob(let data):
            try data.withUnsafeBytes { try bindBlob($0, at: index) }
        }
    }

    /// Throws the connection's error for a result other than `SQLITE_OK`.
    private func check(_ result: Int32) throws {
        if result != SQLITE_OK {
            throw SQLiteConnection.error(code: result, message: connection.lastErrorMessage, sql: sql, path: connection.path)
        }
    }

    /// Binds `text` to the 1-based parameter `index`, with its length, from the string's own
    /// storage: passing the String as a C string would copy it into a temporary array first.
    package func bind(text: String, at index: Int32) throws {
        var text = text
        try text.withUTF8 { try bindText($0, at: index) }
    }

    /// Binds UTF-8 `bytes` as text to the 1-based parameter `index`, without making a `String` of
    /// them first (stored change sets are JSON texts of many megabytes).
    package func bindText(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int32) throws {
        try check(bytes.withMemoryRebound(to: CChar.self) { characters in
            // An empty string still needs a non-nil pointer, or SQLite stores NULL.
            guard let start = characters.baseAddress else { return sqlite3_bind_text(handle, index, "", 0, sqliteTransient) }
            return sqlite3_bind_text64(handle, index, start, sqlite3_uint64(characters.count), sqliteTransient, UInt8(SQLITE_UTF8))
        })
    }

    /// Binds `id`'s storage text (``Foundation/UUID/storageText``) to the 1-based parameter
    /// `index`, written on the stack: bulk inserts of sync metadata bind ids by the hundred thousand.
    package func bind(storageTextOf id: UUID, at index: Int32) throws {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { text in
            UUIDText.write(id, to: text.baseAddress!)
            try bindText(UnsafeBufferPointer(text), at: index)
        }
    }

    /// Binds `bytes` as a blob to the 1-based parameter `index`, straight from the caller's
    /// buffer (stored change sets are blobs of many megabytes).
    package func bindBlob(_ bytes: UnsafeRawBufferPointer, at index: Int32) throws {
        // A zero-length blob still needs a non-nil pointer, or SQLite stores NULL.
        try check(sqlite3_bind_blob64(handle, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), sqlite3_uint64(bytes.count), sqliteTransient))
    }

    /// Advances to the next row: `true` when a row is available, `false` when done.
    package func step() throws -> Bool {
        let result = sqlite3_step(handle)
        switch result {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let message = connection.lastErrorMessage
            sqlite3_reset(handle)
            throw SQLiteConnection.error(code: result, message: message, sql: sql, path: connection.path)
        }
    }

    /// The value of the 0-based column `index` of the current row.
    package func value(at index: Int) -> SQLValue {
        let column = Int32(index)
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT:
            return .text(text(at: index) ?? "")
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, column))
            guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: count))
        default: return .null
        }
    }

    /// Whether the 0-based column `index` of the current row is SQL `NULL`.
    package func isNull(at index: Int) -> Bool {
        sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL
    }

    /// The storage class of the 0-based column `index` of the current row.
    package func storageClass(at index: Int) -> SQLStorageClass {
        SQLStorageClass(code: sqlite3_column_type(handle, Int32(index)))
    }

    /// The 0-based column `index` of the current row as a real number (0 for NULL, as SQLite converts).
    package func real(at index: Int) -> Double {
        sqlite3_column_double(handle, Int32(index))
    }

    /// The 0-based column `index` of the current row as an integer (0 for NULL, as SQLite converts).
    package func integer(at index: Int) -> Int64 {
        sqlite3_column_int64(handle, Int32(index))
    }

    /// The 0-based column `index` of the current row when it holds text; `nil` for any other
    /// storage class.
    package func text(at index: Int) -> String? {
        let column = Int32(index)
        guard sqlite3_column_type(handle, column) == SQLITE_TEXT else { return nil }
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column))), as: UTF8.self)
    }

    /// The UTF-8 bytes of the 0-based text column `index` of the current row (empty if it is
    /// not text). They stay valid only until the statement steps or resets.
    package func textBytes(at index: Int) -> UnsafeBufferPointer<UInt8> {
        let column = Int32(index)
        guard sqlite3_column_type(handle, column) == SQLITE_TEXT, let text = sqlite3_column_text(handle, column) else {
            return UnsafeBufferPointer(start: nil, count: 0)
        }
        return UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column)))
    }

    /// The bytes of the 0-based blob column `index` of the current row (empty if it is not a
    /// blob). They stay valid only until the statement steps or resets.
    package func blobBytes(at index: Int) -> UnsafeRawBufferPointer {
        let column = Int32(index)
        guard sqlite3_column_type(handle, column) == SQLITE_BLOB, let bytes = sqlite3_column_blob(handle, column) else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, column)))
    }

    /// The 0-based column `index` of the current row parsed as a UUID's storage text, without
    /// making a `String` of it first; nil if it is not one.
    package func uuid(at index: Int) -> UUID? {
        UUID(storageTextBytes: textBytes(at: index))
    }

    /// All columns of the current row.
    package func row() -> [SQLValue] {
        var values: [SQLValue] = []
        readRow(into: &values)
        return values
    }

    /// Replaces `values` with the columns of the current row, reusing its storage: a loop over
    /// many rows allocates one array, not one per row.
    package func readRow(into values: inout [SQLValue]) {
        values.removeAll(keepingCapacity: true)
        values.reserveCapacity(columnCount)
        for index in 0..<columnCount { values.append(value(at: index)) }
    }
}

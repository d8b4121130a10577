import Foundation
import LocalStoreCore

/// Rows for one table, kept in memory and written with multi-row INSERT statements.
///
/// A save of many new objects records an ``ObjectMetadataTable`` row for each and an ``EdgeTable`` row for
/// each reference; one statement per hundred rows costs a fraction of one per row. The engine
/// writes them before anything reads the store (``MergeEngine/connection``).
struct PendingInserts {
    /// `INSERT [OR IGNORE] INTO table (columns)`, without VALUES.
    let insert: String
    let columnCount: Int
    private(set) var values: [SQLValue] = []

    /// Rows per statement: well under SQLite's limit of bound parameters (32,766 since 3.32).
    static let rowsPerStatement = 100

    init(_ insert: String, columnCount: Int) {
        self.insert = insert
        self.columnCount = columnCount
    }

    var isEmpty: Bool { values.isEmpty }

    mutating func append(_ row: [SQLValue]) {
        precondition(row.count == columnCount, "a row for \(insert) needs \(columnCount) values, not \(row.count)")
        values.append(contentsOf: row)
    }

    /// Writes every row kept and forgets them.
    mutating func flush(on connection: SQLiteConnection) throws {
        guard !values.isEmpty else { return }
        let rowSize = columnCount
        let rowsPerStatement = PendingInserts.rowsPerStatement
        var start = 0
        while start < values.count {
            let rows = min(rowsPerStatement, (values.count - start) / rowSize)
            let placeholders = "(" + Array(repeating: "?", count: rowSize).joined(separator: ", ") + ")"
            let sql = insert + " VALUES " + Array(repeating: placeholders, count: rows).joined(separator: ", ")
            try connection.run(sql, Array(values[start..<(start + rows * rowSize)]))
            start += rows * rowSize
        }
        values = []
    }
}

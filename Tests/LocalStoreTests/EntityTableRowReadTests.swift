import Foundation
@testable import LocalStoreCore
import TestSupport
import Testing

/// `EntityTable.forEachAttributeRow`: the rows a merge asks for, looked up a few hundred at a
/// time or, when it asks for a large share of the table, read in one pass over the table.
@Suite struct EntityTableRowReadTests {
    static let table = EntityTable(entity: "Note", table: "Note", attributeColumns: ["title", "size"], relationships: [])

    /// A store file whose `Note` table holds `count` rows, the row of `ids[i]` titled "note i" with size i.
    static func notes(_ count: Int, in file: TemporaryStoreFile) throws -> (SQLiteConnection, [UUID]) {
        let connection = try SQLiteConnection(path: file.path)
        try connection.execute(#"CREATE TABLE "Note" ("_object_id" TEXT PRIMARY KEY NOT NULL, "title" TEXT, "size" INTEGER)"#)
        let ids = (0..<count).map { _ in UUID() }
        try connection.inTransaction {
            for (index, id) in ids.enumerated() { try table.insertRow(id, attributeValues: [.text("note \(index)"), .integer(Int64(index))], on: connection) }
        }
        return (connection, ids)
    }

    /// Reads `wanted` and returns each row's attribute columns by identifier, failing on a row passed twice.
    static func read(_ wanted: [UUID], on connection: SQLiteConnection) throws -> [UUID: [SQLValue]] {
        var rows: [UUID: [SQLValue]] = [:]
        try table.forEachAttributeRow(wanted, on: connection) { id, row in
            #expect(rows[id] == nil, "\(id) passed twice")
            rows[id] = [row.value(at: 1), row.value(at: 2)]
        }
        return rows
    }

    /// Checks that `rows` are exactly those of `indices` of `ids`, with their values.
    static func expectRows(_ rows: [UUID: [SQLValue]], are indices: some Sequence<Int>, of ids: [UUID]) {
        let expected = Dictionary(uniqueKeysWithValues: indices.map { (ids[$0], [SQLValue.text("note \($0)"), .integer(Int64($0))]) })
        #expect(rows.count == expected.count)
        #expect(rows == expected)
    }

    /// A few thousand of a large table's rows: looked up in several statements of a few hundred.
    @Test func aSmallShareOfTheTableIsLookedUp() throws {
        let file = TemporaryStoreFile()
        let (connection, ids) = try Self.notes(12_000, in: file)
        let indices = Array(stride(from: 5, to: 12_000, by: 5))  // 2,399 rows, a fifth of the table
        // The first identifier asked again in a later statement, and one the table does not have:
        // still each row once.
        let rows = try Self.read(indices.map { ids[$0] } + [ids[5], UUID()], on: connection)
        Self.expectRows(rows, are: indices, of: ids)
    }

    /// Most of the table: read in one pass, and still only the rows asked for, each once.
    @Test func aLargeShareOfTheTableIsReadInOnePassAndTheRestSkipped() throws {
        let file = TemporaryStoreFile()
        let (connection, ids) = try Self.notes(3_000, in: file)
        let indices = Array(0..<2_500)
        // Asked twice and with an identifier the table does not have: still each row once.
        let rows = try Self.read(indices.map { ids[$0] } + [ids[7], UUID()], on: connection)
        Self.expectRows(rows, are: indices, of: ids)
    }
}

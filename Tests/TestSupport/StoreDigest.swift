import Foundation
import SQLiteDatabase

/// Every row of every entity and join table of the store file at `path`, as text, one line per
/// row: what tests compare to tell whether two stores hold the same graph.
///
/// With `columnsByName`, each row lists its columns in name order and the lines are sorted, so a
/// store whose migration appended columns reads like one created with them.
public func storeDigest(_ path: String, columnsByName: Bool = false) throws -> String {
    let connection = try SQLiteConnection(path: path)
    var lines: [String] = []
    let tables = try connection.rows(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite%' ORDER BY name")
    for table in tables {
        guard case .text(let name) = table[0] else { continue }
        var columns = "*"
        if columnsByName {
            columns = try connection.rows("SELECT name FROM pragma_table_info(?) ORDER BY name", [.text(name)])
                .compactMap { row in if case .text(let column) = row[0] { "\"\(column)\"" } else { nil } }
                .joined(separator: ", ")
        }
        for row in try connection.rows("SELECT \(columns) FROM \"\(name)\" ORDER BY 1, 2") {
            lines.append(name + ": " + row.map(\.description).joined(separator: " | "))
        }
    }
    return (columnsByName ? lines.sorted() : lines).joined(separator: "\n")
}

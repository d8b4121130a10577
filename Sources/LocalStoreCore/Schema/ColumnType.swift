/// The declared SQL type of a column, which also fixes the SQLite type affinity.
public enum ColumnType: String, Hashable, Sendable, Codable {
    case integer = "INTEGER"
    case real = "REAL"
    case text = "TEXT"
    case blob = "BLOB"
}

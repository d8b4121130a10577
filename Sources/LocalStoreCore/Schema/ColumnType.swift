/// The declared SQL type of a column, which also fixes the SQLite type affinity.
public enum ColumnType: String, Hashable, Sendable, Codable {
    /// `INTEGER`: booleans and integers.
    case integer = "INTEGER"
    /// `REAL`: floating-point numbers and dates.
    case real = "REAL"
    /// `TEXT`: strings, decimals, UUIDs, URLs and JSON.
    case text = "TEXT"
    /// `BLOB`: data.
    case blob = "BLOB"
}

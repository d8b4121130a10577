import Foundation

/// A value as SQLite stores it: one of its five storage classes.
///
/// Every attribute converts to and from one or more `SQLValue`s; the store binds them
/// to prepared statements and reads them back from result rows.
///
/// ```swift
/// let value: SQLValue = .text("Ada")
/// ```
public enum SQLValue: Hashable, Sendable, CustomStringConvertible {
    /// SQL `NULL`.
    case null
    /// A signed 64-bit integer.
    case integer(Int64)
    /// An IEEE 754 double.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes.
    case blob(Data)

    /// Whether this is SQL `NULL`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// A short, SQL-literal-like rendering used in error messages and logs.
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .text(let value): return "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let data): return "x'" + data.map { String(format: "%02x", $0) }.joined() + "'"
        }
    }

    /// The name of the storage class, as SQLite's `typeof()` reports it.
    public var storageClassName: String {
        switch self {
        case .null: return "null"
        case .integer: return "integer"
        case .real: return "real"
        case .text: return "text"
        case .blob: return "blob"
        }
    }
}

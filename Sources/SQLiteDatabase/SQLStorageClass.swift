import CSQLite

/// The storage class of a value in a row: which of SQLite's five kinds of value it is.
package enum SQLStorageClass: Sendable {
    case null
    case integer
    case real
    case text
    case blob

    /// The class of SQLite's datatype code (`SQLITE_INTEGER`, …).
    init(code: Int32) {
        switch code {
        case SQLITE_INTEGER: self = .integer
        case SQLITE_FLOAT: self = .real
        case SQLITE_TEXT: self = .text
        case SQLITE_BLOB: self = .blob
        default: self = .null
        }
    }
}

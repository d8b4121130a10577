import CPostgreSQL
import Foundation

/// One connection to a PostgreSQL server, through libpq.
///
/// Statements are sent with `PQexecParams`: parameters travel apart from the SQL, in text
/// format, so no value is ever spliced into a statement. Results come back in text format.
///
/// Not thread-safe: use a connection from one thread at a time (``PostgreSQLConnectionPool``
/// hands them out).
public final class PostgreSQLConnection {
    /// The URL the connection was opened with, without its password (for messages).
    public let displayURL: String
    private let handle: OpaquePointer

    /// Connects to `url` (`postgresql://user:password@host:port/database?...`, or any libpq
    /// connection string).
    ///
    /// - Throws: ``PostgreSQLError`` with libpq's message when the server cannot be reached or refuses.
    public init(url: String) throws {
        displayURL = PostgreSQLConnection.withoutPassword(url)
        guard let handle = PQconnectdb(url) else {
            throw PostgreSQLError(sql: "", sqlState: "", message: "libpq could not allocate a connection to \(displayURL)")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines)
            PQfinish(handle)
            throw PostgreSQLError(sql: "", sqlState: "", message: "cannot connect to \(displayURL): \(message)")
        }
        self.handle = handle
        // Notices (such as "relation already exists, skipping") are not errors; keep stderr quiet.
        _ = try execute("SET client_min_messages = warning")
    }

    deinit {
        PQfinish(handle)
    }

    /// Whether the connection is still usable (a failed server or network breaks it).
    public var isHealthy: Bool { PQstatus(handle) == CONNECTION_OK }

    /// Runs one statement with `parameters` (`$1`, `$2`, … in `sql`; `nil` is SQL `NULL`) and
    /// returns its rows, every value as text (`nil` for `NULL`).
    ///
    /// - Throws: ``PostgreSQLError`` carrying `sql`, the SQLSTATE and the server's message.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [String?] = []) throws -> PostgreSQLRows {
        let result = withParameterPointers(parameters) { values in
            PQexecParams(handle, sql, Int32(parameters.count), nil, values, nil, nil, 0)
        }
        guard let result else {
            throw PostgreSQLError(sql: sql, sqlState: "", message: String(cString: PQerrorMessage(handle)))
        }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK:
            return PostgreSQLRows(result)
        default:
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
            let message = String(cString: PQresultErrorMessage(result)).trimmingCharacters(in: .whitespacesAndNewlines)
            throw PostgreSQLError(sql: sql, sqlState: state, message: message)
        }
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws.
    public func inTransaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            // A broken connection cannot roll back; the server drops the transaction with it.
            _ = try? execute("ROLLBACK")
            throw error
        }
    }

    /// Calls `body` with C strings for `parameters`, valid only during the call.
    private func withParameterPointers<T>(_ parameters: [String?], _ body: ([UnsafePointer<CChar>?]) -> T) -> T {
        let copies = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { copies.forEach { free($0) } }
        return body(copies.map { $0.map { UnsafePointer($0) } })
    }

    /// `url` with the password between `:` and `@` replaced by `***`, for messages and logs.
    public static func withoutPassword(_ url: String) -> String {
        guard let scheme = url.range(of: "://"), let at = url[scheme.upperBound...].firstIndex(of: "@") else { return url }
        let credentials = url[scheme.upperBound..<at]
        guard let colon = credentials.firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }
}

/// The rows a statement returned, every value as text (`nil` for SQL `NULL`).
public struct PostgreSQLRows: Sendable, RandomAccessCollection {
    /// The rows, in the order the server sent them.
    public let rows: [[String?]]

    init(_ result: OpaquePointer) {
        let rowCount = PQntuples(result)
        let columnCount = PQnfields(result)
        rows = (0..<rowCount).map { row in
            (0..<columnCount).map { column in
                PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
            }
        }
    }

    /// The first row's first value, `nil` when there is no row or it is `NULL`.
    public var scalar: String? { rows.first?.first ?? nil }

    /// The index of the first row.
    public var startIndex: Int { rows.startIndex }
    /// The index past the last row.
    public var endIndex: Int { rows.endIndex }
    /// The row at `position`.
    public subscript(position: Int) -> [String?] { rows[position] }
}

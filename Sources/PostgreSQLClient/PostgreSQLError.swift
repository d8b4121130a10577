/// A failure of a PostgreSQL connection or statement, with what the server said.
public struct PostgreSQLError: Error, Sendable, CustomStringConvertible {
    /// The SQL that failed; empty for a connection failure.
    public var sql: String
    /// The five-character SQLSTATE (`23505`: unique violation, `40001`: serialization failure,
    /// `57P01`: the server shuts down); empty when the failure is not the server's answer.
    public var sqlState: String
    /// The server's or libpq's message.
    public var message: String

    /// An error with these fields.
    public init(sql: String, sqlState: String, message: String) {
        self.sql = sql
        self.sqlState = sqlState
        self.message = message
    }

    /// Whether the statement broke a unique constraint (SQLSTATE 23505).
    public var isUniqueViolation: Bool { sqlState == "23505" }

    /// The message, the SQLSTATE and the SQL, on one line.
    public var description: String {
        var text = "PostgreSQL: \(message)"
        if !sqlState.isEmpty { text += " (SQLSTATE \(sqlState))" }
        if !sql.isEmpty { text += " in: \(sql)" }
        return text
    }
}

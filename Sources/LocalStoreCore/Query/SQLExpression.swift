import SQLiteDatabase
/// A fragment of SQL with the values bound to its `?` placeholders, in order.
///
/// The predicate translator builds WHERE clauses from these so that every captured value
/// travels as a bound argument, never spliced into the SQL text.
///
/// ```swift
/// let name = SQLExpression("t0.\"name\" = ?", [.text("Ada")])
/// let both = name.and(SQLExpression("t0.\"score\" > ?", [.real(3)]))
/// // ((t0."name" = ?) AND (t0."score" > ?)), arguments ['Ada', 3.0]
/// ```
public struct SQLExpression: Hashable, Sendable, CustomStringConvertible {
    /// The SQL text, with `?` for each argument.
    public var sql: String
    /// The values bound to the placeholders, in order of appearance.
    public var arguments: [SQLValue]

    /// Creates a fragment from SQL text and its arguments.
    public init(_ sql: String, _ arguments: [SQLValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    /// A single bound value: `?`.
    public static func bound(_ value: SQLValue) -> SQLExpression { SQLExpression("?", [value]) }

    /// Joins fragments with `separator` between their texts, concatenating the arguments in order.
    public static func joined(_ parts: [SQLExpression], separator: String) -> SQLExpression {
        SQLExpression(parts.map(\.sql).joined(separator: separator), parts.flatMap(\.arguments))
    }

    /// `(self AND other)`.
    public func and(_ other: SQLExpression) -> SQLExpression { .joined([self, other], separator: " AND ").parenthesized }

    /// `(self OR other)`.
    public func or(_ other: SQLExpression) -> SQLExpression { .joined([self, other], separator: " OR ").parenthesized }

    /// The fragment in parentheses.
    public var parenthesized: SQLExpression { SQLExpression("(" + sql + ")", arguments) }

    /// Wraps the fragment's text, keeping its arguments: `wrapped("NOT ", "")` gives `NOT x`.
    public func wrapped(_ prefix: String, _ suffix: String) -> SQLExpression {
        SQLExpression(prefix + sql + suffix, arguments)
    }

    /// The SQL text followed by its arguments, for messages and debugging.
    public var description: String {
        arguments.isEmpty ? sql : sql + " -- " + arguments.map(\.description).joined(separator: ", ")
    }
}

/// Quotes an SQL identifier like `quoteIdentifier`, without Foundation's string search for
/// the common name that holds no quote: queries quote every column they touch, every time.
func quotedName(_ name: String) -> String {
    name.utf8.contains(UInt8(ascii: "\"")) ? quoteIdentifier(name) : "\"" + name + "\""
}

import Foundation

// String tests. SQLite compares text by its UTF-8 bytes (BINARY collation) and never ignores
// case here: `starts(with:)` and `contains` use `substr` and `instr`, not LIKE, whose matching
// is case-insensitive for ASCII and treats `%` and `_` as wildcards. Swift compares strings by
// grapheme clusters with canonical equivalence, so the two agree on text in one normalization
// form (e.g. all NFC, or ASCII); "é" written as e + combining accent and as one scalar differ in SQL.

extension PredicateExpressions.SequenceStartsWith: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        let subject = try translator.translate(base)
        let prefixTerm = try translator.translate(prefix)
        guard case .value(let text) = subject, text.codec.type == .string, text.codec.storage == .default else {
            throw translator.unsupported(self, "starts(with:) is supported on String attributes only")
        }
        let start = try translator.scalar(prefixTerm, like: subject, in: "starts(with:)")
        // The prefix appears twice in the SQL, so its arguments are bound twice.
        let sql = SQLExpression("(substr(\(text.sql.sql), 1, length(\(start.sql.sql))) = \(start.sql.sql))",
                                text.sql.arguments + start.sql.arguments + start.sql.arguments)
        return .value(ValueTerm(sql: sql, nullable: text.nullable || start.nullable,
                                codec: .generic(.bool, label: "starts(with:)")))
    }
}

extension PredicateExpressions.CollectionContainsCollection: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        let subject = try translator.translate(base)
        guard case .value(let text) = subject, text.codec.type == .string, text.codec.storage == .default else {
            throw translator.unsupported(self, "contains(_:) of a collection is supported on String attributes only")
        }
        return try translator.substring(of: text, translator.translate(other), in: "contains")
    }
}

extension PredicateTranslator {
    /// Whether `needle` occurs in `text`: `instr(text, needle) > 0` (an empty needle occurs in any text, as in Swift).
    func substring(of text: ValueTerm, _ needle: QueryTerm, in construct: String) throws -> QueryTerm {
        let search = try scalar(needle, like: .value(text), in: construct)
        let sql = SQLExpression.joined([text.sql, search.sql], separator: ", ").wrapped("(instr(", ") > 0)")
        return .value(ValueTerm(sql: sql, nullable: text.nullable || search.nullable, codec: .generic(.bool, label: construct)))
    }
}

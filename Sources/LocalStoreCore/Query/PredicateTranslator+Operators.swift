import Foundation
import SQLiteDatabase

// Comparison, logic, arithmetic, `??`, `?:`, ranges and `contains` of a value in a captured collection.

extension PredicateExpressions.Equal: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        try translator.equality(translator.translate(lhs), translator.translate(rhs), negated: false)
    }
}

extension PredicateExpressions.NotEqual: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        try translator.equality(translator.translate(lhs), translator.translate(rhs), negated: true)
    }
}

extension PredicateExpressions.Comparison: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        let symbol: String
        switch op {
        case .lessThan: symbol = "<"
        case .lessThanOrEqual: symbol = "<="
        case .greaterThan: symbol = ">"
        case .greaterThanOrEqual: symbol = ">="
        }
        return try translator.ordering(translator.translate(lhs), symbol, translator.translate(rhs))
    }
}

extension PredicateExpressions.Conjunction: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        let left = try translator.condition(translator.translate(lhs), in: "&&")
        let right = try translator.condition(translator.translate(rhs), in: "&&")
        return .value(ValueTerm(sql: left.and(right), nullable: false, codec: .generic(.bool, label: "&&")))
    }
}

extension PredicateExpressions.Disjunction: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        let left = try translator.condition(translator.translate(lhs), in: "||")
        let right = try translator.condition(translator.translate(rhs), in: "||")
        return .value(ValueTerm(sql: left.or(right), nullable: false, codec: .generic(.bool, label: "||")))
    }
}

extension PredicateExpressions.Negation: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        let inner = try translator.condition(translator.translate(wrapped), in: "!")
        return .value(ValueTerm(sql: inner.wrapped("(NOT ", ")"), nullable: false, codec: .generic(.bool, label: "!")))
    }
}

extension PredicateExpressions.Conditional: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        let condition = try translator.condition(translator.translate(test), in: "?:")
        let first = try translator.translate(trueBranch)
        let second = try translator.translate(falseBranch)
        let thenValue = try translator.scalar(first, like: second, in: "?:")
        let elseValue = try translator.scalar(second, like: first, in: "?:")
        let sql = SQLExpression.joined([condition, thenValue.sql, elseValue.sql], separator: " ELSE ")
        // joined puts ELSE between all three; rebuild with THEN after the test.
        let text = "(CASE WHEN \(condition.sql) THEN \(thenValue.sql.sql) ELSE \(elseValue.sql.sql) END)"
        return .value(ValueTerm(sql: SQLExpression(text, sql.arguments), nullable: thenValue.nullable || elseValue.nullable,
                                codec: thenValue.isColumn ? thenValue.codec : elseValue.codec))
    }
}

extension PredicateExpressions.Arithmetic: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        let symbol: String
        switch op {
        case .add: symbol = "+"
        case .subtract: symbol = "-"
        case .multiply: symbol = "*"
        }
        return try translator.arithmetic(translator.translate(lhs), symbol, translator.translate(rhs))
    }
}

extension PredicateExpressions.IntDivision: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        // Both operands are integers, so SQLite truncates toward zero as Swift does.
        try translator.arithmetic(translator.translate(lhs), "/", translator.translate(rhs))
    }
}

extension PredicateExpressions.IntRemainder: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        try translator.arithmetic(translator.translate(lhs), "%", translator.translate(rhs))
    }
}

extension PredicateExpressions.FloatDivision: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        try translator.arithmetic(translator.translate(lhs), "/", translator.translate(rhs))
    }
}

extension PredicateExpressions.UnaryMinus: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        let term = try translator.translate(wrapped)
        if case .constant = term { return try translator.arithmetic(.constant(0), "-", term) }
        var value = try translator.numeric(translator.scalar(term, like: nil, in: "unary -"), in: "unary -")
        value.sql = value.sql.wrapped("(- ", ")")
        value.isColumn = false
        return .value(value)
    }
}

extension PredicateExpressions.NilCoalesce: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        let left = try translator.translate(lhs)
        let right = try translator.translate(rhs)
        switch left {
        case .null: return right
        case .constant: return left
        default: break
        }
        let first = try translator.scalar(left, like: right, in: "??")
        let second = try translator.scalar(right, like: left, in: "??")
        return .value(ValueTerm(sql: SQLExpression.joined([first.sql, second.sql], separator: ", ").wrapped("COALESCE(", ")"),
                                nullable: second.nullable, codec: first.codec))
    }
}

extension PredicateExpressions.Range: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        try .range(lower: translator.translate(lower), upper: translator.translate(upper), closed: false)
    }
}

extension PredicateExpressions.ClosedRange: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        try .range(lower: translator.translate(lower), upper: translator.translate(upper), closed: true)
    }
}

/// Lets a captured `Range` or `ClosedRange` of any bound type give its bounds.
protocol RangeBounds {
    var rangeBounds: (lower: Any, upper: Any, closed: Bool) { get }
}

extension Range: RangeBounds {
    var rangeBounds: (lower: Any, upper: Any, closed: Bool) { (lowerBound, upperBound, false) }
}

extension ClosedRange: RangeBounds {
    var rangeBounds: (lower: Any, upper: Any, closed: Bool) { (lowerBound, upperBound, true) }
}

extension PredicateExpressions.RangeExpressionContains: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        var rangeTerm = try translator.translate(range)
        if case .constant(let constant) = rangeTerm {
            guard let bounds = (constant as? any RangeBounds)?.rangeBounds else {
                throw translator.unsupported(self, "only Range and ClosedRange can be searched, not \(type(of: constant))")
            }
            rangeTerm = .range(lower: .constant(bounds.lower), upper: .constant(bounds.upper), closed: bounds.closed)
        }
        guard case .range(let lower, let upper, let closed) = rangeTerm else {
            throw translator.unsupported(self, "the range must be a literal or captured Range or ClosedRange")
        }
        let value = try translator.translate(element)
        guard case .value(let ordered) = try translator.ordering(lower, "<=", value),
              case .value(let below) = try translator.ordering(value, closed ? "<=" : "<", upper) else {
            throw translator.unsupported(self, "the bounds are not comparable values")
        }
        return .value(ValueTerm(sql: ordered.sql.and(below.sql), nullable: false, codec: .generic(.bool, label: "contains")))
    }
}

extension PredicateExpressions.SequenceContains: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        let collection = try translator.translate(sequence)
        let value = try translator.translate(element)
        switch collection {
        case .constant(let constant):
            return try translator.membership(of: value, in: constant, expression: self)
        case .members(let members):
            let candidate = try translator.scalar(value, like: .object(members.owner), in: "contains")
            return try translator.exists(members) { member in
                SQLExpression(translator.identity(of: member) + " = ").joinedWith(candidate.sql)
            }
        case .value(let text) where text.codec.type == .string:
            // `string.contains(character)`
            return try translator.substring(of: text, value, in: "contains")
        default:
            throw translator.unsupported(self, "contains(_:) needs a captured collection, a to-many relationship or a string")
        }
    }
}

extension SQLExpression {
    /// The two fragments one after the other.
    func joinedWith(_ other: SQLExpression) -> SQLExpression { .joined([self, other], separator: "") }
}

extension PredicateTranslator {
    /// `==` (or `!=`): SQL `=` between values that cannot be NULL, `IS` otherwise, since Swift's
    /// `nil == nil` is true. Compositions compare field by field.
    func equality(_ left: QueryTerm, _ right: QueryTerm, negated: Bool) throws -> QueryTerm {
        let construct = negated ? "!=" : "=="
        let pairs: [(ValueTerm, ValueTerm)]
        switch (left, right) {
        case (.composition(let composition), let other), (let other, .composition(let composition)):
            let columns = compositionColumns(composition)
            let others: [ValueTerm]
            switch other {
            case .composition(let second):
                others = compositionColumns(second)
            case .null:
                others = columns.map { ValueTerm(sql: SQLExpression("NULL"), nullable: true, codec: $0.codec) }
            case .constant(let constant):
                guard let values = composition.attribute.sqlValues(for: constant), values.count == columns.count else {
                    throw notAValue(other, in: "\(construct) with \(composition.object.mapping.name).\(composition.attribute.name)")
                }
                others = zip(values, columns).map { ValueTerm(sql: .bound($0), nullable: $0.isNull, codec: $1.codec) }
            default:
                throw notAValue(other, in: "\(construct) with a composition")
            }
            pairs = Array(zip(columns, others))
        default:
            pairs = [(try scalar(left, like: right, in: construct), try scalar(right, like: left, in: construct))]
        }
        let conditions = pairs.map { first, second in
            let canBeNull = first.nullable || second.nullable
            let symbol = canBeNull ? (negated ? " IS NOT " : " IS ") : (negated ? " <> " : " = ")
            return SQLExpression.joined([first.sql, second.sql], separator: symbol).parenthesized
        }
        // A composition differs when any field differs.
        let sql = SQLExpression.joined(conditions, separator: negated ? " OR " : " AND ")
        return .value(ValueTerm(sql: conditions.count == 1 ? sql : sql.parenthesized, nullable: false, codec: .generic(.bool, label: construct)))
    }

    func compositionColumns(_ composition: CompositionTerm) -> [ValueTerm] {
        composition.attribute.compositionFields.map { field in
            ValueTerm(sql: SQLExpression(column(field.column.name, of: composition.object)),
                      nullable: composition.nullable || field.column.isNullable,
                      codec: .of(field, attribute: composition.attribute, entity: composition.object.mapping.name), isColumn: true)
        }
    }

    /// `<`, `<=`, `>`, `>=` on values SQLite orders the way Swift does.
    func ordering(_ left: QueryTerm, _ symbol: String, _ right: QueryTerm) throws -> QueryTerm {
        var first = try scalar(left, like: right, in: symbol)
        var second = try scalar(right, like: left, in: symbol)
        for value in [first, second] {
            switch value.codec.storage {
            case .raw:
                throw StoreError(.unsupportedQuery, "\(value.codec.label) is stored as its raw value, whose order need not be the enum's own; compare with == or !=", entity: root.name)
            case .codable, .composition:
                throw StoreError(.unsupportedQuery, "\(value.codec.label) is stored as JSON, which SQL cannot order", entity: root.name)
            case .default:
                break
            }
        }
        if first.codec.type == .decimal || second.codec.type == .decimal {
            // Decimals are stored as text; comparing them as REAL is exact up to about 15 significant digits.
            first.sql = first.sql.wrapped("CAST(", " AS REAL)")
            second.sql = second.sql.wrapped("CAST(", " AS REAL)")
        }
        let sql = SQLExpression.joined([first.sql, second.sql], separator: " \(symbol) ").parenthesized
        return .value(ValueTerm(sql: sql, nullable: first.nullable || second.nullable, codec: .generic(.bool, label: symbol)))
    }

    /// `+ - * / %` on numbers. Unlike Swift, SQLite does not trap: integer overflow turns the
    /// result into a REAL and division by zero gives NULL (so the row does not match).
    func arithmetic(_ left: QueryTerm, _ symbol: String, _ right: QueryTerm) throws -> QueryTerm {
        if case .constant(let a) = left, case .constant(let b) = right, let folded = fold(a, symbol, b) {
            return .constant(folded)
        }
        let first = try numeric(scalar(left, like: right, in: symbol), in: symbol)
        let second = try numeric(scalar(right, like: left, in: symbol), in: symbol)
        // A captured operand was encoded with the other operand's codec, so the first one speaks for both.
        let codec = first.codec
        return .value(ValueTerm(sql: SQLExpression.joined([first.sql, second.sql], separator: " \(symbol) ").parenthesized,
                                nullable: first.nullable || second.nullable,
                                codec: ValueCodec(type: codec.type, storage: .default, encode: codec.encode, label: codec.label)))
    }

    private func fold(_ a: Any, _ symbol: String, _ b: Any) -> Any? {
        func apply<T: BinaryInteger>(_ x: T, _ y: T) -> Any? {
            switch symbol {
            case "+": return x + y
            case "-": return x - y
            case "*": return x * y
            default: return nil
            }
        }
        if let x = a as? Int, let y = b as? Int { return apply(x, y) }
        if let x = a as? Double, let y = b as? Double {
            switch symbol {
            case "+": return x + y
            case "-": return x - y
            case "*": return x * y
            case "/": return x / y
            default: return nil
            }
        }
        return nil
    }

    func numeric(_ value: ValueTerm, in construct: String) throws -> ValueTerm {
        let numbers: [AttributeType?] = [nil, .int, .int16, .int32, .int64, .float, .double]
        guard value.codec.storage == .default, numbers.contains(value.codec.type) else {
            throw StoreError(.unsupportedQuery, "\(value.codec.label) is not a number SQLite computes with like Swift, so it cannot be used in \(construct)", entity: root.name)
        }
        return value
    }

    /// `collection.contains(value)` for a captured collection: `IN (…)`.
    func membership(of value: QueryTerm, in collection: Any, expression: Any) throws -> QueryTerm {
        guard let sequence = collection as? any Sequence else {
            throw unsupported(expression, "\(type(of: collection)) is not a sequence")
        }
        func elements<S: Sequence>(_ sequence: S) -> [Any] { sequence.map { $0 as Any } }
        let all = elements(sequence)
        let probe = try scalar(value, like: nil, in: "contains")
        var encoded: [SQLValue] = []
        var includesNil = false
        for element in all {
            guard let sqlValue = probe.codec.sqlValue(for: element) else {
                throw StoreError(.unsupportedQuery, "an element of type \(type(of: element)) cannot be compared with \(probe.codec.label)", entity: root.name)
            }
            if sqlValue.isNull { includesNil = true } else { encoded.append(sqlValue) }
        }
        var parts: [SQLExpression] = []
        if !encoded.isEmpty {
            let placeholders = Array(repeating: "?", count: encoded.count).joined(separator: ", ")
            parts.append(SQLExpression("IN (\(placeholders))", encoded).wrappedAfter(probe.sql))
        }
        if includesNil { parts.append(probe.sql.wrapped("(", " IS NULL)")) }
        let sql = parts.isEmpty ? SQLExpression("0") : SQLExpression.joined(parts, separator: " OR ").parenthesized
        return .value(ValueTerm(sql: sql, nullable: false, codec: .generic(.bool, label: "contains")))
    }
}

extension SQLExpression {
    /// `subject self`, e.g. `x IN (?, ?)` from `IN (?, ?)` and `x`.
    func wrappedAfter(_ subject: SQLExpression) -> SQLExpression {
        SQLExpression.joined([subject, self], separator: " ").parenthesized
    }
}

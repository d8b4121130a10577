import Codecs
import Foundation
import SQLiteDatabase

/// A `PredicateExpressions` node LocalStore knows how to express in SQL.
///
/// Each supported Foundation expression type conforms in the `PredicateTranslator+…` files;
/// a node whose type does not conform makes the translation throw, naming the type.
protocol SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm
}

/// What a predicate sub-expression stands for while it is being translated.
indirect enum QueryTerm {
    /// A scalar SQL value: a column, a computed value or a condition.
    case value(ValueTerm)
    /// A value captured by the predicate, encoded once the column it meets is known
    /// (a `.raw` enum becomes its raw value, a Date seconds since 1970, …).
    case constant(Any)
    /// `nil`.
    case null
    /// A row of an entity: the predicate's input, or the target of a to-one relationship.
    case object(ObjectTerm)
    /// The members of a to-many relationship (optionally filtered).
    case members(MembersTerm)
    /// A `.composition` attribute: one column per field.
    case composition(CompositionTerm)
    /// `lower..<upper` or `lower...upper`, for `contains`.
    case range(lower: QueryTerm, upper: QueryTerm, closed: Bool)
}

/// A scalar SQL value and how Swift values compared with it are encoded.
struct ValueTerm {
    var sql: SQLExpression
    /// Whether the SQL value can be NULL (decides between `=` and `IS`).
    var nullable: Bool
    var codec: ValueCodec
    /// Whether `sql` is a bare column, which is NULL whenever the row it belongs to is missing.
    var isColumn = false
}

/// Encodes Swift values the way one column stores them.
struct ValueCodec {
    /// The primitive type, when known.
    var type: AttributeType?
    var storage: AttributeStorage
    /// The SQL value of a Swift value of the column's type; `nil` for a value of another type.
    var encode: (Any) -> SQLValue?
    /// Names the value in messages, e.g. `HandPerson.score`.
    var label: String

    static func of(_ attribute: AttributeDescription, entity: String) -> ValueCodec {
        ValueCodec(type: attribute.columns.first?.type, storage: attribute.storage,
                   encode: { attribute.sqlValues(for: $0)?.first }, label: "\(entity).\(attribute.name)")
    }

    static func of(_ field: CompositionFieldDescription, attribute: AttributeDescription, entity: String) -> ValueCodec {
        ValueCodec(type: field.column.type, storage: .default, encode: { field.sqlValue(for: $0) },
                   label: "\(entity).\(attribute.name).\(field.name)")
    }

    /// For values with no column of their own (results of arithmetic on constants, conditions).
    static func generic(_ type: AttributeType?, label: String) -> ValueCodec {
        ValueCodec(type: type, storage: .default, encode: { _ in nil }, label: label)
    }

    /// The identifier of an entity's objects.
    static func identifier(_ entity: String) -> ValueCodec {
        ValueCodec(type: .uuid, storage: .default, encode: { value in
            if let object = value as? any PersistentEntity { return .text(object.objectID.storageText) }
            if let id = value as? UUID { return .text(id.storageText) }
            return nil
        }, label: "\(entity).objectID")
    }

    /// Encodes `value` for this column, falling back on the type's own SQL value when the
    /// column's coder does not take it (e.g. an `Int` literal compared with a computed value).
    func sqlValue(for value: Any) -> SQLValue? {
        if let encoded = encode(value) { return encoded }
        // JSON text is the only encoding of a `.codable` value that can match its column.
        guard storage != .codable else { return nil }
        return ValueCodec.encodeAny(value)
    }

    /// The SQL value of a Swift value that is an ``AttributeValue``, an entity (its identifier)
    /// or a `RawRepresentable` with such a raw value; `nil` otherwise.
    static func encodeAny(_ value: Any) -> SQLValue? {
        if isNil(value) { return .null }
        if let attributeValue = value as? any AttributeValue { return attributeValue.sqlValue }
        if let object = value as? any PersistentEntity { return .text(object.objectID.storageText) }
        if let representable = value as? any RawRepresentable, let raw = representable.rawValue as? any AttributeValue {
            return raw.sqlValue
        }
        if let character = value as? Character { return .text(String(character)) }
        return nil
    }
}

/// Lets `Any` values be tested for `nil` at any depth of optionality.
protocol OptionalValue {
    var isNilValue: Bool { get }
    /// The wrapped value, `nil` when there is none.
    var wrappedValue: Any? { get }
}

extension Optional: OptionalValue {
    var isNilValue: Bool {
        switch self {
        case .none: return true
        case .some(let wrapped): return (wrapped as? any OptionalValue)?.isNilValue ?? false
        }
    }

    var wrappedValue: Any? {
        switch self {
        case .none: return nil
        case .some(let wrapped): return wrapped
        }
    }
}

func isNil(_ value: Any) -> Bool { (value as? any OptionalValue)?.isNilValue ?? false }

/// A row of an entity in the query.
struct ObjectTerm {
    /// How the row is reached.
    indirect enum Source {
        /// A table alias already in the FROM clause (the predicate input, a subquery member).
        case alias(String)
        /// The target of a to-one relationship of `owner`, LEFT JOINed the first time a column is needed.
        case toOne(owner: ObjectTerm, relationship: RelationshipMapping, column: String)
    }

    let mapping: EntityMapping
    /// The FROM clause the row's joins go to.
    let scope: QueryScope
    let source: Source
    /// Whether the row may be missing (a to-one that is `nil`).
    var nullable: Bool
}

/// The members of a to-many relationship, with the filters applied to them so far.
struct MembersTerm {
    let owner: ObjectTerm
    let relationship: RelationshipMapping
    let target: EntityMapping
    /// `filter { … }` closures: the member variable and the test, translated inside the subquery.
    var filters: [(variable: PredicateExpressions.VariableID, test: Any)] = []
}

/// A `.composition` attribute of a row.
struct CompositionTerm {
    let object: ObjectTerm
    let attribute: AttributeDescription
    var nullable: Bool
}

/// The FROM clause of one query level: the statement itself or an EXISTS / COUNT subquery.
final class QueryScope {
    private(set) var joins: [String] = []
    private var aliasByPath: [String: String] = [:]

    func join(path: String, make: () -> (alias: String, clause: String)) -> String {
        if let alias = aliasByPath[path] { return alias }
        let (alias, clause) = make()
        aliasByPath[path] = alias
        joins.append(clause)
        return alias
    }

    var joinClause: String { joins.map { " " + $0 }.joined() }
}

/// Translates a Foundation `Predicate` over an entity into an SQL condition.
///
/// The expression tree is walked node by node: key paths are looked up in the entity's
/// schema (the table `@Entity` generates, so `persistentName` is honoured), to-one paths
/// become LEFT JOINs and to-many quantifiers correlated subqueries. Captured values are
/// bound as arguments, encoded like the column they are compared with.
final class PredicateTranslator {
    let schema: StoreSchema
    let root: EntityMapping
    let rootScope = QueryScope()
    private var aliasCount = 0
    private var bindings: [PredicateExpressions.VariableID: QueryTerm] = [:]

    init(schema: StoreSchema, root: EntityMapping) {
        self.schema = schema
        self.root = root
    }

    static let rootAlias = "t0"

    var rootObject: ObjectTerm {
        ObjectTerm(mapping: root, scope: rootScope, source: .alias(PredicateTranslator.rootAlias), nullable: false)
    }

    /// `"Entity" AS t0` followed by the joins the translation needed.
    var fromClause: String { quotedName(root.table) + " AS " + PredicateTranslator.rootAlias + rootScope.joinClause }

    /// The WHERE condition for `predicate`.
    func condition<Entity: PersistentEntity>(for predicate: Predicate<Entity>) throws -> SQLExpression {
        bindings[predicate.variable.key] = .object(rootObject)
        return try condition(translate(predicate.expression), in: "the predicate")
    }

    // MARK: Walking

    func translate(_ expression: Any) throws -> QueryTerm {
        guard let translatable = expression as? any SQLTranslatable else {
            throw unsupported(expression, "it has no SQL translation")
        }
        return try translatable.translate(in: self)
    }

    func term(for variable: PredicateExpressions.VariableID) throws -> QueryTerm {
        guard let term = bindings[variable] else {
            throw StoreError(.unsupportedQuery, "the predicate uses a variable that is not its input nor a closure parameter", entity: root.name)
        }
        return term
    }

    /// Translates `body` with `variable` standing for `term` (a closure parameter).
    func with<T>(_ variable: PredicateExpressions.VariableID, boundTo term: QueryTerm, _ body: () throws -> T) rethrows -> T {
        let previous = bindings[variable]
        bindings[variable] = term
        defer { bindings[variable] = previous }
        return try body()
    }

    func makeAlias() -> String {
        aliasCount += 1
        return "t\(aliasCount)"
    }

    // MARK: Rows

    /// The alias of `object`'s row, joining it in on first use.
    func alias(of object: ObjectTerm) -> String {
        switch object.source {
        case .alias(let alias):
            return alias
        case .toOne(let owner, let relationship, let column):
            let ownerAlias = alias(of: owner)
            return owner.scope.join(path: ownerAlias + "." + relationship.description.name) {
                let alias = makeAlias()
                let clause = "LEFT JOIN \(quotedName(object.mapping.table)) AS \(alias) ON \(alias).\(EntityTable.quotedIdentifierColumn) = \(ownerAlias).\(quotedName(column))"
                return (alias, clause)
            }
        }
    }

    /// SQL for the identifier of `object`'s row; a to-one uses its foreign key, so no join is needed.
    func identity(of object: ObjectTerm) -> String {
        switch object.source {
        case .alias(let alias): return alias + "." + EntityTable.quotedIdentifierColumn
        case .toOne(let owner, _, let column): return alias(of: owner) + "." + quotedName(column)
        }
    }

    func column(_ name: String, of object: ObjectTerm) -> String {
        alias(of: object) + "." + quotedName(name)
    }

    /// SQL that is true when the optional `term` is `nil`.
    func isNilCondition(_ term: QueryTerm) throws -> SQLExpression {
        switch term {
        case .object(let object):
            return SQLExpression(identity(of: object) + " IS NULL")
        case .composition(let composition):
            let columns = composition.attribute.columns.map { column($0.name, of: composition.object) + " IS NULL" }
            return SQLExpression("(" + columns.joined(separator: " AND ") + ")")
        case .value(let value):
            return value.sql.wrapped("(", " IS NULL)")
        case .null:
            return SQLExpression("1")
        case .constant(let constant):
            return SQLExpression(isNil(constant) ? "1" : "0")
        case .members, .range:
            throw StoreError(.unsupportedQuery, "a relationship or range cannot be compared with nil", entity: root.name)
        }
    }

    // MARK: Conversions

    /// The term as a condition (an SQL boolean).
    func condition(_ term: QueryTerm, in construct: String) throws -> SQLExpression {
        switch term {
        case .value(let value):
            return value.sql
        case .constant(let constant):
            guard let flag = constant as? Bool else { throw notAValue(term, in: construct) }
            return SQLExpression(flag ? "1" : "0")
        default:
            throw notAValue(term, in: construct)
        }
    }

    /// The term as one SQL value; captured constants are encoded like `partner` (the other operand).
    func scalar(_ term: QueryTerm, like partner: QueryTerm?, in construct: String) throws -> ValueTerm {
        switch term {
        case .value(let value):
            return value
        case .object(let object):
            return ValueTerm(sql: SQLExpression(identity(of: object)), nullable: object.nullable,
                             codec: .identifier(object.mapping.name), isColumn: true)
        case .null:
            let codec = partner.flatMap(codec(of:)) ?? .generic(nil, label: "nil")
            return ValueTerm(sql: SQLExpression("NULL"), nullable: true, codec: codec)
        case .constant(let constant):
            let codec = partner.flatMap(codec(of:)) ?? .generic(nil, label: "a captured value")
            guard let encoded = codec.sqlValue(for: constant) else {
                throw StoreError(
                    .unsupportedQuery,
                    "a captured value of type \(type(of: constant)) cannot be converted to SQL for \(construct) with \(codec.label)",
                    entity: root.name)
            }
            return ValueTerm(sql: .bound(encoded), nullable: encoded.isNull, codec: codec)
        case .members, .composition, .range:
            throw notAValue(term, in: construct)
        }
    }

    func codec(of term: QueryTerm) -> ValueCodec? {
        switch term {
        case .value(let value): return value.codec
        case .object(let object): return .identifier(object.mapping.name)
        default: return nil
        }
    }

    // MARK: Errors

    func notAValue(_ term: QueryTerm, in construct: String) -> StoreError {
        let what: String
        switch term {
        case .members(let members): what = "the to-many relationship \(members.owner.mapping.name).\(members.relationship.description.name)"
        case .composition(let composition): what = "the composition \(composition.object.mapping.name).\(composition.attribute.name) as a whole"
        case .object(let object): what = "a \(object.mapping.name) object"
        case .range: what = "a range"
        case .constant(let constant): what = "a captured value of type \(type(of: constant))"
        case .null: what = "nil"
        case .value(let value): what = value.codec.label
        }
        return StoreError(.unsupportedQuery, "\(what) cannot be used in \(construct)", entity: root.name)
    }

    /// An error naming the expression type (`PredicateExpressions.SequenceAllSatisfy`) and why.
    func unsupported(_ expression: Any, _ reason: String) -> StoreError {
        StoreError(.unsupportedQuery, "\(PredicateTranslator.constructName(of: expression)) cannot be translated to SQL: \(reason)",
                   entity: root.name)
    }

    /// `PredicateExpressions.Equal` for a value of type `PredicateExpressions.Equal<…>`.
    static func constructName(of expression: Any) -> String {
        var name = String(reflecting: type(of: expression))
        if let generic = name.firstIndex(of: "<") { name = String(name[..<generic]) }
        if let range = name.range(of: "PredicateExpressions.") { name = String(name[range.lowerBound...]) }
        return name
    }
}

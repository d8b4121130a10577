import Foundation
import SQLiteDatabase

/// Turns `SortDescriptor`s into an ORDER BY clause that orders like Foundation does.
///
/// - Optional values: `nil` first in `.forward` order and last in `.reverse`, as SQLite
///   orders NULL with ASC and DESC.
/// - Strings: `SortDescriptor(\.name)` compares with Swift's `<`, which SQLite's BINARY
///   collation matches on text in one normalization form (see the string notes of the
///   translator). A descriptor made with `comparator: .lexical` sorts through an SQLite
///   collation that calls that very comparator.
/// - `SortDescriptor(\.objectID)` sorts by the identifier column, in `UUID`'s own order.
/// - `.raw` attributes sort by their stored raw value (so an enum orders by its raw values).
/// - A field of a non-optional `.composition` attribute (`\.location.latitude`) sorts by the
///   field's column.
/// - An attribute of a to-one relationship's target (`\.author?.name`) sorts through a LEFT
///   JOIN, so objects without a target come first in `.forward` order.
/// - Ties keep storage order: `rowid` is always the last key.
enum SortTranslation {
    static func orderBy<Entity: PersistentEntity>(
        _ descriptors: [SortDescriptor<Entity>], translator: PredicateTranslator
    ) throws -> String {
        var keys: [String] = []
        for descriptor in descriptors {
            keys.append(try key(descriptor, translator: translator))
        }
        keys.append(PredicateTranslator.rootAlias + ".rowid")
        return keys.joined(separator: ", ")
    }

    private static func key<Entity: PersistentEntity>(
        _ descriptor: SortDescriptor<Entity>, translator: PredicateTranslator
    ) throws -> String {
        let root = translator.rootObject
        let entity = root.mapping.description
        let direction = descriptor.order == .reverse ? " DESC" : " ASC"
        guard let keyPath = descriptor.keyPath else {
            throw StoreError(.unsupportedQuery, "a SortDescriptor without a key path cannot be translated to SQL", entity: entity.name)
        }
        if keyPath == \Entity.objectID as PartialKeyPath<Entity> {
            // Identifiers are stored as upper-case `uuidString`s, whose text order is UUID's byte order.
            return translator.identity(of: root) + direction
        }
        if let attribute = entity.attribute(for: keyPath) {
            guard attribute.storage != .composition, attribute.storage != .codable, let column = attribute.columns.first else {
                throw StoreError(
                    .unsupportedQuery,
                    "cannot sort by \(entity.name).\(attribute.name): it is stored as \(attribute.storage) storage, whose SQL order need not be its Swift order; sort by a field of a composition instead",
                    entity: entity.name, attribute: attribute.name)
            }
            return try columnKey(translator.column(column.name, of: root), column: column, attribute: attribute, entity: entity.name, descriptor) + direction
        }
        if let (attribute, field) = compositionField(at: keyPath, of: entity) {
            return try columnKey(translator.column(field.column.name, of: root), column: field.column, attribute: attribute, entity: entity.name, descriptor) + direction
        }
        if let (target, attribute) = try toOneAttribute(at: keyPath, translator: translator) {
            let column = attribute.columns[0]
            return try columnKey(translator.column(column.name, of: target), column: column, attribute: attribute,
                                 entity: target.mapping.name, descriptor) + direction
        }
        throw StoreError(
            .unsupportedQuery,
            "cannot sort \(entity.name) by \(keyPath): only stored attributes of the entity, fields of its non-optional compositions and attributes of its to-one relationships' targets can be sorted on",
            entity: entity.name)
    }

    /// The SQL that orders by `column` as Swift orders `attribute`'s values.
    private static func columnKey<Entity: PersistentEntity>(
        _ sql: String, column: ColumnDescription, attribute: AttributeDescription, entity: String, _ descriptor: SortDescriptor<Entity>
    ) throws -> String {
        var sql = sql
        if column.type == .decimal {
            // Decimals are stored as text; as REAL they order exactly up to about 15 significant digits.
            sql = "CAST(\(sql) AS REAL)"
        }
        if let comparator = descriptor.stringComparator {
            guard let collation = StringCollation(comparator) else {
                throw StoreError(.unsupportedQuery, "cannot sort by \(entity).\(attribute.name) with a String.StandardComparator other than .lexical",
                                 entity: entity, attribute: attribute.name)
            }
            sql += " COLLATE " + collation.name
        }
        return sql
    }

    /// The composition attribute and field at `keyPath` (`\.location.latitude`): the attribute's
    /// key path extended by the field's.
    private static func compositionField(at keyPath: AnyKeyPath, of entity: EntityDescription) -> (AttributeDescription, CompositionFieldDescription)? {
        for attribute in entity.attributes where attribute.storage == .composition && !attribute.isOptional {
            let attributePath: AnyKeyPath = attribute.keyPath
            for field in attribute.compositionFields where attributePath.appending(path: field.keyPath as AnyKeyPath) == keyPath {
                return (attribute, field)
            }
        }
        return nil
    }

    /// For `\.relationship?.attribute`, the to-one target's row and the attribute (default or
    /// `.raw` storage). Swift builds no such key path from its parts, so the path is matched by
    /// its description: the relationship's key path, `?.`, and the last component of the
    /// attribute's key path (`\Book.author?.name?`; the accessors `@Entity` generates print
    /// as `<computed 0x… (String)>`, the same in every key path naming the property).
    private static func toOneAttribute(at keyPath: AnyKeyPath, translator: PredicateTranslator) throws -> (ObjectTerm, AttributeDescription)? {
        let root = translator.rootObject
        let path = keyPath.debugDescription
        for relationship in root.mapping.relationships {
            guard case .foreignKey(let column, _) = relationship.storage,
                  let target = translator.schema.entity(named: relationship.targetEntityName) else { continue }
            let prefix = relationship.description.keyPath.debugDescription + "?."
            guard path.hasPrefix(prefix) else { continue }
            var rest = path.dropFirst(prefix.count)
            if rest.hasSuffix("?") { rest = rest.dropLast() }
            guard !rest.isEmpty,
                  let attribute = target.description.attributes.first(where: { $0.keyPath.debugDescription.hasSuffix("." + rest) }) else { continue }
            guard attribute.storage == .default || attribute.storage == .raw else {
                throw StoreError(
                    .unsupportedQuery,
                    "cannot sort by \(target.name).\(attribute.name) through \(root.mapping.name).\(relationship.description.name): it is stored as \(attribute.storage) storage, whose SQL order need not be its Swift order",
                    entity: target.name, attribute: attribute.name)
            }
            let targetRow = ObjectTerm(mapping: target, scope: root.scope, source: .toOne(owner: root, relationship: relationship, column: column), nullable: true)
            return (targetRow, attribute)
        }
        return nil
    }
}

/// SQLite collations that compare with Foundation's standard string comparators, so SQL
/// sorts exactly as `SortDescriptor(\.name, comparator: .lexical)` sorts in memory.
enum StringCollation: Int, CaseIterable {
    // Foundation on Linux offers only `.lexical`; `.localized` and `.localizedStandard` are Apple-only.
    case lexical = 1

    init?(_ comparator: String.StandardComparator) {
        var forward = comparator
        forward.order = .forward
        guard let match = StringCollation.allCases.first(where: { $0.comparator == forward }) else { return nil }
        self = match
    }

    var comparator: String.StandardComparator {
        switch self {
        case .lexical: return .lexical
        }
    }

    var name: String {
        switch self {
        case .lexical: return "LOCALSTORE_LEXICAL"
        }
    }

    /// Whether `error` is SQLite's complaint that a statement uses a collation the connection lacks.
    static func isMissingCollation(_ error: Error) -> Bool {
        guard let error = error as? StoreError else { return false }
        return error.message.contains("no such collation sequence: LOCALSTORE_")
    }

    /// Registers every collation on `connection`; done when a statement first needs one.
    static func register(on connection: SQLiteConnection) throws {
        for collation in allCases {
            try connection.createCollation(
                named: collation.name, context: UnsafeMutableRawPointer(bitPattern: collation.rawValue)
            ) { context, leftCount, left, rightCount, right in
                let kind = StringCollation(rawValue: Int(bitPattern: context)) ?? .lexical
                let first = String(decoding: UnsafeRawBufferPointer(start: left, count: Int(leftCount)), as: UTF8.self)
                let second = String(decoding: UnsafeRawBufferPointer(start: right, count: Int(rightCount)), as: UTF8.self)
                switch kind.comparator.compare(first, second) {
                case .orderedAscending: return -1
                case .orderedSame: return 0
                case .orderedDescending: return 1
                }
            }
        }
    }
}

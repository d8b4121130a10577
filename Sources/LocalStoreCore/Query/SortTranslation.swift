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
/// - Ties keep storage order: `rowid` is always the last key.
enum SortTranslation {
    static func orderBy<Entity: PersistentEntity>(
        _ descriptors: [SortDescriptor<Entity>], mapping: EntityMapping, alias: String
    ) throws -> String {
        var keys: [String] = []
        for descriptor in descriptors {
            keys.append(try key(descriptor, mapping: mapping, alias: alias))
        }
        keys.append(alias + ".rowid")
        return keys.joined(separator: ", ")
    }

    private static func key<Entity: PersistentEntity>(
        _ descriptor: SortDescriptor<Entity>, mapping: EntityMapping, alias: String
    ) throws -> String {
        let entity = mapping.description
        guard let keyPath = descriptor.keyPath else {
            throw StoreError(.unsupportedQuery, "a SortDescriptor without a key path cannot be translated to SQL", entity: entity.name)
        }
        if keyPath == \Entity.objectID as PartialKeyPath<Entity> {
            // Identifiers are stored as upper-case `uuidString`s, whose text order is UUID's byte order.
            return alias + ".id" + (descriptor.order == .reverse ? " DESC" : " ASC")
        }
        guard let attribute = entity.attribute(for: keyPath) else {
            throw StoreError(
                .unsupportedQuery,
                "cannot sort \(entity.name) by \(keyPath): only stored attributes of the entity can be sorted on (not paths through relationships or composition fields)",
                entity: entity.name)
        }
        guard attribute.storage == .default, let column = attribute.columns.first else {
            throw StoreError(
                .unsupportedQuery,
                "cannot sort by \(entity.name).\(attribute.name): it is stored as \(attribute.storage) storage, whose SQL order need not be its Swift order",
                entity: entity.name, attribute: attribute.name)
        }
        var sql = alias + "." + quotedName(column.name)
        if column.type == .decimal {
            // Decimals are stored as text; as REAL they order exactly up to about 15 significant digits.
            sql = "CAST(\(sql) AS REAL)"
        }
        if let comparator = descriptor.stringComparator {
            guard let collation = StringCollation(comparator) else {
                throw StoreError(.unsupportedQuery, "cannot sort by \(entity.name).\(attribute.name) with a String.StandardComparator other than .lexical",
                                 entity: entity.name, attribute: attribute.name)
            }
            sql += " COLLATE " + collation.name
        }
        return sql + (descriptor.order == .reverse ? " DESC" : " ASC")
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

import Foundation
import SQLiteDatabase

/// Attributes whose values, taken together, no two objects of one entity may share: a `.unique`
/// attribute alone, or one key of `#Unique<Player>([\.first, \.last], [\.email])`.
///
/// As in SQL, a key in which any column holds `NULL` never collides with another.
public struct UniqueKey: Hashable, Sendable {
    /// The key's attributes, by property name, in declaration order of the key.
    public var attributeNames: [String]
    /// The table columns holding those attributes, in the same order (a `.composition`
    /// attribute contributes one column per field).
    public var columns: [String]

    /// A key over the named attributes stored in `columns`.
    public init(attributeNames: [String], columns: [String]) {
        self.attributeNames = attributeNames
        self.columns = columns
    }

    /// The key's attribute names for messages: `email`, or `(first, last)`.
    public var displayName: String {
        attributeNames.count == 1 ? attributeNames[0] : "(" + attributeNames.joined(separator: ", ") + ")"
    }

    /// The name of the (non-unique) SQLite index over the key's columns in `table`.
    ///
    /// The index only speeds up the checks: it is not a `UNIQUE` index, because a merge may hold
    /// two objects with one key until it resolves them (CONTRACT.md §3.8), and a `UNIQUE` index
    /// would fail the merge's statement halfway through the batch.
    public func indexName(in table: String) -> String {
        "\(table)_\(columns.joined(separator: "_"))_unique"
    }

    /// Whether `values` (one per column of the key) can collide at all: not when one is `NULL`.
    public static func canCollide(_ values: [SQLValue]) -> Bool {
        !values.contains { $0.isNull }
    }

    /// The save-time uniqueness rule, shared by everything that writes an object's row: throws
    /// `uniqueViolation` when a row of `table` other than `objectID`'s holds `values` (the key's
    /// column values, in ``columns`` order).
    ///
    /// - Parameters:
    ///   - entity: The entity's name, for the error.
    ///   - table: The entity's table.
    ///   - objectID: The object being saved, which may already have its row written.
    ///   - values: The object's values of the key's columns.
    ///   - connection: The connection whose transaction holds the save's writes.
    /// - Throws: ``StoreError`` `.uniqueViolation` naming the entity, the key's attributes, the
    ///   values, the saved object and the other object.
    package func checkNoOtherObject(entity: String, table: String, objectID: UUID, values: [SQLValue], connection: SQLiteConnection) throws {
        guard UniqueKey.canCollide(values) else { return }
        let conditions = columns.map { "\(quoteIdentifier($0)) = ?" }.joined(separator: " AND ")
        let sql = "SELECT \(EntityTable.quotedIdentifierColumn) FROM \(quoteIdentifier(table)) WHERE \(conditions) AND \(EntityTable.quotedIdentifierColumn) != ? LIMIT 1"
        guard let other = try connection.rows(sql, values + [.text(objectID.storageText)]).first?.first else { return }
        let shown = values.count == 1 ? values[0].description : "(" + values.map(\.description).joined(separator: ", ") + ")"
        throw StoreError(
            .uniqueViolation,
            "\(entity).\(displayName) must be unique, but another \(entity) (\(other.description)) already has \(shown); saving \(entity) \(objectID.storageText)",
            entity: entity, attribute: attributeNames.joined(separator: ", "), objectID: objectID, sql: sql)
    }
}

extension SchemaDocument.Entity {
    /// Every uniqueness key of the entity: each `.unique` attribute alone, in declaration order,
    /// then the `#Unique` keys as declared. Keys naming an attribute the entity lacks are left out
    /// (the store refuses such a schema when it opens).
    public var uniqueKeys: [UniqueKey] {
        var keys = attributes.filter(\.unique).map { UniqueKey(attributeNames: [$0.name], columns: $0.columns.map(\.name)) }
        for names in uniquenessConstraints ?? [] {
            let members = names.compactMap { attribute(named: $0) }
            guard members.count == names.count, !members.isEmpty else { continue }
            keys.append(UniqueKey(attributeNames: names, columns: members.flatMap { $0.columns.map(\.name) }))
        }
        return keys
    }
}

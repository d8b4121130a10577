import SQLiteDatabase

extension SchemaDocument {
    /// Prefixes of table names that belong to SQLite, LocalStore, SyncKit and syncd, compared
    /// case-insensitively as SQLite compares identifiers.
    public static let reservedTablePrefixes = ["sqlite_", "_localstore_", "_sync_", "_server_"]

    /// Checks that every table the schema creates (an entity's table, a join table) has a name
    /// of its own: not reserved (``reservedTablePrefixes``), not another entity's table, not a
    /// join table of another relationship. SQLite compares table names case-insensitively, so
    /// this does too.
    ///
    /// Every store checks its schema with this before touching its file, and so does syncd
    /// before registering one, so a schema is refused the same way everywhere.
    ///
    /// - Throws: ``StoreError`` `.invalidSchema` naming the entity (and relationship) and the table.
    public func validateTableNames() throws {
        var owners: [String: (description: String, pair: String)] = [:]
        func claim(_ table: String, entity: String, relationship: String?, pair: String) throws {
            let what = relationship.map { "the relationship \(entity).\($0) uses the join table" } ?? "the entity \(entity) uses the table"
            func invalid(_ reason: String) -> StoreError {
                StoreError(.invalidSchema, "\(what) '\(table)', \(reason)", entity: entity, relationship: relationship)
            }
            let key = table.lowercased()
            if let prefix = SchemaDocument.reservedTablePrefixes.first(where: { key.hasPrefix($0) }) {
                throw invalid("but table names starting with '\(prefix)' are reserved for the store and sync; choose another name")
            }
            if let owner = owners[key] {
                // Both sides of a many-to-many name the same join table; that is one table, not a collision.
                guard owner.pair != pair else { return }
                throw invalid("which \(owner.description) already uses; choose another name")
            }
            owners[key] = (relationship.map { "the relationship \(entity).\($0)" } ?? "the entity \(entity)", pair)
        }
        for entity in entities {
            try claim(entity.table, entity: entity.name, relationship: nil, pair: "entity \(entity.name)")
        }
        for entity in entities {
            for relationship in entity.relationships {
                guard let table = relationship.storage.joinTableName else { continue }
                let sides = ["\(entity.name).\(relationship.name)", "\(relationship.target).\(relationship.inverse)"].sorted()
                try claim(table, entity: entity.name, relationship: relationship.name, pair: "join \(sides.joined(separator: " "))")
            }
        }
    }
}

extension SchemaDocument {
    /// Checks that no attribute or foreign-key column of an entity is named like the column
    /// holding the object identifier (`_object_id`), compared
    /// case-insensitively as SQLite compares column names.
    ///
    /// - Throws: ``StoreError`` `.invalidSchema` naming the entity and the attribute or relationship.
    public func validateColumnNames() throws {
        for entity in entities {
            try checkIdentifierColumnIsFree(entity.name, properties: entity.attributes.map { ($0.name, $0.columns.map(\.name), false) }
                + entity.relationships.map { ($0.name, $0.storage.ownTableColumns, true) })
        }
    }
}

/// Throws when one of `properties` (name, its columns in the entity's table, whether it is a
/// relationship) would store in the identifier column.
func checkIdentifierColumnIsFree(_ entity: String, properties: [(name: String, columns: [String], isRelationship: Bool)]) throws {
    let reserved = EntityTable.identifierColumn.lowercased()
    for property in properties {
        guard let column = property.columns.first(where: { $0.lowercased() == reserved }) else { continue }
        let kind = property.isRelationship ? "relationship" : "attribute"
        throw StoreError(
            .invalidSchema,
            "the \(kind) \(entity).\(property.name) stores in the column '\(column)', which holds the object identifier; give it another persistentName",
            entity: entity, attribute: property.isRelationship ? nil : property.name, relationship: property.isRelationship ? property.name : nil)
    }
}

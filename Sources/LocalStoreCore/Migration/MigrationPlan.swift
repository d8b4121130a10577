import SQLiteDatabase
/// The SQL statements a migration will run, collected before any of them runs.
struct MigrationPlan {
    struct Statement {
        let sql: String
        let arguments: [SQLValue]
    }

    private(set) var statements: [Statement] = []

    private mutating func append(_ sql: String, _ arguments: [SQLValue] = []) {
        statements.append(Statement(sql: sql, arguments: arguments))
    }

    mutating func createTable(for entity: SchemaDocument.Entity) {
        let columns = ["\(EntityTable.quotedIdentifierColumn) TEXT PRIMARY KEY NOT NULL"] + entity.columns.map { "\(quoteIdentifier($0.name)) \($0.type.columnType.rawValue)" }
        append("CREATE TABLE \(quoteIdentifier(entity.table)) (\(columns.joined(separator: ", ")))")
        createIndexes(for: entity)
    }

    /// Indexes for `.unique` and `.indexed` attributes and for foreign keys (with their position,
    /// so an ordered relationship loads in index order). `.unique` indexes are plain ones: saves
    /// check uniqueness themselves, so that a merge holding a concurrent duplicate cannot fail.
    mutating func createIndexes(for entity: SchemaDocument.Entity) {
        let table = quoteIdentifier(entity.table)
        for attribute in entity.attributes where attribute.unique || attribute.indexed {
            let columns = attribute.columns.map { quoteIdentifier($0.name) }.joined(separator: ", ")
            let name = "\(entity.table)_\(attribute.persistentName)_\(attribute.unique ? "unique" : "index")"
            append("CREATE INDEX IF NOT EXISTS \(quoteIdentifier(name)) ON \(table) (\(columns))")
        }
        // `#Unique` keys: plain indexes too, for the same reason.
        for key in entity.uniqueKeys.dropFirst(entity.attributes.filter(\.unique).count) {
            let columns = key.columns.map(quoteIdentifier).joined(separator: ", ")
            append("CREATE INDEX IF NOT EXISTS \(quoteIdentifier(key.indexName(in: entity.table))) ON \(table) (\(columns))")
        }
        for relationship in entity.relationships {
            guard case .foreignKey(let column, _) = relationship.storage else { continue }
            let columns = relationship.storage.ownTableColumns.map(quoteIdentifier).joined(separator: ", ")
            append("CREATE INDEX IF NOT EXISTS \(quoteIdentifier("\(entity.table)_\(column)_fk")) ON \(table) (\(columns))")
        }
    }

    /// Drops the indexes LocalStore made on `table`, so columns can be dropped or renamed;
    /// ``createIndexes(for:)`` then makes the ones the new schema wants.
    mutating func dropIndexes(of table: String, existing: [String]) {
        for name in existing where name.hasPrefix(table + "_") {
            append("DROP INDEX IF EXISTS \(quoteIdentifier(name))")
        }
    }

    mutating func addColumn(_ name: String, type: AttributeType, default value: SQLValue, to table: String) {
        append("ALTER TABLE \(quoteIdentifier(table)) ADD COLUMN \(quoteIdentifier(name)) \(type.columnType.rawValue)")
        if !value.isNull {
            append("UPDATE \(quoteIdentifier(table)) SET \(quoteIdentifier(name)) = ?", [value])
        }
    }

    mutating func renameColumn(_ old: String, to new: String, in table: String) {
        append("ALTER TABLE \(quoteIdentifier(table)) RENAME COLUMN \(quoteIdentifier(old)) TO \(quoteIdentifier(new))")
    }

    mutating func renameTable(_ old: String, to new: String) {
        append("ALTER TABLE \(quoteIdentifier(old)) RENAME TO \(quoteIdentifier(new))")
    }

    mutating func dropColumn(_ column: String, from table: String) {
        append("ALTER TABLE \(quoteIdentifier(table)) DROP COLUMN \(quoteIdentifier(column))")
    }

    /// A join table with the columns ``RelationshipStorage`` names, and an index on the member
    /// column: the side that does not own the table reads its members through it.
    mutating func createJoinTable(_ table: String, ordered: Bool) {
        let owner = quoteIdentifier(RelationshipStorage.owningSideColumn)
        let member = quoteIdentifier(RelationshipStorage.memberSideColumn)
        let position = ordered ? ", \(quoteIdentifier(RelationshipStorage.joinTablePositionColumn)) INTEGER" : ""
        append("CREATE TABLE IF NOT EXISTS \(quoteIdentifier(table)) (\(owner) TEXT NOT NULL, \(member) TEXT NOT NULL\(position), PRIMARY KEY (\(owner), \(member)))")
        append("CREATE INDEX IF NOT EXISTS \(quoteIdentifier(table + "_" + RelationshipStorage.memberSideColumn)) ON \(quoteIdentifier(table)) (\(member))")
    }

    mutating func dropTable(_ table: String) {
        append("DROP TABLE IF EXISTS \(quoteIdentifier(table))")
    }
}

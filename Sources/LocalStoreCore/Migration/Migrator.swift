import Foundation
import SQLiteDatabase

/// Brings a store file to the declared schema when the store opens: creates tables for new
/// entities, adds, renames (via `originalName`) and drops columns, and maintains indexes.
///
/// Every check runs before the first change, and all changes run in one transaction, so a
/// schema change it cannot do throws ``StoreError/Code/migrationImpossible`` and leaves the
/// file as it was.
struct Migrator {
    let document: SchemaDocument
    let connection: SQLiteConnection
    let policy: MigrationPolicy
    /// Whether an attribute whose type changed gets its columns replaced (dropped, then added
    /// with the default value) instead of refusing the migration: a custom stage of a
    /// ``SchemaMigrationPlan`` converts the values itself.
    var replacesChangedTypes = false

    static let metadataTable = "_localstore_metadata"

    func migrate() throws {
        try connection.inTransaction {
            let stored = try storedDocument()
            if let stored { try Migrator.renameLegacyIdentifierColumns(of: stored, on: connection) }
            guard stored?.versionHash != document.versionHash else { return }
            if policy == .additiveOnly, let stored {
                switch document.compatibility(with: stored) {
                case .identical, .additive: break
                case .subset(let reasons), .incompatible(let reasons):
                    throw StoreError(.migrationImpossible, "the schema is not an additive change of the stored one: \(reasons.joined(separator: "; "))", path: connection.path)
                }
            }
            var plan = MigrationPlan()
            for entity in document.entities {
                if let old = stored.flatMap({ previous(of: entity, in: $0) }), try tableExists(old.table) {
                    // A renamed entity's table is renamed first; the other statements name the new table.
                    if old.table != entity.table { plan.renameTable(old.table, to: entity.table) }
                    try planChanges(to: entity, from: old, into: &plan)
                } else {
                    plan.createTable(for: entity)
                }
            }
            // An entity the schema no longer has loses its table, as a removed attribute loses its
            // column: a later schema that has the entity again starts it empty.
            for old in stored?.entities ?? [] where !document.entities.contains(where: { $0.name == old.name || $0.originalName == old.name }) {
                if try tableExists(old.table) { plan.dropTable(old.table) }
            }
            try planJoinTables(from: stored, into: &plan)
            for statement in plan.statements { try connection.run(statement.sql, statement.arguments) }
            try connection.execute("CREATE TABLE IF NOT EXISTS \(Migrator.metadataTable) (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)")
            let json = String(decoding: try document.jsonData(), as: UTF8.self)
            try connection.run("INSERT OR REPLACE INTO \(Migrator.metadataTable) (key, value) VALUES ('schema', ?)", [.text(json)])
        }
    }

    /// Renames the identifier column of each of `stored`'s entity tables that still has its
    /// earlier name (`id`) to ``EntityTable/identifierColumn``, in place: the rows, their
    /// identifiers and every reference to them stay as they are.
    ///
    /// This does not depend on the schema's version hash (the identifier column is not part of the
    /// schema), so it runs on every open; a store already renamed costs one `pragma_table_info`
    /// per entity.
    static func renameLegacyIdentifierColumns(of stored: SchemaDocument, on connection: SQLiteConnection) throws {
        let legacy = EntityTable.legacyIdentifierColumn
        var tables: [String] = []
        for entity in stored.entities {
            let columns = try connection.rows("SELECT name FROM pragma_table_info(?)", [.text(entity.table)]).compactMap { row -> String? in
                if case .text(let name)? = row.first { name } else { nil }
            }
            // A table that has the identifier column already and an `id` too holds `id` as an attribute.
            if columns.contains(legacy) && !columns.contains(EntityTable.identifierColumn) { tables.append(entity.table) }
        }
        guard !tables.isEmpty else { return }
        func rename() throws {
            for table in tables {
                try connection.run("ALTER TABLE \(quoteIdentifier(table)) RENAME COLUMN \(quoteIdentifier(legacy)) TO \(EntityTable.quotedIdentifierColumn)")
            }
        }
        // Inside a migration, its transaction; otherwise one of its own, so every table is renamed or none.
        if connection.isInTransaction { try rename() } else { try connection.inTransaction(rename) }
    }

    private func tableExists(_ name: String) throws -> Bool {
        !(try connection.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(name)])).isEmpty
    }

    /// The schema the file was last written with, or `nil` for a new file.
    private func storedDocument() throws -> SchemaDocument? {
        try Migrator.storedDocument(on: connection)
    }

    static func storedDocument(on connection: SQLiteConnection) throws -> SchemaDocument? {
        guard !(try connection.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(metadataTable)])).isEmpty else { return nil }
        let rows = try connection.rows("SELECT value FROM \(Migrator.metadataTable) WHERE key = 'schema'")
        guard case .text(let json)? = rows.first?.first else { return nil }
        do {
            return try SchemaDocument(jsonData: Data(json.utf8))
        } catch {
            throw StoreError(.corrupt, "the schema recorded in the store cannot be read: \(error)", path: connection.path)
        }
    }

    /// `entity` as `stored` has it: by its name, or by its `originalName` when it was renamed.
    private func previous(of entity: SchemaDocument.Entity, in stored: SchemaDocument) -> SchemaDocument.Entity? {
        stored.entity(named: entity.name) ?? entity.originalName.flatMap { stored.entity(named: $0) }
    }

    /// `relationship` of `entity` as `stored` has it, following renames of both.
    private func previous(of relationship: SchemaDocument.Relationship, of entity: SchemaDocument.Entity,
                          in stored: SchemaDocument) -> SchemaDocument.Relationship? {
        guard let old = previous(of: entity, in: stored) else { return nil }
        return old.relationship(named: relationship.name) ?? relationship.originalName.flatMap { old.relationship(named: $0) }
    }

    /// Plans the changes of an entity whose table exists; every read here sees the table as it
    /// is now, under `old.table`, since the plan runs only after all of them.
    private func planChanges(to entity: SchemaDocument.Entity, from old: SchemaDocument.Entity, into plan: inout MigrationPlan) throws {
        let existingColumns = Set(try connection.rows("SELECT name FROM pragma_table_info(?)", [.text(old.table)]).compactMap { row -> String? in
            if case .text(let name) = row[0] { return name }
            return nil
        })
        var keptColumns: Set<String> = [EntityTable.identifierColumn]
        var replacedAttributes: [(old: SchemaDocument.Attribute, new: SchemaDocument.Attribute)] = []
        for attribute in entity.attributes {
            let defaults = attribute.defaultValues
            let previous = old.attributes.first { $0.name == attribute.name }
                ?? attribute.originalName.flatMap { name in old.attributes.first { $0.name == name } }
            guard let previous else {
                for (column, value) in zip(attribute.columns, defaults) { plan.addColumn(column.name, type: column.type, default: value, to: entity.table) }
                continue
            }
            if replacesChangedTypes, typeChange(of: attribute, from: previous) != nil {
                // Dropped only after the indexes, which SQLite requires; kept here so the loop that
                // drops removed columns leaves them alone.
                replacedAttributes.append((previous, attribute))
                keptColumns.formUnion(previous.columns.map(\.name))
                continue
            }
            try checkCompatible(attribute, with: previous, entity: entity, storedTable: old.table)
            for (index, column) in attribute.columns.enumerated() {
                let suffix = attribute.storage == .composition ? String(column.name.dropFirst(attribute.persistentName.count + 1)) : nil
                let oldColumn = suffix.map { suffix in previous.columns.first { $0.name == previous.persistentName + "_" + suffix } }
                    ?? previous.columns.first
                if let oldColumn, existingColumns.contains(oldColumn.name) {
                    if oldColumn.name != column.name { plan.renameColumn(oldColumn.name, to: column.name, in: entity.table) }
                    keptColumns.insert(oldColumn.name)
                } else {
                    plan.addColumn(column.name, type: column.type, default: defaults[index], to: entity.table)
                }
            }
        }
        for relationship in entity.relationships {
            let previous = old.relationship(named: relationship.name) ?? relationship.originalName.flatMap { old.relationship(named: $0) }
            let targetNames = [relationship.target] + (document.entity(named: relationship.target)?.originalName.map { [$0] } ?? [])
            if let previous, previous.kind != relationship.kind || !targetNames.contains(previous.target) {
                throw StoreError(
                    .migrationImpossible,
                    "cannot migrate \(entity.name).\(previous.name): it changed from \(previous.kind.rawValue) \(previous.target) to \(relationship.kind.rawValue) \(relationship.target); add a new relationship instead",
                    entity: entity.name, relationship: previous.name, path: connection.path)
            }
            guard case .foreignKey(let column, _) = relationship.storage else { continue }
            // A relationship renamed, or given another persistentName, keeps its columns under the new names.
            var oldColumns = previous?.storage.ownTableColumns ?? []
            if oldColumns.count != relationship.storage.ownTableColumns.count { oldColumns = [] }
            for (index, name) in relationship.storage.ownTableColumns.enumerated() {
                if existingColumns.contains(name) {
                    keptColumns.insert(name)
                } else if index < oldColumns.count, existingColumns.contains(oldColumns[index]), !keptColumns.contains(oldColumns[index]) {
                    plan.renameColumn(oldColumns[index], to: name, in: entity.table)
                    keptColumns.insert(oldColumns[index])
                } else {
                    plan.addColumn(name, type: name == column ? .uuid : .int, default: .null, to: entity.table)
                }
            }
        }
        plan.dropIndexes(of: old.table, existing: try indexNames(of: old.table))
        for (previous, attribute) in replacedAttributes {
            for column in previous.columns where existingColumns.contains(column.name) { plan.dropColumn(column.name, from: entity.table) }
            for (column, value) in zip(attribute.columns, attribute.defaultValues) { plan.addColumn(column.name, type: column.type, default: value, to: entity.table) }
        }
        for column in existingColumns.subtracting(keptColumns).sorted() where entity.columns.allSatisfy({ $0.name != column }) {
            plan.dropColumn(column, from: entity.table)
        }
        plan.createIndexes(for: entity)
    }

    private func indexNames(of table: String) throws -> [String] {
        try connection.rows("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name", [.text(table)])
            .compactMap { row in
                if case .text(let name) = row[0] { return name }
                return nil
            }
    }

    /// Why the stored columns of `previous` cannot hold `attribute`'s values (its storage or a
    /// column's type changed), or `nil` when they can.
    private func typeChange(of attribute: SchemaDocument.Attribute, from previous: SchemaDocument.Attribute) -> String? {
        if previous.storage != attribute.storage && (previous.storage == .composition || attribute.storage == .composition) {
            return "its storage changed from \(previous.storage.rawValue) to \(attribute.storage.rawValue)"
        }
        if attribute.storage != .composition {
            let oldType = previous.columns.first?.type
            let newType = attribute.columns.first?.type
            if oldType != newType {
                return "its type changed from \(oldType?.rawValue ?? "?") (\(previous.swiftType)) to \(newType?.rawValue ?? "?") (\(attribute.swiftType)); add a new attribute instead, or convert it in a custom stage of a SchemaMigrationPlan"
            }
            return nil
        }
        for column in attribute.columns {
            let suffix = column.name.dropFirst(attribute.persistentName.count + 1)
            if let oldColumn = previous.columns.first(where: { $0.name == previous.persistentName + "_" + suffix }), oldColumn.type != column.type {
                return "its field '\(suffix)' changed type from \(oldColumn.type.rawValue) to \(column.type.rawValue)"
            }
        }
        return nil
    }

    /// Throws unless the stored columns of `previous` can hold `attribute` as declared now.
    private func checkCompatible(
        _ attribute: SchemaDocument.Attribute, with previous: SchemaDocument.Attribute, entity: SchemaDocument.Entity, storedTable: String
    ) throws {
        func impossible(_ reason: String) -> StoreError {
            StoreError(.migrationImpossible, "cannot migrate \(entity.name).\(attribute.name): \(reason)",
                       entity: entity.name, attribute: attribute.name, path: connection.path)
        }
        if let change = typeChange(of: attribute, from: previous) { throw impossible(change) }
        if previous.optional && !attribute.optional, let column = previous.columns.first {
            let nulls = try connection.rows("SELECT count(*) FROM \(quoteIdentifier(storedTable)) WHERE \(quoteIdentifier(column.name)) IS NULL")
            if case .integer(let count)? = nulls.first?.first, count > 0 {
                throw impossible("it became non-optional, but \(count) stored object(s) hold nil")
            }
        }
    }

    /// Creates missing join tables, renames those whose relationship or entity was renamed (or
    /// given another persistentName), and drops those of relationships that no longer exist.
    private func planJoinTables(from stored: SchemaDocument?, into plan: inout MigrationPlan) throws {
        var wanted: Set<String> = []
        for entity in document.entities {
            for relationship in entity.relationships where relationship.storage.ownsJoinTable {
                guard let table = relationship.storage.joinTableName else { continue }
                wanted.insert(table)
                if let stored, let previous = previous(of: relationship, of: entity, in: stored),
                   let oldTable = previous.storage.joinTableName, oldTable != table,
                   try tableExists(oldTable), !(try tableExists(table)) {
                    plan.renameTable(oldTable, to: table)
                    wanted.insert(oldTable)
                }
                plan.createJoinTable(table, ordered: relationship.storage.positionColumn != nil)
            }
        }
        for entity in stored?.entities ?? [] {
            for relationship in entity.relationships where relationship.storage.ownsJoinTable {
                if let table = relationship.storage.joinTableName, !wanted.contains(table) { plan.dropTable(table) }
            }
        }
    }
}

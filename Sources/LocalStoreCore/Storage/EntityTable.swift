import Codecs
import Foundation
import SQLiteDatabase
import Synchronization

/// The SQL of one entity's table, for code that works from a ``SchemaDocument`` rather than the
/// Swift types (merging, the `sync` CLI, the server): the one place outside saves and fetches
/// that knows how rows, foreign keys, join rows and positions are laid out.
///
/// Statements are built once per entity and their text repeats per row, so the connection's
/// cached preparations serve every call.
package struct EntityTable: Sendable {
    /// The column of every entity table that holds the object's identifier (its primary key).
    ///
    /// The leading underscore keeps it apart from attribute columns, so an entity can declare an
    /// attribute named `id` of its own; a property whose column would be named like this is
    /// refused when the schema is checked.
    package static let identifierColumn = "_object_id"
    /// ``identifierColumn`` quoted for SQL.
    package static let quotedIdentifierColumn = quoteIdentifier(identifierColumn)
    /// The identifier column of stores written before it had a name of its own; opening such a
    /// store renames it to ``identifierColumn``.
    package static let legacyIdentifierColumn = "id"

    /// The entity's name.
    package let entity: String
    /// The entity's table.
    package let table: String
    /// The attribute columns, in table order (the identifier column not included).
    package let attributeColumns: [String]
    /// The relationships, with where each is stored.
    package let relationships: [(name: String, storage: RelationshipStorage)]
    private let quotedTable: String
    /// The join tables of the entity's self-inverse to-many relationships, with their member
    /// column: they hold each pair in both directions, so a deleted row's identifier is removed
    /// from the member column too.
    private let selfInverseJoinTables: [(table: String, memberColumn: String)]
    private let quotedAttributeColumns: [String]
    /// ``updateAttributes(of:_:on:)``'s statements, by the columns they write.
    private let updateStatements = UpdateStatements()
    /// `SELECT <identifier column>, <attribute columns> FROM <table>`, for statements that add a `WHERE`.
    private let selectIdentifierAndAttributes: String
    private let insertSQL: String
    private let existsSQL: String

    package init(_ entity: SchemaDocument.Entity) {
        self.init(entity: entity.name, table: entity.table, attributeColumns: entity.attributes.flatMap { $0.columns.map(\.name) },
                  relationships: entity.relationships.map { ($0.name, $0.storage, $0.isSelfInverse(of: entity.name)) })
    }

    /// The table of `entity` stored in `table`: its attribute columns in table order, and its
    /// relationships with where each is stored and whether it is self-inverse.
    package init(entity: String, table: String, attributeColumns: [String],
                 relationships: [(name: String, storage: RelationshipStorage, isSelfInverse: Bool)]) {
        self.entity = entity
        self.table = table
        self.attributeColumns = attributeColumns
        self.relationships = relationships.map { ($0.name, $0.storage) }
        selfInverseJoinTables = relationships.compactMap { relationship in
            guard relationship.isSelfInverse, case .joinTable(let table, _, let memberColumn, _) = relationship.storage else { return nil }
            return (table, memberColumn)
        }
        quotedTable = quoteIdentifier(table)
        quotedAttributeColumns = attributeColumns.map(quoteIdentifier)
        let identifierAndAttributes = ([EntityTable.quotedIdentifierColumn] + quotedAttributeColumns).joined(separator: ", ")
        selectIdentifierAndAttributes = "SELECT \(identifierAndAttributes) FROM \(quotedTable)"
        insertSQL = "INSERT INTO \(quotedTable) (\(identifierAndAttributes)) VALUES (\(EntityTable.placeholders(attributeColumns.count + 1)))"
        existsSQL = "SELECT 1 FROM \(quotedTable) WHERE \(EntityTable.quotedIdentifierColumn) = ?"
    }

    /// `?, ?, …`: `count` parameters.
    package static func placeholders(_ count: Int) -> String {
        count == 0 ? "" : String(repeating: "?, ", count: count - 1) + "?"
    }

    // MARK: Rows

    /// Whether `id` has a row.
    package func containsRow(_ id: UUID, on connection: SQLiteConnection) throws -> Bool {
        try !connection.rows(existsSQL, [.text(id.storageText)]).isEmpty
    }

    /// Inserts the row of `id` with its attribute columns (in ``attributeColumns`` order); foreign
    /// keys and positions start null.
    package func insertRow(_ id: UUID, attributeValues: [SQLValue], on connection: SQLiteConnection) throws {
        try connection.run(insertSQL, [.text(id.storageText)] + attributeValues)
    }

    /// Deletes the row of `id` and the join rows naming it on either side of its many-to-many
    /// relationships.
    package func deleteRow(_ id: UUID, on connection: SQLiteConnection) throws {
        let identifier = SQLValue.text(id.storageText)
        try connection.run("DELETE FROM \(quotedTable) WHERE \(EntityTable.quotedIdentifierColumn) = ?", [identifier])
        for (_, storage) in relationships {
            guard case .joinTable(let table, let ownerColumn, _, _) = storage else { continue }
            try connection.run("DELETE FROM \(quoteIdentifier(table)) WHERE \(quoteIdentifier(ownerColumn)) = ?", [identifier])
        }
        for (table, memberColumn) in selfInverseJoinTables {
            try connection.run("DELETE FROM \(quoteIdentifier(table)) WHERE \(quoteIdentifier(memberColumn)) = ?", [identifier])
        }
    }

    /// The attribute columns of `id`'s row, in ``attributeColumns`` order, or `nil` without a row.
    package func attributeValues(of id: UUID, on connection: SQLiteConnection) throws -> [SQLValue]? {
        try connection.rows("\(selectIdentifierAndAttributes) WHERE \(EntityTable.quotedIdentifierColumn) = ?", [.text(id.storageText)]).first.map { Array($0.dropFirst()) }
    }

    /// Every row as `[identifier, attribute columns…]`, sorted by identifier.
    package func allRows(on connection: SQLiteConnection) throws -> [[SQLValue]] {
        try connection.rows("\(selectIdentifierAndAttributes) ORDER BY \(EntityTable.quotedIdentifierColumn)")
    }

    /// `id`'s row as `[identifier, attribute columns…]`, if it has one.
    package func row(_ id: UUID, on connection: SQLiteConnection) throws -> [SQLValue]? {
        try connection.rows("\(selectIdentifierAndAttributes) WHERE \(EntityTable.quotedIdentifierColumn) = ?", [.text(id.storageText)]).first
    }

    /// Reads the rows of `ids`; `body` gets each row's identifier and a statement whose column
    /// `1 + offset` is the attribute column `offset`. Only rows of `ids` are passed, once each, in
    /// no particular order.
    ///
    /// Looked up a few hundred per statement, each identifier costs two B-tree searches (the
    /// identifier's index, then the row). When `ids` are thousands and at least a quarter of the
    /// table, the table is read once in storage order instead and the other rows are skipped: a
    /// merge that touches most objects of an entity reads their rows in a fraction of the time.
    package func forEachAttributeRow(_ ids: [UUID], on connection: SQLiteConnection, _ body: (UUID, SQLiteStatement) throws -> Void) throws {
        guard !ids.isEmpty else { return }
        if ids.count >= EntityTable.fewestRowsToScan, try ids.count * 4 >= rowCountBound(on: connection) {
            let wanted = Set(ids)
            try connection.forEachRow(selectIdentifierAndAttributes) { row in
                guard let id = row.uuid(at: 0), wanted.contains(id) else { return }
                try body(id, row)
            }
            return
        }
        // `IN` passes a row once however often its identifier is listed, but only within one
        // statement: an identifier listed again further on is dropped first.
        var seen: Set<UUID> = []
        let ids = ids.count <= EntityTable.identifiersPerStatement ? ids : ids.filter { seen.insert($0).inserted }
        for start in stride(from: 0, to: ids.count, by: EntityTable.identifiersPerStatement) {
            let chunk = ids[start..<min(start + EntityTable.identifiersPerStatement, ids.count)]
            let statement = try connection.cachedStatement(
                "\(selectIdentifierAndAttributes) WHERE \(EntityTable.quotedIdentifierColumn) IN (\(EntityTable.placeholders(chunk.count)))")
            // A statement left mid-way (body threw) would keep a read transaction open.
            defer { statement.reset() }
            var parameter: Int32 = 1
            for id in chunk {
                try statement.bind(storageTextOf: id, at: parameter)
                parameter += 1
            }
            while try statement.step() {
                guard let id = statement.uuid(at: 0) else { continue }
                try body(id, statement)
            }
        }
    }

    /// Identifiers bound to one statement of ``forEachAttributeRow(_:on:_:)``.
    private static let identifiersPerStatement = 500
    /// Below this many identifiers, ``forEachAttributeRow(_:on:_:)`` never reads the whole table.
    private static let fewestRowsToScan = 2_000

    /// At least the number of rows, found with one B-tree descent: the largest rowid (rows get
    /// positive rowids, one each), where `count(*)` would read every row.
    private func rowCountBound(on connection: SQLiteConnection) throws -> Int {
        guard case .integer(let largest)? = try connection.rows("SELECT max(rowid) FROM \(quotedTable)").first?.first else { return 0 }
        return Int(largest)
    }

    /// Writes the attribute columns of `id` whose value is not `nil` (`values` in
    /// ``attributeColumns`` order); the others keep theirs.
    package func updateAttributes(of id: UUID, _ values: [SQLValue?], on connection: SQLiteConnection) throws {
        var arguments: [SQLValue] = []
        arguments.reserveCapacity(values.count + 1)
        var written: UInt64 = 0
        for (offset, value) in values.enumerated() {
            guard let value else { continue }
            arguments.append(value)
            if offset < 64 { written |= 1 << UInt64(offset) }
        }
        guard !arguments.isEmpty else { return }
        arguments.append(.text(id.storageText))
        // A merge writes thousands of rows with the same columns: their statement is made once.
        let sql = values.count <= 64 ? updateStatements.statement(writing: written) { updateStatement(writing: values) } : updateStatement(writing: values)
        try connection.run(sql, arguments)
    }

    /// The `UPDATE` of the attribute columns whose value is not `nil`, in column order.
    private func updateStatement(writing values: [SQLValue?]) -> String {
        let assignments = zip(quotedAttributeColumns, values).compactMap { column, value in value.map { _ in "\(column) = ?" } }
        return "UPDATE \(quotedTable) SET \(assignments.joined(separator: ", ")) WHERE \(EntityTable.quotedIdentifierColumn) = ?"
    }

    // MARK: Relationships

    /// Points `id`'s foreign key `column` at `target` (`nil` clears it).
    package func setForeignKey(_ column: String, of id: UUID, to target: UUID?, on connection: SQLiteConnection) throws {
        try connection.run("UPDATE \(quotedTable) SET \(quoteIdentifier(column)) = ? WHERE \(EntityTable.quotedIdentifierColumn) = ?",
                           [target.map { .text($0.storageText) } ?? .null, .text(id.storageText)])
    }

    /// Clears `id`'s position column `column` (it belongs to no ordered relationship).
    package func clearPosition(_ column: String, of id: UUID, on connection: SQLiteConnection) throws {
        try connection.run("UPDATE \(quotedTable) SET \(quoteIdentifier(column)) = NULL WHERE \(EntityTable.quotedIdentifierColumn) = ?", [.text(id.storageText)])
    }

    /// The members of `id`'s relationship stored as `storage`, as the app would see them: in
    /// position order when ordered, otherwise by identifier. `table` is the table of `id`'s entity.
    package static func members(of id: UUID, in table: String, storage: RelationshipStorage, on connection: SQLiteConnection) throws -> [UUID] {
        let identifier = SQLValue.text(id.storageText)
        let rows: [[SQLValue]]
        switch storage {
        case .foreignKey(let column, _):
            rows = try connection.rows("SELECT \(quoteIdentifier(column)) FROM \(quoteIdentifier(table)) WHERE \(EntityTable.quotedIdentifierColumn) = ?", [identifier])
        case .inverseForeignKey(let table, let column, let positionColumn):
            let order = positionColumn.map { " ORDER BY \(quoteIdentifier($0)), rowid" } ?? " ORDER BY \(EntityTable.quotedIdentifierColumn)"
            rows = try connection.rows("SELECT \(EntityTable.quotedIdentifierColumn) FROM \(quoteIdentifier(table)) WHERE \(quoteIdentifier(column)) = ?\(order)", [identifier])
        case .joinTable(let table, let ownerColumn, let memberColumn, let positionColumn):
            let order = " ORDER BY \(quoteIdentifier(positionColumn ?? memberColumn))"
            rows = try connection.rows(
                "SELECT \(quoteIdentifier(memberColumn)) FROM \(quoteIdentifier(table)) WHERE \(quoteIdentifier(ownerColumn)) = ?\(order)", [identifier])
        }
        return rows.compactMap { row in
            if case .text(let text)? = row.first { UUID(storageText: text) } else { nil }
        }
    }

    /// Replaces the join rows of `owner` in the join table this side owns with `members`, in
    /// that order (numbered when the table has positions). `isNewOwner` skips deleting the rows
    /// an object saved for the first time cannot have.
    package static func replaceJoinRows(
        of owner: UUID, with members: [UUID], storage: RelationshipStorage, isNewOwner: Bool = false, on connection: SQLiteConnection
    ) throws {
        guard storage.ownsJoinTable, case .joinTable(let table, let ownerColumn, let memberColumn, let positionColumn) = storage else { return }
        let quoted = quoteIdentifier(table)
        let ownerIdentifier = SQLValue.text(owner.storageText)
        if !isNewOwner {
            try connection.run("DELETE FROM \(quoted) WHERE \(quoteIdentifier(ownerColumn)) = ?", [ownerIdentifier])
        }
        let columns = [ownerColumn, memberColumn] + (positionColumn.map { [$0] } ?? [])
        let sql = "INSERT INTO \(quoted) (\(columns.map(quoteIdentifier).joined(separator: ", "))) VALUES (\(placeholders(columns.count)))"
        for (index, member) in members.enumerated() {
            try connection.run(sql, [ownerIdentifier, .text(member.storageText)] + (positionColumn == nil ? [] : [.integer(Int64(index))]))
        }
    }

    /// For an ordered relationship stored as other rows' foreign key, the current position of
    /// each member of `owner`.
    package static func positions(of owner: UUID, storage: RelationshipStorage, on connection: SQLiteConnection) throws -> [UUID: SQLValue] {
        guard case .inverseForeignKey(let table, let column, let positionColumn?) = storage else { return [:] }
        var current: [UUID: SQLValue] = [:]
        for row in try connection.rows("SELECT \(EntityTable.quotedIdentifierColumn), \(quoteIdentifier(positionColumn)) FROM \(quoteIdentifier(table)) WHERE \(quoteIdentifier(column)) = ?",
                                       [.text(owner.storageText)]) {
            if case .text(let text) = row[0], let id = UUID(storageText: text) { current[id] = row[1] }
        }
        return current
    }

    /// For an ordered relationship stored as other rows' foreign key, sets `member`'s position.
    package static func setPosition(_ position: Int, of member: UUID, storage: RelationshipStorage, on connection: SQLiteConnection) throws {
        guard case .inverseForeignKey(let table, _, let positionColumn?) = storage else { return }
        try connection.run("UPDATE \(quoteIdentifier(table)) SET \(quoteIdentifier(positionColumn)) = ? WHERE \(EntityTable.quotedIdentifierColumn) = ?",
                           [.integer(Int64(position)), .text(member.storageText)])
    }
}

/// `UPDATE` statements of an entity table by the attribute columns they write (bit `i`: column `i`).
private final class UpdateStatements: Sendable {
    private let statements = Mutex<[UInt64: String]>([:])

    func statement(writing columns: UInt64, _ make: () -> String) -> String {
        if let known = statements.withLock({ $0[columns] }) { return known }
        let made = make()
        statements.withLock { $0[columns] = made }
        return made
    }
}

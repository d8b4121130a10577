import Codecs
import Foundation
import SQLiteDatabase

extension ObjectContext {
    /// The object with this identifier, from memory or the store; `nil` if there is none
    /// (or it is marked for deletion).
    ///
    /// ```swift
    /// let ada = try context.object(Person.self, id: adaID)
    /// ```
    public func object<Entity: PersistentEntity>(_ type: Entity.Type, id: UUID) throws -> Entity? {
        try refreshMergedObjects()
        guard let mapping = store.schema.entity(for: type) else {
            throw StoreError(.invalidSchema, "\(type._$entity.name) is not one of the entities this store was opened with", entity: type._$entity.name)
        }
        guard let object = try object(id: id, mapping: mapping) else { return nil }
        return object._$entityState.status == .deleted ? nil : object as? Entity
    }

    /// Every object of an entity: stored ones and unsaved inserted ones, without those marked
    /// for deletion. Stored objects come in storage order, inserted ones after them.
    public func fetchAll<Entity: PersistentEntity>(_ type: Entity.Type) throws -> [Entity] {
        try refreshMergedObjects()
        guard let mapping = store.schema.entity(for: type) else {
            throw StoreError(.invalidSchema, "\(type._$entity.name) is not one of the entities this store was opened with", entity: type._$entity.name)
        }
        // Collected straight into the typed array: an intermediate array of existentials, 16
        // bytes an object, was as large as a quarter of the objects themselves.
        var result: [Entity] = []
        try forEachObject(mapping, sql: "SELECT \(mapping.selectList) FROM \(quoteIdentifier(mapping.table))", arguments: []) { object in
            if object._$entityState.status != .deleted, let entity = exactCast(object, to: Entity.self) { result.append(entity) }
        }
        result.append(contentsOf: insertedObjects.compactMap {
            $0._$entityState.status == .inserted ? $0 as? Entity : nil
        })
        return result
    }

    /// Runs `sql`, which must select `mapping.selectList` from the entity's table, and returns
    /// the objects, reusing those already in memory.
    func fetchObjects(_ mapping: EntityMapping, sql: String, arguments: [SQLValue]) throws -> [any PersistentEntity] {
        var objects: [any PersistentEntity] = []
        try forEachObject(mapping, sql: sql, arguments: arguments) { objects.append($0) }
        return objects
    }

    /// Runs `sql`, which must select `mapping.selectList` from the entity's table, and hands
    /// `body` the object of each row, reusing those already in memory.
    func forEachObject(_ mapping: EntityMapping, sql: String, arguments: [SQLValue], _ body: (any PersistentEntity) throws -> Void) throws {
        let statement = try connection.cachedStatement(sql)
        // A statement left mid-way (body threw) would keep a read transaction open.
        defer { statement.reset() }
        try statement.bind(arguments)
        while try statement.step() {
            try body(materialize(mapping, statement: statement))
        }
    }

    func object(id: UUID, mapping: EntityMapping) throws -> (any PersistentEntity)? {
        if let registered = registeredObjects[id] { return registered }
        let sql = "SELECT \(mapping.selectList) FROM \(quoteIdentifier(mapping.table)) WHERE \(EntityTable.quotedIdentifierColumn) = ?"
        return try fetchObjects(mapping, sql: sql, arguments: [.text(id.storageText)]).first
    }

    /// The object for the statement's current row, which selects `mapping.selectList`: the
    /// registered one if this context has it (its in-memory state wins over the row), otherwise
    /// a new object filled from the row.
    ///
    /// Identifiers (the object's and its to-one targets') are parsed from SQLite's bytes, and
    /// attributes read their columns from the statement (see ``StoredRow``).
    func materialize(_ mapping: EntityMapping, statement: SQLiteStatement) throws -> any PersistentEntity {
        guard let id = statement.uuid(at: 0) else {
            throw StoreError(.corruptValue, "a row of \(mapping.name) has the identifier \(statement.value(at: 0)), which is not a UUID", entity: mapping.name)
        }
        let (registered, vacancy) = registeredObjects.lookUp(id)
        if let registered { return registered }
        let row = StoredRow(statement: statement)
        let object = mapping.description.entityType.init(_$materializing: MaterializingToken())
        let attributes = mapping.description.attributes
        for index in attributes.indices {
            try mapping.decodeAttribute(index, of: object, from: row, objectID: id)
        }
        let state = object._$entityState
        state.objectID = id
        state.context = self
        state.status = .persistent
        state.isStored = true
        for (index, column) in mapping.foreignKeyColumns.enumerated() {
            state.setFault(column.map { .toOne(statement.uuid(at: $0)) } ?? .toMany, at: index)
        }
        registeredObjects.insert(object, at: vacancy)
        return object
    }

    /// Loads a faulted relationship from the store into memory (no inverse maintenance: the
    /// store already holds both sides consistently).
    func loadRelationship(at index: Int, of object: any PersistentEntity, fault: RelationshipFault) throws {
        let state = object._$entityState
        let mapping = mapping(for: object)
        let relationship = mapping.relationships[index]
        guard let target = store.schema.entity(named: relationship.targetEntityName) else { return }
        let sql: String
        switch (fault, relationship.storage) {
        case (.toOne(let targetID), _):
            let member = try targetID.flatMap { try self.object(id: $0, mapping: target) }
            state.setFault(nil, at: index)
            relationship.description.accessor.replaceMembers(of: object, with: member.map { [$0] } ?? [])
            return
        case (.toMany, .inverseForeignKey(let table, let column, let positionColumn)):
            sql = "SELECT \(target.selectList) FROM \(quoteIdentifier(table)) WHERE \(quoteIdentifier(column)) = ?"
                + (positionColumn.map { " ORDER BY \(quoteIdentifier($0)), rowid" } ?? "")
        case (.toMany, .joinTable(let table, let ownerColumn, let memberColumn, let positionColumn)):
            let columns = ([EntityTable.identifierColumn] + target.columns.map(\.name)).map { "t." + quoteIdentifier($0) }.joined(separator: ", ")
            sql = "SELECT \(columns) FROM \(quoteIdentifier(target.table)) t JOIN \(quoteIdentifier(table)) j ON j.\(quoteIdentifier(memberColumn)) = t.\(EntityTable.quotedIdentifierColumn) WHERE j.\(quoteIdentifier(ownerColumn)) = ?"
                + (positionColumn.map { " ORDER BY j.\(quoteIdentifier($0)), j.rowid" } ?? "")
        case (.toMany, .foreignKey):
            state.setFault(nil, at: index)
            relationship.description.accessor.replaceMembers(of: object, with: [])
            return
        }
        // The members go from the rows straight into the property; a failing row leaves the
        // relationship a fault, as it was.
        try relationship.description.accessor.replaceMembers(of: object) { add in
            try forEachObject(target, sql: sql, arguments: [.text(object.objectID.storageText)]) { add($0 as AnyObject) }
        }
        state.setFault(nil, at: index)
    }
}

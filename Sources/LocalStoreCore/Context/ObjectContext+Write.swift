import Codecs
import Foundation
import SQLiteDatabase

extension ObjectContext {
    /// Writes the pending changes with the open transaction of `connection`.
    func writeChanges() throws {
        let positions = orderedPositions()
        try insertRows(positions: positions)
        for object in updatedObjects where object._$entityState.status == .persistent {
            try updateRow(of: object, positions: positions)
        }
        try updateMovedPositions()
        if store.schema.ownsJoinTables {
            try forEachWrittenObject { object, mapping in
                if mapping.ownsJoinTables { try writeJoinRows(of: object) }
            }
        }
        for object in deletedObjects where object._$entityState.isStored {
            try deleteRow(of: object)
        }
        try checkUniqueness()
    }

    /// Uniqueness (`.unique` attributes and `#Unique` keys) is checked here, after every write of
    /// the save, rather than by a UNIQUE index: a merge may hold two objects with one key until it
    /// resolves them (CONTRACT.md §3.8), and an index would make the merge's statements fail.
    private func checkUniqueness() throws {
        guard store.schema.hasUniqueKeys else { return }
        try forEachWrittenObject { object, mapping in
            let state = object._$entityState
            for (key, indices) in mapping.uniqueKeys {
                guard state.status == .inserted || indices.contains(where: { state.originalAttributes[$0] != nil }) else { continue }
                var values: [SQLValue] = []
                for index in indices { try mapping.description.encodeAttribute(index, of: object, into: &values) }
                try key.checkNoOtherObject(entity: mapping.name, table: mapping.table, objectID: object.objectID, values: values, connection: connection)
            }
        }
    }

    /// Runs `body` for every inserted, then every updated object this save writes, with its
    /// mapping. The two lists are not concatenated: in a large save that copy alone retained and
    /// released every object, once for each pass over them.
    func forEachWrittenObject(_ body: (any PersistentEntity, EntityMapping) throws -> Void) rethrows {
        for objects in [insertedObjects, updatedObjects] {
            for object in objects {
                let status = object._$entityState.status
                guard status == .inserted || status == .persistent else { continue }
                try body(object, mapping(for: object))
            }
        }
    }

    /// For members of changed ordered to-many relationships stored by foreign key: each
    /// member's index, keyed by the member.
    private func orderedPositions() -> [ObjectIdentifier: Int] {
        var positions: [ObjectIdentifier: Int] = [:]
        forEachChangedOrderedRelationship { _, _, members, _ in
            for (index, member) in members.enumerated() { positions[ObjectIdentifier(member)] = index }
        }
        return positions
    }

    private func forEachChangedOrderedRelationship(
        _ body: (any PersistentEntity, RelationshipMapping, [AnyObject], [AnyObject]) throws -> Void
    ) rethrows {
        guard store.schema.hasOrderedInverseForeignKeys else { return }
        try forEachWrittenObject { object, mapping in
            guard mapping.hasOrderedInverseForeignKeys else { return }
            let state = object._$entityState
            for relationship in mapping.relationships {
                guard case .inverseForeignKey(_, _, .some) = relationship.storage else { continue }
                let original = state.originalRelationships[relationship.index]
                guard state.status == .inserted || original != nil else { continue }
                try body(object, relationship, relationship.description.accessor.members(of: object), original ?? [])
            }
        }
    }

    /// Inserts the rows of the new objects. Each entity's INSERT statement is looked up once per
    /// save, and identifiers are bound from text written on the stack: per row, hashing the
    /// statement's SQL to find it and a `String` for each identifier were a fifth of an insert.
    private func insertRows(positions: [ObjectIdentifier: Int]) throws {
        var statements: [ObjectIdentifier: SQLiteStatement] = [:]
        for object in insertedObjects where object._$entityState.status == .inserted {
            let mapping = mapping(for: object)
            let statement: SQLiteStatement
            if let cached = statements[ObjectIdentifier(mapping)] {
                statement = cached
                statement.reset()
            } else {
                statement = try connection.cachedStatement(mapping.insertSQL)
                statements[ObjectIdentifier(mapping)] = statement
            }
            try write(object: object, mapping: mapping) {
                try bindInsert(of: object, mapping: mapping, positions: positions, to: statement)
                while try statement.step() {}
            }
        }
    }

    /// Binds the values of `object`'s row to `mapping.insertSQL`'s parameters, in `selectList` order.
    private func bindInsert(
        of object: any PersistentEntity, mapping: EntityMapping, positions: [ObjectIdentifier: Int], to statement: SQLiteStatement
    ) throws {
        try statement.bind(storageTextOf: object.objectID, at: 1)
        let row = RowBinding(statement: statement)
        for index in mapping.attributeCodings.indices {
            try mapping.bindAttribute(index, of: object, to: row)
        }
        var parameter = Int32(2 + mapping.attributeColumnCount)
        let foreignKeyWrites = mapping.foreignKeyWrites
        // By index: each write is read where it lies, not copied out of the array per object.
        for index in foreignKeyWrites.indices {
            let target = foreignKeyWrites[index].accessor.firstMember(of: object)
            if let target { try statement.bind(storageTextOf: target.objectID, at: parameter) }
            parameter += 1
            if foreignKeyWrites[index].hasPositionColumn {
                if target != nil, let position = positions[ObjectIdentifier(object)] { try statement.bind(.integer(Int64(position)), at: parameter) }
                parameter += 1
            }
        }
    }

    private func updateRow(of object: any PersistentEntity, positions: [ObjectIdentifier: Int]) throws {
        let state = object._$entityState
        let mapping = mapping(for: object)
        var columns: [String] = []
        var values: [SQLValue] = []
        for (index, original) in state.originalAttributes.sorted(by: { $0.key < $1.key }) {
            let attribute = mapping.description.attributes[index]
            var current: [SQLValue] = []
            try mapping.description.encodeAttribute(index, of: object, into: &current)
            guard current != original else { continue }
            columns.append(contentsOf: attribute.columns.map(\.name))
            values.append(contentsOf: current)
        }
        for relationship in mapping.relationships where state.originalRelationships[relationship.index] != nil {
            guard case .foreignKey(let column, let positionColumn) = relationship.storage else { continue }
            let target = relationship.description.accessor.firstMember(of: object)
            columns.append(column)
            values.append(target.map { .text($0.objectID.storageText) } ?? .null)
            if let positionColumn {
                columns.append(positionColumn)
                values.append(target == nil ? .null : positions[ObjectIdentifier(object)].map { .integer(Int64($0)) } ?? .null)
            }
        }
        guard !columns.isEmpty else { return }
        let assignments = columns.map { "\(quoteIdentifier($0)) = ?" }.joined(separator: ", ")
        values.append(.text(object.objectID.storageText))
        try write(object: object, mapping: mapping) {
            try connection.run("UPDATE \(quoteIdentifier(mapping.table)) SET \(assignments) WHERE \(EntityTable.quotedIdentifierColumn) = ?", values)
        }
    }

    /// Stored members of changed ordered relationships whose index changed get their new position.
    private func updateMovedPositions() throws {
        try forEachChangedOrderedRelationship { _, relationship, members, original in
            guard case .inverseForeignKey(let table, _, let positionColumn?) = relationship.storage else { return }
            var originalIndex: [ObjectIdentifier: Int] = [:]
            for (index, member) in original.enumerated() { originalIndex[ObjectIdentifier(member)] = index }
            let sql = "UPDATE \(quoteIdentifier(table)) SET \(quoteIdentifier(positionColumn)) = ? WHERE \(EntityTable.quotedIdentifierColumn) = ?"
            for (index, member) in members.enumerated() {
                let entity = member as! any PersistentEntity
                guard entity._$entityState.status == .persistent, originalIndex[ObjectIdentifier(member)] != index else { continue }
                try connection.run(sql, [.integer(Int64(index)), .text(entity.objectID.storageText)])
            }
        }
    }

    /// Rewrites the join-table rows of changed many-to-many relationships, from the side that owns the table.
    private func writeJoinRows(of object: any PersistentEntity) throws {
        let state = object._$entityState
        for relationship in mapping(for: object).relationships where relationship.storage.ownsJoinTable {
            guard state.status == .inserted || state.originalRelationships[relationship.index] != nil else { continue }
            let members = relationship.description.accessor.members(of: object).map { ($0 as! any PersistentEntity).objectID }
            try EntityTable.replaceJoinRows(of: object.objectID, with: members, storage: relationship.storage,
                                            isNewOwner: state.status == .inserted, on: connection)
        }
    }

    private func deleteRow(of object: any PersistentEntity) throws {
        try mapping(for: object).rows.deleteRow(object.objectID, on: connection)
    }

    /// Runs `body`, the INSERT or UPDATE of one object's row, turning a uniqueness failure into an
    /// error that names the entity, attribute, value and object.
    private func write(object: any PersistentEntity, mapping: EntityMapping, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch var error as StoreError where error.code == .uniqueViolation {
            let column = error.message.split(separator: ".").last.map(String.init) ?? ""
            if let index = mapping.description.attributes.firstIndex(where: { $0.columns.contains { $0.name == column } }) {
                let attribute = mapping.description.attributes[index]
                var current: [SQLValue] = []
                try mapping.description.encodeAttribute(index, of: object, into: &current)
                error.message = "\(mapping.name).\(attribute.name) must be unique, but another \(mapping.name) already has \(current.first ?? .null)"
                error.attribute = attribute.name
            }
            error.entity = mapping.name
            error.objectID = object.objectID
            throw error
        }
    }
}

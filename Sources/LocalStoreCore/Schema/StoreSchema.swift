import SQLiteDatabase
/// The entities of a store, checked against each other and mapped to tables.
///
/// Built when a store opens; cross-entity mistakes (an inverse that does not exist or
/// does not point back, mismatched types) are reported here, naming both sides.
final class StoreSchema: Sendable {
    let entities: [EntityMapping]
    /// Whether any entity has a `.unique` attribute or a `#Unique` key, a relationship with a
    /// `minCount` or `maxCount`, a join table it writes, or an ordered to-many stored in its
    /// members' rows: a save skips its pass over the written objects for a feature no entity has.
    let hasUniqueKeys: Bool, hasCountedRelationships: Bool, ownsJoinTables: Bool, hasOrderedInverseForeignKeys: Bool
    private let indexByName: [String: Int]
    private let indexByType: [ObjectIdentifier: Int]

    func entity(named name: String) -> EntityMapping? { indexByName[name].map { entities[$0] } }

    /// Looked up per object on insert and save: by the class first (hashing a pointer), and by
    /// name only for a class the store was not opened with.
    func entity(for type: any PersistentEntity.Type) -> EntityMapping? {
        if let index = indexByType[ObjectIdentifier(type)] { return entities[index] }
        return entity(named: type._$entity.name)
    }

    init(types: [any PersistentEntity.Type]) throws {
        var descriptions: [EntityDescription] = []
        var seen: Set<String> = []
        for type in types {
            let description = type._$entity
            guard seen.insert(description.name).inserted else {
                throw StoreError(.invalidSchema, "the entity \(description.name) is listed twice", entity: description.name)
            }
            descriptions.append(description)
        }
        let byName = Dictionary(uniqueKeysWithValues: descriptions.map { ($0.name, $0) })
        var mappings: [EntityMapping] = []
        for description in descriptions {
            mappings.append(try StoreSchema.map(description, entities: byName))
        }
        entities = mappings
        hasUniqueKeys = mappings.contains { !$0.uniqueKeys.isEmpty }
        hasCountedRelationships = mappings.contains(where: \.hasCountedRelationships)
        ownsJoinTables = mappings.contains(where: \.ownsJoinTables)
        hasOrderedInverseForeignKeys = mappings.contains(where: \.hasOrderedInverseForeignKeys)
        indexByName = Dictionary(uniqueKeysWithValues: mappings.enumerated().map { ($1.name, $0) })
        indexByType = Dictionary(uniqueKeysWithValues: types.enumerated().map { (ObjectIdentifier($1), $0) })
    }

    private static func map(_ entity: EntityDescription, entities: [String: EntityDescription]) throws -> EntityMapping {
        var columns: [ColumnDescription] = []
        var offsets: [Int] = []
        for attribute in entity.attributes {
            offsets.append(columns.count)
            columns.append(contentsOf: attribute.columns)
        }
        var relationships: [RelationshipMapping] = []
        for (index, relationship) in entity.relationships.enumerated() {
            let (inverse, storage) = try resolve(relationship, of: entity, entities: entities)
            var foreignKeyOffset: Int?
            if case .foreignKey(let column, let positionColumn) = storage {
                foreignKeyOffset = columns.count
                columns.append(ColumnDescription(name: column, type: .uuid, isNullable: true))
                if let positionColumn { columns.append(ColumnDescription(name: positionColumn, type: .int, isNullable: true)) }
            }
            relationships.append(RelationshipMapping(
                index: index, description: relationship, inverse: inverse,
                targetEntityName: relationship.targetEntityName, storage: storage, foreignKeyOffset: foreignKeyOffset))
        }
        try checkIdentifierColumnIsFree(entity.name, properties: entity.attributes.map { ($0.name, $0.columns.map(\.name), false) }
            + relationships.map { ($0.description.name, $0.storage.ownTableColumns, true) })
        try checkUniquenessConstraints(of: entity)
        var names: Set<String> = [EntityTable.identifierColumn]
        for column in columns where !names.insert(column.name).inserted {
            throw StoreError(
                .invalidSchema,
                "two properties of \(entity.name) store in the column '\(column.name)'; give one a different persistentName",
                entity: entity.name)
        }
        return EntityMapping(description: entity, table: entity.name, columns: columns, attributeColumnOffsets: offsets, relationships: relationships)
    }

    /// Refuses `#Unique` keys that are empty or name something other than a stored attribute of
    /// the entity (the macro reports these at compile time; this guards hand-written descriptions).
    private static func checkUniquenessConstraints(of entity: EntityDescription) throws {
        for key in entity.uniquenessConstraints {
            guard !key.isEmpty else {
                throw StoreError(.invalidSchema, "a #Unique key of \(entity.name) lists no attributes", entity: entity.name)
            }
            for name in key where entity.attribute(named: name) == nil {
                let kind = entity.relationship(named: name) == nil ? "not a stored attribute" : "a relationship"
                throw StoreError(.invalidSchema, "the #Unique key (\(key.joined(separator: ", "))) of \(entity.name) names '\(name)', which is \(kind) of \(entity.name)",
                                 entity: entity.name, attribute: name)
            }
        }
    }

    /// Finds and checks the inverse of `relationship`, and decides where the pair is stored.
    private static func resolve(
        _ relationship: RelationshipDescription, of entity: EntityDescription, entities: [String: EntityDescription]
    ) throws -> (RelationshipDescription, RelationshipStorage) {
        let side = "\(entity.name).\(relationship.name)"
        func invalid(_ message: String) -> StoreError {
            StoreError(.invalidSchema, message, entity: entity.name, relationship: relationship.name)
        }
        if relationship.deleteRule == .noAction {
            throw invalid("\(side) uses the delete rule noAction, which would leave dangling references; use nullify, cascade or deny")
        }
        guard let target = entities[relationship.targetEntityName] else {
            throw invalid("\(side) points to \(relationship.targetEntityName), which is not one of the store's entities")
        }
        let otherSide = "\(target.name).\(relationship.inverseName)"
        guard let inverse = target.relationship(named: relationship.inverseName) else {
            throw invalid("\(side) names \(otherSide) as its inverse, but \(target.name) has no relationship '\(relationship.inverseName)'")
        }
        guard inverse.targetEntityName == entity.name else {
            throw invalid("\(side) names \(otherSide) as its inverse, but \(otherSide) points to \(inverse.targetEntityName), not \(entity.name)")
        }
        guard inverse.inverseName == relationship.name else {
            throw invalid("\(side) names \(otherSide) as its inverse, but \(otherSide) names '\(inverse.inverseName)' as its inverse, not '\(relationship.name)'")
        }
        if let minimum = relationship.minCount, let maximum = relationship.maxCount, minimum > maximum {
            throw invalid("\(side) has minCount \(minimum) greater than maxCount \(maximum)")
        }
        switch (relationship.kind, inverse.kind) {
        case (.toOne, .toOne):
            return (inverse, .foreignKey(column: relationship.storedName, positionColumn: nil))
        case (.toOne, let inverseKind):
            let position = inverseKind == .orderedToMany ? relationship.storedName + "_position" : nil
            return (inverse, .foreignKey(column: relationship.storedName, positionColumn: position))
        case (let kind, .toOne):
            let position = kind == .orderedToMany ? inverse.storedName + "_position" : nil
            return (inverse, .inverseForeignKey(table: target.name, column: inverse.storedName, positionColumn: position))
        case (let kind, _) where relationship.isSelfInverse(of: entity.name):
            if kind == .orderedToMany {
                throw invalid("\(side) is its own inverse and ordered; a self-inverse relationship has no owner to order it, declare it as Set<\(entity.name)>")
            }
            // Each pair is stored in both directions (owner → member and member → owner), so either
            // object reads its members from the owner column like any join table it owns.
            return (inverse, .joinTable(
                table: relationship.persistentName ?? "\(entity.name)_\(relationship.name)", ownerColumn: RelationshipStorage.owningSideColumn,
                memberColumn: RelationshipStorage.memberSideColumn, positionColumn: nil))
        case (let kind, let inverseKind):
            if kind == .orderedToMany && inverseKind == .orderedToMany {
                throw invalid("\(side) and its inverse \(otherSide) are both ordered; a many-to-many can be ordered on one side only")
            }
            // One join table per pair, named after its owning side: the ordered side if there is one,
            // otherwise the side that sorts first, so both entities agree on it.
            let ownsTable: Bool
            if kind == .orderedToMany { ownsTable = true } else if inverseKind == .orderedToMany { ownsTable = false } else {
                ownsTable = (entity.name, relationship.name) < (target.name, inverse.name)
            }
            // `persistentName:` on either side names the join table itself (the owning side's
            // wins if both give one, so that both sides agree).
            let (owner, other) = ownsTable ? ((entity, relationship), inverse) : ((target, inverse), relationship)
            let table = owner.1.persistentName ?? other.persistentName ?? "\(owner.0.name)_\(owner.1.name)"
            return (inverse, .joinTable(
                table: table, ownerColumn: ownsTable ? RelationshipStorage.owningSideColumn : RelationshipStorage.memberSideColumn,
                memberColumn: ownsTable ? RelationshipStorage.memberSideColumn : RelationshipStorage.owningSideColumn,
                positionColumn: kind == .orderedToMany ? RelationshipStorage.joinTablePositionColumn : nil))
        }
    }
}

import Foundation
import SQLiteDatabase

extension ObjectContext {
    /// Writes every insert, change and delete in one SQLite transaction: all or nothing.
    ///
    /// Delete rules run first: `.nullify` clears inverses, `.cascade` deletes members, and
    /// `.deny` makes `save()` throw ``StoreError/Code/deleteDenied`` naming the entity,
    /// object and relationship. Relationship `minCount`/`maxCount` and `.unique`
    /// attributes are checked too. When `save()` throws, nothing was written and the
    /// context keeps its changes (fix them and save again, or ``rollback()``).
    public func save() throws {
        try refreshMergedObjects()
        try throwRecordedRelationshipLoadError()
        guard !insertedObjects.isEmpty || !updatedObjects.isEmpty || !deletedObjects.isEmpty else { return }
        let deletionRoots = try applyDeleteRules()
        try validateRelationshipCounts()
        // Delete rules, count checks and writes read relationships, which may fail to load.
        try throwRecordedRelationshipLoadError()
        let observer = store.saveObserver
        let hub = store.changeHub
        let rewritten = try hub.publishing { ticket, storeChange in
            try connection.inTransaction { () -> Set<UUID> in
                try writeChanges()
                try throwRecordedRelationshipLoadError()
                // Change capture for sync and subscribers share one description of the save,
                // built only when either needs it.
                let wantsStoreChange = hub.hasSubscribers
                guard observer != nil || wantsStoreChange else { return [] }
                // Subscribers alone need no inserted object's values: only change capture does.
                let changes = try savedChanges(deletionRoots: deletionRoots, describingInsertedValues: observer != nil)
                let rewritten = try observer?.storeWillCommit(changes, connection: connection) ?? []
                if wantsStoreChange {
                    storeChange = StoreChange(savedChanges: changes)
                    storeChange?.savingContext = ObjectIdentifier(self)
                    ticket = hub.reserveTicket()
                }
                return rewritten
            }
        }
        didSave()
        if !rewritten.isEmpty { try refresh(objectIDs: rewritten) }
    }

    // MARK: Delete rules

    /// Finds everything the pending deletes cascade to, refuses the lot if a `.deny` rule
    /// objects, then detaches the deleted objects from the graph.
    /// Returns, for each deleted object, the object whose deletion it follows from.
    @discardableResult
    func applyDeleteRules() throws -> [ObjectIdentifier: UUID] {
        let plan = try SaveRules.planDeletes(
            deletedObjects.map(GraphNode.init),
            relationships: { node in
                let entity = type(of: node.object)._$entity
                return entity.relationships.enumerated().map { index, relationship in
                    SaveRules.DeletedRelationship(name: relationship.name, rule: relationship.deleteRule) {
                        ObjectGraph.fault(node.object, index: index)
                        return relationship.accessor.members(of: node.object).map { GraphNode($0 as! any PersistentEntity) }
                    }
                }
            },
            identity: { (type(of: $0.object)._$entity.name, $0.object.objectID) })
        let queue = plan.deleted.map(\.object)
        for object in queue {
            if object._$entityState.status != .deleted {
                object._$entityState.status = .deleted
                deletedObjects.append(object)
            }
            let entity = type(of: object)._$entity
            for index in entity.relationships.indices {
                ObjectGraph.replaceMembers(of: object, link: ObjectGraph.Link(entity, index: index), with: [])
            }
        }
        var roots: [ObjectIdentifier: UUID] = [:]
        for (node, root) in plan.roots { roots[ObjectIdentifier(node.object)] = root.object.objectID }
        return roots
    }

    // MARK: Change capture

    /// What this save changes, object by object, in a deterministic order: inserts, updates,
    /// then deletes, each in the order the context first saw them. Without
    /// `describingInsertedValues`, inserts list no attributes or relationships: subscribers to the
    /// store's changes need only the new objects' identifiers and entities, not their values
    /// encoded a second time.
    func savedChanges(
        deletionRoots: [ObjectIdentifier: UUID], describingInsertedValues: Bool = true
    ) throws(StoreError) -> [SavedObjectChange] {
        var changes: [SavedObjectChange] = []
        func ids(_ members: [AnyObject]) -> [UUID] { members.map { ($0 as! any PersistentEntity).objectID } }
        // Inserts are most of a large save: their loops go through the mapping's accessors and
        // by index, as copying each attribute's or relationship's description retained all its fields.
        for object in insertedObjects where object._$entityState.status == .inserted {
            let mapping = mapping(for: object)
            var change = SavedObjectChange(kind: .insert, entity: mapping.name, objectID: object.objectID, attributes: [], relationships: [])
            guard describingInsertedValues else {
                changes.append(change)
                continue
            }
            change.attributes.reserveCapacity(mapping.attributeCodings.count)
            for index in mapping.attributeCodings.indices {
                var values: [SQLValue] = []
                try mapping.encodeAttribute(index, of: object, into: &values)
                change.attributes.append((mapping.description.attributes[index].name, values))
            }
            let relationships = mapping.description.relationships
            for index in relationships.indices {
                let members = ids(relationships[index].accessor.members(of: object))
                if !members.isEmpty { change.relationships.append((relationships[index].name, [], members)) }
            }
            changes.append(change)
        }
        for object in updatedObjects where object._$entityState.status == .persistent {
            let state = object._$entityState
            let entity = type(of: object)._$entity
            var change = SavedObjectChange(kind: .update, entity: entity.name, objectID: object.objectID, attributes: [], relationships: [])
            for (index, original) in state.originalAttributes.sorted(by: { $0.key < $1.key }) {
                var values: [SQLValue] = []
                try entity.encodeAttribute(index, of: object, into: &values)
                if values != original {
                    change.attributes.append((entity.attributes[index].name, values))
                    change.previousValues.append(original)
                }
            }
            for (index, original) in state.originalRelationships.sorted(by: { $0.key < $1.key }) {
                let before = ids(original)
                let after = ids(entity.relationships[index].accessor.members(of: object))
                if before != after { change.relationships.append((entity.relationships[index].name, before, after)) }
            }
            if !change.attributes.isEmpty || !change.relationships.isEmpty { changes.append(change) }
        }
        for object in deletedObjects where object._$entityState.isStored {
            let state = object._$entityState
            let entity = type(of: object)._$entity
            changes.append(SavedObjectChange(
                kind: .delete, entity: entity.name, objectID: object.objectID,
                attributes: try entity.attributes.enumerated().map { (index, attribute) throws(StoreError) in
                    if let original = state.originalAttributes[index] { return (attribute.name, original) }
                    var values: [SQLValue] = []
                    try entity.encodeAttribute(index, of: object, into: &values)
                    return (attribute.name, values)
                },
                relationships: state.originalRelationships.sorted(by: { $0.key < $1.key }).compactMap { index, original in
                    let before = ids(original)
                    return before.isEmpty ? nil : (entity.relationships[index].name, before, [])
                },
                deletionRoot: deletionRoots[ObjectIdentifier(object)] ?? object.objectID))
        }
        return changes
    }

    // MARK: Validation

    func validateRelationshipCounts() throws {
        guard store.schema.hasCountedRelationships else { return }
        try forEachWrittenObject { object, mapping in
            guard mapping.hasCountedRelationships else { return }
            let state = object._$entityState
            let entity = mapping.description
            for (index, relationship) in entity.relationships.enumerated()
            where relationship.minCount != nil || relationship.maxCount != nil {
                guard state.status == .inserted || state.originalRelationships[index] != nil else { continue }
                try SaveRules.checkCount(relationship.accessor.count(of: object), entity: entity.name, relationship: relationship.name,
                                         minCount: relationship.minCount, maxCount: relationship.maxCount, of: object.objectID)
            }
        }
    }

    // MARK: After a save

    func didSave() {
        for object in insertedObjects where object._$entityState.status == .inserted {
            object._$entityState.status = .persistent
            object._$entityState.isStored = true
        }
        for object in updatedObjects {
            let state = object._$entityState
            state.discardOriginalValues()
            state.isQueuedForUpdate = false
        }
        for object in deletedObjects {
            let state = object._$entityState
            state.status = .deletedAndSaved
            state.isStored = false
            state.discardOriginalValues()
            state.isQueuedForUpdate = false
            state.context = nil
            registeredObjects[state.objectID] = nil
        }
        insertedObjects.removeAll()
        updatedObjects.removeAll()
        deletedObjects.removeAll()
    }
}

/// An object of the graph as a node of ``SaveRules/planDeletes(_:relationships:identity:)``:
/// equal when it is the same object.
private struct GraphNode: Hashable {
    let object: any PersistentEntity

    init(_ object: any PersistentEntity) { self.object = object }

    static func == (left: GraphNode, right: GraphNode) -> Bool { left.object === right.object }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(object)) }
}

extension StoreChange {
    /// The change a save commits, from what change capture records of it.
    init(savedChanges: [SavedObjectChange]) {
        self.init(origin: .save)
        // Sized up front: a large save would otherwise rehash these tables many times over.
        entityNames.reserveCapacity(savedChanges.count)
        let insertedCount = savedChanges.reduce(0) { $1.kind == .insert ? $0 + 1 : $0 }
        inserted.reserveCapacity(insertedCount)
        updated.reserveCapacity(savedChanges.count - insertedCount)
        for change in savedChanges {
            setEntity(change.entity, of: change.objectID)
            switch change.kind {
            case .insert: inserted.insert(change.objectID)
            case .delete: deleted.insert(change.objectID)
            case .update:
                updated.insert(change.objectID)
                changedProperties[change.objectID] = Set(change.attributes.map(\.name) + change.relationships.map(\.name))
            }
        }
    }
}

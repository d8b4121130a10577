import Codecs
import Foundation
import SQLiteDatabase

extension ObjectContext {
    /// Re-reads the context's objects from the store, for example after sync merged remote
    /// changes, keeping this context's unsaved edits.
    ///
    /// Attributes and relationships the context has not changed take the stored values
    /// (relationships are reloaded on next access); changed ones keep their unsaved values,
    /// which the next save writes over the merged ones. Objects deleted in the store leave
    /// the context, even if they had unsaved changes (a delete wins over an update).
    ///
    /// - Parameter objectIDs: the objects to refresh; `nil` refreshes every registered object.
    public func refresh(objectIDs: Set<UUID>? = nil) throws {
        let candidates: [any PersistentEntity]
        if let objectIDs {
            candidates = objectIDs.sorted { $0.storageText < $1.storageText }.compactMap { registeredObjects[$0] }
        } else {
            candidates = Array(registeredObjects.values)
        }
        var vanished: [any PersistentEntity] = []
        for object in candidates where object._$entityState.isStored {
            let mapping = mapping(for: object)
            let rows = try connection.rows(
                "SELECT \(mapping.selectList) FROM \(quoteIdentifier(mapping.table)) WHERE \(EntityTable.quotedIdentifierColumn) = ?", [.text(object.objectID.storageText)])
            guard let row = rows.first else {
                vanished.append(object)
                continue
            }
            try reload(object, from: row, mapping: mapping)
        }
        for object in vanished { detachDeletedInStore(object) }
    }

    /// Unsaved edits of attributes with a merge policy are rebased on the merged row, so the next
    /// save records what the app did to the value it now shows: a counter keeps its unsaved
    /// increment on top of the merged value (10 loaded, 11 set, 12 merged: 13, saved as +1),
    /// and `.max`, `.min` and `.custom` attributes merge the edit with the merged value on save.
    private func rebaseUnsavedMergedEdits(of object: any PersistentEntity, from row: [SQLValue], mapping: EntityMapping) throws {
        let state = object._$entityState
        guard state.hasOriginalValues else { return }
        let attributes = mapping.description.attributes
        for index in attributes.indices where attributes[index].mergePolicy.kind != .lastWriterWins {
            guard let original = state.originalAttributes[index] else { continue }
            let offset = 1 + mapping.attributeColumnOffsets[index]
            let merged = Array(row[offset..<offset + original.count])
            guard merged != original else { continue }
            state.originalAttributes[index] = merged
            guard attributes[index].mergePolicy.kind == .counter, case .integer(let loaded) = original[0], case .integer(let total) = merged[0] else { continue }
            var edited: [SQLValue] = []
            try attributes[index].accessor.encode(object, into: &edited)
            guard case .integer(let value) = edited[0] else { continue }
            let (increment, overflowA) = value.subtractingReportingOverflow(loaded)
            let (rebased, overflowB) = total.addingReportingOverflow(increment)
            guard !overflowA, !overflowB else { continue }
            try withObservedChange(of: object, keyPath: attributes[index].keyPath) {
                try attributes[index].accessor.decode(object, from: StoredRow(values: [.integer(rebased)]), at: 0)
            }
        }
    }

    private func reload(_ object: any PersistentEntity, from row: [SQLValue], mapping: EntityMapping) throws {
        let state = object._$entityState
        // Only an object that has a registrar can have observers; only its values are compared
        // with the row, so that observers hear of the properties that really change.
        let isObserved = state.observationRegistrar != nil
        let attributes = mapping.description.attributes
        try rebaseUnsavedMergedEdits(of: object, from: row, mapping: mapping)
        for index in attributes.indices where state.originalAttributes[index] == nil {
            guard isObserved else {
                try mapping.decodeAttribute(index, of: object, from: StoredRow(values: row), objectID: object.objectID)
                continue
            }
            let attribute = attributes[index]
            let offset = 1 + mapping.attributeColumnOffsets[index]
            var current: [SQLValue] = []
            try attribute.accessor.encode(object, into: &current)
            if current[...] == row[offset..<offset + current.count] { continue }
            try withObservedChange(of: object, keyPath: attribute.keyPath) {
                try mapping.decodeAttribute(index, of: object, from: StoredRow(values: row), objectID: object.objectID)
            }
        }
        for relationship in mapping.relationships where state.originalRelationships[relationship.index] == nil {
            let index = relationship.index
            if let offset = relationship.foreignKeyOffset {
                var target: UUID?
                if case .text(let text) = row[1 + offset] { target = UUID(storageText: text) }
                if isObserved && toOneTarget(of: object, at: index) != target {
                    withObservedChange(of: object, keyPath: relationship.description.keyPath) { state.setFault(.toOne(target), at: index) }
                } else {
                    state.setFault(.toOne(target), at: index)
                }
            } else if isObserved && state.fault(at: index) == nil {
                // A loaded to-many an observer may have read: load it again now and compare, so
                // observers hear of it only when its members changed. They hear after the fact;
                // the members as they were are gone once the relationship is reloaded.
                let before = relationship.description.accessor.members(of: object)
                state.setFault(.toMany, at: index)
                ObjectGraph.fault(object, index: index)
                let after = relationship.description.accessor.members(of: object)
                if !before.elementsEqual(after, by: { $0 === $1 }) {
                    notifyObservers(of: object, keyPath: relationship.description.keyPath, .willSet)
                    notifyObservers(of: object, keyPath: relationship.description.keyPath, .didSet)
                }
            } else {
                state.setFault(.toMany, at: index)
            }
        }
    }

    /// The identifier of the target of `object`'s to-one relationship at `index`, loaded or not.
    private func toOneTarget(of object: any PersistentEntity, at index: Int) -> UUID? {
        if let fault = object._$entityState.fault(at: index) {
            guard case .toOne(let target) = fault else { return nil }
            return target
        }
        return type(of: object)._$entity.relationships[index].accessor.firstMember(of: object)?.objectID
    }

    /// Removes an object that no longer exists in the store from the context and from the
    /// loaded relationships of the objects around it.
    private func detachDeletedInStore(_ object: any PersistentEntity) {
        let state = object._$entityState
        let entity = type(of: object)._$entity
        for (index, relationship) in entity.relationships.enumerated() where state.fault(at: index) == nil {
            let inverseName = relationship.inverseName
            for member in relationship.accessor.members(of: object) {
                let neighbour = member as! any PersistentEntity
                let neighbourEntity = type(of: neighbour)._$entity
                guard let inverseIndex = neighbourEntity.relationshipIndex(named: inverseName),
                      neighbour._$entityState.fault(at: inverseIndex) == nil else { continue }
                let inverse = neighbourEntity.relationships[inverseIndex]
                withObservedChange(of: neighbour, keyPath: inverse.keyPath) { inverse.accessor.remove(object, from: neighbour) }
            }
            withObservedChange(of: object, keyPath: relationship.keyPath) { relationship.accessor.replaceMembers(of: object, with: []) }
        }
        state.removeAllFaults()
        state.discardOriginalValues()
        state.status = .deletedAndSaved
        state.isStored = false
        state.context = nil
        registeredObjects[state.objectID] = nil
        insertedObjects.removeAll { $0 === object }
        updatedObjects.removeAll { $0 === object }
        deletedObjects.removeAll { $0 === object }
        state.isQueuedForUpdate = false
    }
}

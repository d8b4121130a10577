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

    private func reload(_ object: any PersistentEntity, from row: [SQLValue], mapping: EntityMapping) throws {
        let state = object._$entityState
        let attributes = mapping.description.attributes
        for index in attributes.indices where state.originalAttributes[index] == nil {
            try mapping.decodeAttribute(index, of: object, from: row, objectID: object.objectID)
        }
        for relationship in mapping.relationships where state.originalRelationships[relationship.index] == nil {
            if let offset = relationship.foreignKeyOffset {
                if case .text(let text) = row[1 + offset], let target = UUID(storageText: text) {
                    state.setFault(.toOne(target), at: relationship.index)
                } else {
                    state.setFault(.toOne(nil), at: relationship.index)
                }
            } else {
                state.setFault(.toMany, at: relationship.index)
            }
        }
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
                neighbourEntity.relationships[inverseIndex].accessor.remove(object, from: neighbour)
            }
            relationship.accessor.replaceMembers(of: object, with: [])
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

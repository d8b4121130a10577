import Foundation
import SQLiteDatabase

/// A unit of work on a store: objects inserted, fetched, changed and deleted in it are
/// written together by ``save()`` (one SQLite transaction: all or nothing) or undone by
/// ``rollback()``.
///
/// A context holds one object per stored row (an identity map) and loads relationships on
/// first access. It is not thread-safe: use it from one thread or task at a time.
///
/// ```swift
/// let context = try store.makeContext()
/// let ada = Person()
/// ada.name = "Ada"
/// context.insert(ada)
/// try context.save()
/// ```
public final class ObjectContext {
    /// The store this context reads and writes.
    public let store: ObjectStore
    let connection: SQLiteConnection
    var registeredObjects: [UUID: any PersistentEntity] = [:]
    var insertedObjects: [any PersistentEntity] = []
    var updatedObjects: [any PersistentEntity] = []
    var deletedObjects: [any PersistentEntity] = []

    init(store: ObjectStore, connection: SQLiteConnection) {
        self.store = store
        self.connection = connection
    }

    /// Whether anything was inserted, changed or deleted since the last save or rollback.
    public var hasChanges: Bool {
        !insertedObjects.isEmpty || !deletedObjects.isEmpty || updatedObjects.contains { $0.hasChanges }
    }

    /// Objects inserted and not saved yet.
    public var insertedModels: [any PersistentEntity] { insertedObjects.filter { $0._$entityState.status == .inserted } }
    /// Objects marked for deletion by the next save.
    public var deletedModels: [any PersistentEntity] { deletedObjects }

    func mapping(for object: any PersistentEntity) -> EntityMapping {
        guard let mapping = store.schema.entity(for: type(of: object)) else {
            preconditionFailure("LocalStore: \(type(of: object)._$entity.name) is not one of the entities this store was opened with")
        }
        return mapping
    }

    /// Registers a new object (and the new objects it is related to) for insertion on the next save.
    public func insert<Entity: PersistentEntity>(_ object: Entity) {
        insert(object as any PersistentEntity)
    }

    func insert(_ object: any PersistentEntity) {
        let state = object._$entityState
        if let owner = state.context {
            precondition(owner === self, "LocalStore: \(type(of: object)._$entity.name) \(object.objectID) belongs to another context")
            if state.status == .deleted {
                // Inserting an object marked for deletion takes the deletion back.
                state.status = state.isStored ? .persistent : .inserted
                deletedObjects.removeAll { $0 === object }
            }
            return
        }
        _ = mapping(for: object)
        state.context = self
        state.status = .inserted
        registeredObjects[state.objectID] = object
        insertedObjects.append(object)
        // New related objects come along, as they would with Core Data or SwiftData.
        let entity = type(of: object)._$entity
        for relationship in entity.relationships {
            if relationship.kind == .toOne {
                // Most relationships of a new object are to-ones: no member array, no cast.
                if let related = relationship.accessor.firstMember(of: object), related._$entityState.status == .transient {
                    insert(related)
                }
                continue
            }
            for member in relationship.accessor.members(of: object) {
                let related = member as! any PersistentEntity
                if related._$entityState.status == .transient { insert(related) }
            }
        }
    }

    /// Marks an object for deletion. Delete rules run on the next ``save()``.
    public func delete<Entity: PersistentEntity>(_ object: Entity) {
        delete(object as any PersistentEntity)
    }

    func delete(_ object: any PersistentEntity) {
        let state = object._$entityState
        guard state.context === self else { return }
        guard state.status == .persistent || state.status == .inserted else { return }
        state.status = .deleted
        deletedObjects.append(object)
    }

    /// Called by generated setters before an attribute changes: keeps its value as last saved.
    func willChangeAttribute(of object: any PersistentEntity, named name: String) {
        let state = object._$entityState
        guard state.isStored else { return }
        let entity = type(of: object)._$entity
        guard let index = entity.attributeIndex(named: name), state.originalAttributes[index] == nil else { return }
        var values: [SQLValue] = []
        if (try? entity.encodeAttribute(index, of: object, into: &values)) == nil {
            // The saved value no longer encodes (only a `.codable` type whose encoding changed
            // can do that). NULLs differ from whatever is set next, so the save still writes
            // the attribute; a rollback leaves it as it is, since NULL does not decode to it.
            values = Array(repeating: .null, count: entity.attributes[index].columns.count)
        }
        state.originalAttributes[index] = values
        registerUpdated(object)
    }

    func registerUpdated(_ object: any PersistentEntity) {
        let state = object._$entityState
        guard !state.isQueuedForUpdate else { return }
        state.isQueuedForUpdate = true
        updatedObjects.append(object)
    }

    /// Undoes every change since the last save: changed objects get their saved values back,
    /// deleted ones are restored, inserted ones leave the context.
    public func rollback() {
        for object in updatedObjects + deletedObjects {
            restoreSavedValues(of: object)
        }
        for object in deletedObjects where object._$entityState.status == .deleted {
            object._$entityState.status = object._$entityState.isStored ? .persistent : .inserted
        }
        for object in insertedObjects where !object._$entityState.isStored {
            let state = object._$entityState
            let entity = type(of: object)._$entity
            for relationship in entity.relationships { relationship.accessor.replaceMembers(of: object, with: []) }
            state.context = nil
            state.status = .transient
            registeredObjects[state.objectID] = nil
        }
        insertedObjects.removeAll()
        updatedObjects.removeAll()
        deletedObjects.removeAll()
    }

    private func restoreSavedValues(of object: any PersistentEntity) {
        let state = object._$entityState
        let entity = type(of: object)._$entity
        for (index, values) in state.originalAttributes {
            // These values were encoded from this very attribute, so decoding cannot fail.
            try? entity.attributes[index].accessor.decode(object, from: values, at: 0)
        }
        for (index, members) in state.originalRelationships {
            entity.relationships[index].accessor.replaceMembers(of: object, with: members)
        }
        state.originalAttributes.removeAll()
        state.originalRelationships.removeAll()
        state.isQueuedForUpdate = false
    }

    /// The registered object with this identifier, if this context has it in memory.
    public func registeredObject<Entity: PersistentEntity>(_ type: Entity.Type, id: UUID) -> Entity? {
        registeredObjects[id] as? Entity
    }
}

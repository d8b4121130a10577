import SQLiteDatabase

extension ObjectContext {
    /// Loads `object`'s relationship at `keyPath` from the store if it is not loaded yet, and
    /// returns its value; throws when the store fails.
    ///
    /// Reading a relationship property loads it too, but a property cannot throw: when the store
    /// fails there, the property reads as empty (or `nil`) and the error is kept in
    /// ``relationshipLoadError``. Use this where a failing store must be noticed at once:
    ///
    /// ```swift
    /// let members = try context.load(\.members, of: team)
    /// ```
    ///
    /// Attributes are always loaded with their object; for them this returns the value.
    ///
    /// - Throws: ``StoreError`` naming the entity, relationship and object (with the SQL and
    ///   SQLite's code when SQLite failed); `.wrongContext` when `object` belongs to another context.
    @discardableResult
    public func load<Entity: PersistentEntity, Value>(_ keyPath: KeyPath<Entity, Value>, of object: Entity) throws -> Value {
        let state = object._$entityState
        if let owner = state.context, owner !== self {
            throw StoreError(.wrongContext, "\(Entity._$entity.name) \(object.objectID.storageText) belongs to another context",
                             entity: Entity._$entity.name, objectID: object.objectID, path: store.path)
        }
        let erased: AnyKeyPath = keyPath
        if let index = Entity._$entity.relationships.firstIndex(where: { $0.keyPath == erased }) {
            try ObjectGraph.load(object, index: index)
        }
        return object[keyPath: keyPath]
    }

    /// Keeps the first error of a relationship property that could not load, until the next
    /// ``save()`` (which throws it) or ``rollback()``.
    func recordRelationshipLoadError(_ error: any Error) {
        guard relationshipLoadError == nil else { return }
        relationshipLoadError = error as? StoreError ?? StoreError(.sqlite, "\(error)", path: store.path)
    }

    /// Throws the kept relationship load error, if any: saving a graph whose relationships read
    /// as empty because the store failed would write that emptiness.
    func throwRecordedRelationshipLoadError() throws {
        guard var error = relationshipLoadError else { return }
        error.message = "the context read a relationship that could not be loaded, so it cannot save; roll back and load again: \(error.message)"
        throw error
    }
}

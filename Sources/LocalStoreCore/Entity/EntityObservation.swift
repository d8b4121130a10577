import Observation

// Swift Observation for entities. Generated getters register reads (`_$access`), generated
// attribute setters wrap the change (`_$withMutation`); everything else that changes an
// object's properties (relationship changes on either side, refresh, rollback) goes through
// `withObservedChange`.

/// Registers a read of an attribute or relationship with Swift Observation. Called from generated getters.
public func _$access<Root: PersistentEntity, Value>(_ object: Root, _ keyPath: KeyPath<Root, Value>) {
    object._$entityState.makeObservationRegistrar().access(object, keyPath: keyPath)
}

/// Runs an attribute change between the observers' `willSet` and `didSet`. Called from generated setters.
///
/// Inlined into the entity's module, and the key path made only when there is a registrar:
/// a setter of an unobserved object then costs one check more than before.
@inlinable
public func _$withMutation<Root: PersistentEntity, Value>(
    _ object: Root, _ keyPath: @autoclosure () -> KeyPath<Root, Value>, _ mutation: () -> Void
) {
    // No registrar means nothing ever read the object through an accessor, so nobody observes it.
    guard let registrar = object._$entityState.observationRegistrar else { return mutation() }
    registrar.withMutation(of: object, keyPath: keyPath(), mutation)
}

/// When an observed change is announced relative to the change itself.
enum ObservationPhase {
    case willSet
    case didSet
}

/// Tells the observers of `object`'s property at `keyPath` (the key path of its
/// ``AttributeDescription`` or ``RelationshipDescription``) that it changes.
func notifyObservers(of object: any PersistentEntity, keyPath: AnyKeyPath, _ phase: ObservationPhase) {
    guard let registrar = object._$entityState.observationRegistrar else { return }
    notify(registrar, object, keyPath, phase)
}

/// Runs `mutation` between the `willSet` and `didSet` of `object`'s property at `keyPath`.
///
/// The key path is looked up in the schema only for an object that has a registrar: most
/// changes are to objects nobody observes, and need no key path.
func withObservedChange<T>(
    of object: any PersistentEntity, keyPath: @autoclosure () -> AnyKeyPath, _ mutation: () throws -> T
) rethrows -> T {
    guard let registrar = object._$entityState.observationRegistrar else { return try mutation() }
    let keyPath = keyPath()
    notify(registrar, object, keyPath, .willSet)
    defer { notify(registrar, object, keyPath, .didSet) }
    return try mutation()
}

/// The registrar takes typed key paths while the schema keeps them type-erased: this opens the
/// object's class and the property's value type to call it.
private func notify<Root: PersistentEntity>(_ registrar: ObservationRegistrar, _ object: Root, _ keyPath: AnyKeyPath, _ phase: ObservationPhase) {
    func typed<Value>(_: Value.Type) {
        guard let typedKeyPath = keyPath as? KeyPath<Root, Value> else { return }
        switch phase {
        case .willSet: registrar.willSet(object, keyPath: typedKeyPath)
        case .didSet: registrar.didSet(object, keyPath: typedKeyPath)
        }
    }
    _openExistential(type(of: keyPath).valueType, do: typed)
}

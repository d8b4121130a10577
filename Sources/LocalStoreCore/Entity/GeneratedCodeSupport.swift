// Entry points for the code `@Entity` generates. They are public because the generated
// accessors live in the app's module; their `_$` prefix keeps them out of the way.

/// Records that an attribute is about to change. Called from generated setters.
public func _$willChangeAttribute<Root: PersistentEntity>(_ object: Root, _ name: String) {
    // Unmanaged objects track nothing: the check keeps setters cheap before insertion.
    guard let context = object._$entityState.context else { return }
    context.willChangeAttribute(of: object, named: name)
}

/// Loads a relationship from the store if it is still a fault. Called from generated getters.
public func _$willReadRelationship<Root: PersistentEntity>(_ object: Root, _ name: String) {
    guard object._$entityState.hasFaults else { return }
    ObjectGraph.fault(object, relationshipNamed: name)
}

/// Sets a to-one relationship and updates the inverse. Called from generated setters.
public func _$setRelationship<Root: PersistentEntity, Target: PersistentEntity>(_ object: Root, _ name: String, to target: Target?) {
    ObjectGraph.setTarget(of: object, relationshipNamed: name, to: target)
}

/// Replaces an unordered to-many relationship and updates the inverses. Called from generated setters.
public func _$setRelationship<Root: PersistentEntity, Target: PersistentEntity>(_ object: Root, _ name: String, to members: Set<Target>) {
    ObjectGraph.replaceMembers(of: object, relationshipNamed: name, with: Array(members))
}

/// Replaces an ordered to-many relationship and updates the inverses. Called from generated setters.
public func _$setRelationship<Root: PersistentEntity, Target: PersistentEntity>(_ object: Root, _ name: String, to members: [Target]) {
    ObjectGraph.replaceMembers(of: object, relationshipNamed: name, with: members)
}

/// Adds a member to a to-many relationship and updates the inverse. Called from generated `addTo…` helpers.
public func _$addToRelationship<Root: PersistentEntity, Target: PersistentEntity>(_ object: Root, _ name: String, _ member: Target) {
    ObjectGraph.add(member, to: object, relationshipNamed: name, at: nil)
}

/// Removes a member from a to-many relationship and updates the inverse. Called from generated `removeFrom…` helpers.
public func _$removeFromRelationship<Root: PersistentEntity, Target: PersistentEntity>(_ object: Root, _ name: String, _ member: Target) {
    ObjectGraph.remove(member, from: object, relationshipNamed: name)
}

/// Inserts a member into an ordered relationship at `index` (moving it if present) and updates
/// the inverse. Called from generated `insertInto…(_:at:)` helpers.
public func _$insertIntoRelationship<Root: PersistentEntity, Target: PersistentEntity>(_ object: Root, _ name: String, _ member: Target, at index: Int) {
    ObjectGraph.add(member, to: object, relationshipNamed: name, at: index)
}

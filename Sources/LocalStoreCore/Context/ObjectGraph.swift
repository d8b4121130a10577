/// Keeps both sides of every relationship in step in memory.
///
/// Every change goes through here: the generated setters and `addTo…`/`removeFrom…`
/// helpers, delete rules, and merges. Before a relationship changes, both it and the
/// inverse sides it touches are loaded (faulted in), so a relationship still in the store
/// never disagrees with unsaved changes in memory.
enum ObjectGraph {
    /// A relationship of a particular object's entity together with its inverse.
    ///
    /// It keeps the two entities and indices, not copies of the two descriptions: every
    /// relationship setter makes one, and copying two descriptions retained and released a
    /// dozen strings and references each time.
    struct Link {
        let index: Int
        let entity: EntityDescription
        let inverseIndex: Int
        let inverseEntity: EntityDescription

        var relationship: RelationshipDescription { entity.relationships[index] }
        var inverse: RelationshipDescription { inverseEntity.relationships[inverseIndex] }

        init(_ entity: EntityDescription, named name: String) {
            guard let index = entity.relationshipIndex(named: name) else {
                preconditionFailure("LocalStore: \(entity.name) has no relationship '\(name)'")
            }
            self.init(entity, index: index)
        }

        init(_ entity: EntityDescription, index: Int) {
            let target = entity.relationships[index].targetType._$entity
            let inverseName = entity.relationships[index].inverseName
            guard let inverseIndex = target.relationshipIndex(named: inverseName) else {
                preconditionFailure("LocalStore: \(entity.name).\(entity.relationships[index].name) names \(target.name).\(inverseName) as its inverse, which does not exist")
            }
            self.index = index
            self.entity = entity
            self.inverseIndex = inverseIndex
            self.inverseEntity = target
        }
    }

    // MARK: Faulting

    static func fault(_ object: any PersistentEntity, relationshipNamed name: String) {
        guard let index = type(of: object)._$entity.relationshipIndex(named: name) else { return }
        fault(object, index: index)
    }

    static func fault(_ object: any PersistentEntity, index: Int) {
        do {
            try load(object, index: index)
        } catch {
            // Accessors cannot throw. The relationship stays a fault, so the next access tries
            // again, and reads as empty (nil) meanwhile. The context keeps the error and its next
            // save throws it: a graph changed on the strength of that empty reading is never written.
            object._$entityState.context?.recordRelationshipLoadError(error)
        }
    }

    /// Loads `object`'s relationship at `index` if it is a fault; throws when the store fails
    /// (I/O, a corrupt row), naming the entity, relationship and object.
    static func load(_ object: any PersistentEntity, index: Int) throws {
        let state = object._$entityState
        guard let fault = state.fault(at: index) else { return }
        guard let context = state.context else {
            state.setFault(nil, at: index)
            return
        }
        do {
            try context.loadRelationship(at: index, of: object, fault: fault)
        } catch {
            let entity = type(of: object)._$entity
            let relationship = entity.relationships[index].name
            var failure = error as? StoreError ?? StoreError(.sqlite, "\(error)")
            failure.message = "cannot load \(entity.name).\(relationship) of \(object.objectID.storageText): \(failure.message)"
            failure.entity = failure.entity ?? entity.name
            failure.relationship = failure.relationship ?? relationship
            failure.objectID = failure.objectID ?? object.objectID
            throw failure
        }
    }

    // MARK: Changes

    /// Makes `owner.relationship` hold exactly `members` (in this order, when ordered).
    static func replaceMembers(of owner: any PersistentEntity, relationshipNamed name: String, with members: [any PersistentEntity]) {
        let link = Link(type(of: owner)._$entity, named: name)
        replaceMembers(of: owner, link: link, with: members)
    }

    /// Points `owner`'s to-one relationship `name` at `target` (`nil`: at nothing).
    static func setTarget(of owner: any PersistentEntity, relationshipNamed name: String, to target: (any PersistentEntity)?) {
        let link = Link(type(of: owner)._$entity, named: name)
        fault(owner, index: link.index)
        setTarget(of: owner, link: link, to: target)
    }

    /// The to-one setter: the steps of `replaceMembers` without building a set and an array per
    /// call, which made up a fifth of inserting an object with a to-one. `owner` is loaded.
    private static func setTarget(of owner: any PersistentEntity, link: Link, to target: (any PersistentEntity)?) {
        if let current = link.relationship.accessor.firstMember(of: owner), current !== target {
            remove(current, from: owner, link: link)
        }
        if let target, !isMember(target, of: owner, link: link) {
            add(target, to: owner, link: link, at: nil)
        }
    }

    static func replaceMembers(of owner: any PersistentEntity, link: Link, with members: [any PersistentEntity]) {
        fault(owner, index: link.index)
        let accessor = link.relationship.accessor
        if link.relationship.kind == .toOne && members.count <= 1 {
            setTarget(of: owner, link: link, to: members.first)
            return
        }
        let wanted = Set(members.map { ObjectIdentifier($0) })
        for current in accessor.members(of: owner) where !wanted.contains(ObjectIdentifier(current)) {
            remove(current as! any PersistentEntity, from: owner, link: link)
        }
        for member in members where !isMember(member, of: owner, link: link) {
            add(member, to: owner, link: link, at: nil)
        }
        if link.relationship.kind == .orderedToMany {
            let current = accessor.members(of: owner)
            if !current.elementsEqual(members, by: { $0 === $1 }) {
                change(owner, relationshipAt: link.index) { accessor.replaceMembers(of: owner, with: members) }
            }
        }
    }

    static func add(_ member: any PersistentEntity, to owner: any PersistentEntity, relationshipNamed name: String, at index: Int?) {
        add(member, to: owner, link: Link(type(of: owner)._$entity, named: name), at: index)
    }

    /// Adds `member` (at `index` in an ordered relationship; moving it there if it is a member already).
    static func add(_ member: any PersistentEntity, to owner: any PersistentEntity, link: Link, at index: Int?) {
        fault(owner, index: link.index)
        let accessor = link.relationship.accessor
        if isMember(member, of: owner, link: link) {
            guard let index, link.relationship.kind == .orderedToMany else { return }
            change(owner, relationshipAt: link.index) {
                accessor.remove(member, from: owner)
                accessor.add(member, to: owner, at: index)
            }
            return
        }
        adopt(member, by: owner)
        if link.relationship.kind == .toOne, let previous = accessor.firstMember(of: owner) {
            remove(previous, from: owner, link: link)
        }
        change(owner, relationshipAt: link.index) { accessor.add(member, to: owner, at: index) }
        attachInverse(of: member, to: owner, link: link)
    }

    static func remove(_ member: any PersistentEntity, from owner: any PersistentEntity, relationshipNamed name: String) {
        remove(member, from: owner, link: Link(type(of: owner)._$entity, named: name))
    }

    static func remove(_ member: any PersistentEntity, from owner: any PersistentEntity, link: Link) {
        fault(owner, index: link.index)
        guard isMember(member, of: owner, link: link) else { return }
        change(owner, relationshipAt: link.index) { link.relationship.accessor.remove(member, from: owner) }
        fault(member, index: link.inverseIndex)
        change(member, relationshipAt: link.inverseIndex) { link.inverse.accessor.remove(owner, from: member) }
    }

    /// Whether `member` belongs to `owner`'s relationship. With a to-one inverse this asks the
    /// member, which is O(1) even for a large ordered relationship.
    private static func isMember(_ member: any PersistentEntity, of owner: any PersistentEntity, link: Link) -> Bool {
        if link.inverse.kind == .toOne {
            fault(member, index: link.inverseIndex)
            return link.inverse.accessor.contains(owner, in: member)
        }
        return link.relationship.accessor.contains(member, in: owner)
    }

    /// Points `member`'s inverse at `owner`; a to-one inverse first leaves its previous owner.
    private static func attachInverse(of member: any PersistentEntity, to owner: any PersistentEntity, link: Link) {
        fault(member, index: link.inverseIndex)
        let inverseAccessor = link.inverse.accessor
        if link.inverse.kind == .toOne, let previousOwner = inverseAccessor.firstMember(of: member) {
            fault(previousOwner, index: link.index)
            change(previousOwner, relationshipAt: link.index) { link.relationship.accessor.remove(member, from: previousOwner) }
        }
        change(member, relationshipAt: link.inverseIndex) {
            if link.inverse.kind == .toOne {
                inverseAccessor.replaceMembers(of: member, with: [owner])
            } else {
                inverseAccessor.add(owner, to: member, at: nil)
            }
        }
    }

    /// Brings a new object into the context of the object it is being connected to.
    private static func adopt(_ member: any PersistentEntity, by owner: any PersistentEntity) {
        let ownerContext = owner._$entityState.context
        let memberContext = member._$entityState.context
        switch (ownerContext, memberContext) {
        case (let context?, nil) where member._$entityState.status == .transient:
            context.insert(member)
        case (nil, let context?) where owner._$entityState.status == .transient:
            context.insert(owner)
        case (let first?, let second?) where first !== second:
            preconditionFailure("LocalStore: cannot relate \(type(of: owner)._$entity.name) \(owner.objectID) and \(type(of: member)._$entity.name) \(member.objectID): they belong to different contexts")
        default:
            break
        }
    }

    /// Changes `object`'s relationship at `index` with `mutation`: records the members as last
    /// saved before the first change, and tells the relationship's observers.
    private static func change(_ object: any PersistentEntity, relationshipAt index: Int, _ mutation: () -> Void) {
        willChange(object, relationshipAt: index)
        withObservedChange(of: object, keyPath: type(of: object)._$entity.relationships[index].keyPath, mutation)
    }

    /// Records the relationship's members as last saved, before its first change.
    static func willChange(_ object: any PersistentEntity, relationshipAt index: Int) {
        let state = object._$entityState
        // Inserted objects are written whole on save; only stored objects need the old members.
        guard let context = state.context, state.isStored else { return }
        if state.originalRelationships[index] == nil {
            state.originalRelationships[index] = type(of: object)._$entity.relationships[index].accessor.members(of: object)
            context.registerUpdated(object)
        }
    }
}

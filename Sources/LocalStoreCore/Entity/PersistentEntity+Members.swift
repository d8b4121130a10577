extension PersistentEntity {
    /// Adds each of `members` to the unordered to-many relationship at `relationship` and points
    /// each member's inverse at this object, as the generated `addTo…` helper does one at a time.
    /// Members already in the relationship stay as they are.
    ///
    /// ```swift
    /// team.add(contentsOf: [ada, grace], to: \.members)
    /// ```
    public func add<Member: PersistentEntity>(contentsOf members: some Sequence<Member>, to relationship: KeyPath<Self, Set<Member>>) {
        let link = toManyLink(relationship)
        for member in members { ObjectGraph.add(member, to: self, link: link, at: nil) }
    }

    /// Appends each of `members` to the ordered relationship at `relationship`, in order, and
    /// points each member's inverse at this object. Members already in it keep their place.
    public func add<Member: PersistentEntity>(contentsOf members: some Sequence<Member>, to relationship: KeyPath<Self, [Member]>) {
        let link = toManyLink(relationship)
        for member in members { ObjectGraph.add(member, to: self, link: link, at: nil) }
    }

    /// Removes each of `members` from the unordered to-many relationship at `relationship` and
    /// from the member's inverse; objects that are not members are ignored.
    public func remove<Member: PersistentEntity>(contentsOf members: some Sequence<Member>, from relationship: KeyPath<Self, Set<Member>>) {
        let link = toManyLink(relationship)
        for member in members { ObjectGraph.remove(member, from: self, link: link) }
    }

    /// Removes each of `members` from the ordered relationship at `relationship` and from the
    /// member's inverse; objects that are not members are ignored.
    public func remove<Member: PersistentEntity>(contentsOf members: some Sequence<Member>, from relationship: KeyPath<Self, [Member]>) {
        let link = toManyLink(relationship)
        for member in members { ObjectGraph.remove(member, from: self, link: link) }
    }

    /// The relationship at `keyPath` with its inverse; traps when `keyPath` is not one of the
    /// entity's to-many relationships, as the key path's type already promises it is.
    private func toManyLink(_ keyPath: AnyKeyPath) -> ObjectGraph.Link {
        let entity = Self._$entity
        guard let index = entity.relationships.firstIndex(where: { $0.keyPath == keyPath && $0.kind != .toOne }) else {
            preconditionFailure("LocalStore: \(keyPath) is not a to-many relationship of \(entity.name); only @Relationship properties can be changed in batches")
        }
        return ObjectGraph.Link(entity, index: index)
    }
}

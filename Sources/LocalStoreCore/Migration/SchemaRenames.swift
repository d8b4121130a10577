/// How the names of one schema map onto another that renamed some of them (`originalName` of
/// entities, attributes and relationships): what migrations compare and what merges translate.
///
/// `originalName` names what a property or entity was called in the version just before; a name
/// is taken as renamed only when the newer schema has nothing under that name any more.
package struct SchemaRenames: Sendable {
    /// The newer schema.
    package let current: SchemaDocument
    /// The older schema, when known; without it any `originalName` counts.
    package let previous: SchemaDocument?

    package init(from previous: SchemaDocument?, to current: SchemaDocument) {
        self.previous = previous
        self.current = current
    }

    /// Whether the newer schema renames anything.
    package var isEmpty: Bool {
        current.entities.allSatisfy { entity in
            entity.originalName == nil && entity.attributes.allSatisfy { $0.originalName == nil }
                && entity.relationships.allSatisfy { $0.originalName == nil }
        }
    }

    /// Whether something of the older schema is renamed in the newer one (without the older
    /// schema: whether the newer one declares any `originalName`).
    package var renamesSomething: Bool {
        guard let previous else { return !isEmpty }
        return current.entities.contains { entity in
            guard let old = previousEntity(of: entity.name) else { return false }
            return old.name != entity.name
                || entity.attributes.contains { attribute in
                    attribute.originalName.map { old.attribute(named: $0) != nil && old.attribute(named: attribute.name) == nil } ?? false
                }
                || entity.relationships.contains { relationship in
                    relationship.originalName.map { old.relationship(named: $0) != nil && old.relationship(named: relationship.name) == nil } ?? false
                }
        } && previous.versionHash != current.versionHash
    }

    /// The newer schema's entity that the entity `name` of the older one became.
    package func entity(_ name: String) -> SchemaDocument.Entity? {
        current.entity(named: name) ?? current.entities.first { $0.originalName == name && previous?.entity(named: $0.name) == nil }
    }

    /// The newer schema's attribute that the attribute `name` of the older schema's `entity` became.
    package func attribute(_ name: String, of entity: String) -> SchemaDocument.Attribute? {
        guard let new = self.entity(entity) else { return nil }
        let old = previous?.entity(named: entity)
        return new.attribute(named: name) ?? new.attributes.first { $0.originalName == name && old?.attribute(named: $0.name) == nil }
    }

    /// The newer schema's relationship that the relationship `name` of the older schema's `entity` became.
    package func relationship(_ name: String, of entity: String) -> SchemaDocument.Relationship? {
        guard let new = self.entity(entity) else { return nil }
        let old = previous?.entity(named: entity)
        return new.relationship(named: name) ?? new.relationships.first { $0.originalName == name && old?.relationship(named: $0.name) == nil }
    }

    /// The older schema's entity that the newer one's `name` was, if it had one.
    private func previousEntity(of name: String) -> SchemaDocument.Entity? {
        guard let previous, let entity = current.entity(named: name) else { return nil }
        return previous.entity(named: name) ?? entity.originalName.flatMap { previous.entity(named: $0) }
    }

    /// Whether the newer schema's entity `name` existed in the older one (under this name or its original one).
    package func isCarriedOver(entity name: String) -> Bool {
        previousEntity(of: name) != nil
    }

    /// Whether the newer schema's attribute `name` of `entity` existed in the older one.
    package func isCarriedOver(attribute name: String, of entity: String) -> Bool {
        guard let old = previousEntity(of: entity), let attribute = current.entity(named: entity)?.attribute(named: name) else { return false }
        return old.attribute(named: name) != nil || attribute.originalName.flatMap { old.attribute(named: $0) } != nil
    }

    /// Whether the newer schema's relationship `name` of `entity` existed in the older one.
    package func isCarriedOver(relationship name: String, of entity: String) -> Bool {
        guard let old = previousEntity(of: entity), let relationship = current.entity(named: entity)?.relationship(named: name) else { return false }
        return old.relationship(named: name) != nil || relationship.originalName.flatMap { old.relationship(named: $0) } != nil
    }
}

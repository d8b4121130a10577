/// How a schema relates to the one a store already has.
public enum SchemaCompatibility: Equatable, Sendable {
    /// The same schema.
    case identical
    /// Everything stored stays as it is; the new schema only adds entities, attributes or relationships.
    case additive([String])
    /// The new schema lacks some of what is stored (an older app): nothing to migrate.
    case subset([String])
    /// Something stored would change or disappear while other things are added, or a property changed shape.
    case incompatible([String])
}

extension SchemaDocument {
    /// Compares this schema with `stored`, naming every difference.
    ///
    /// ```swift
    /// if case .incompatible(let reasons) = new.compatibility(with: stored) { print(reasons) }
    /// ```
    public func compatibility(with stored: SchemaDocument) -> SchemaCompatibility {
        if versionHash == stored.versionHash { return .identical }
        var added: [String] = []
        var removed: [String] = []
        var changed: [String] = []
        for old in stored.entities {
            guard let new = entity(named: old.name) else {
                removed.append("entity \(old.name) is missing")
                continue
            }
            for attribute in old.attributes {
                guard let other = new.attribute(named: attribute.name) else {
                    removed.append("attribute \(old.name).\(attribute.name) is missing")
                    continue
                }
                if other.columns.map(\.name) != attribute.columns.map(\.name) || other.columns.map(\.type) != attribute.columns.map(\.type) {
                    changed.append("attribute \(old.name).\(attribute.name) changed from \(attribute.swiftType) (\(attribute.columns.map { "\($0.name) \($0.type.rawValue)" }.joined(separator: ", "))) to \(other.swiftType) (\(other.columns.map { "\($0.name) \($0.type.rawValue)" }.joined(separator: ", ")))")
                } else if attribute.optional && !other.optional {
                    changed.append("attribute \(old.name).\(attribute.name) became non-optional")
                } else if attribute.storage != other.storage {
                    changed.append("attribute \(old.name).\(attribute.name) changed storage from \(attribute.storage.rawValue) to \(other.storage.rawValue)")
                }
            }
            for relationship in old.relationships {
                guard let other = new.relationship(named: relationship.name) else {
                    removed.append("relationship \(old.name).\(relationship.name) is missing")
                    continue
                }
                let sameDeclaration = other.kind == relationship.kind && other.target == relationship.target && other.inverse == relationship.inverse
                    && other.deleteRule == relationship.deleteRule
                if sameDeclaration && other.storage != relationship.storage && other.isSelfInverse(of: old.name)
                    && !relationship.storage.ownsJoinTable && other.storage.ownsJoinTable {
                    // A self-inverse to-many once named its join table without owning it, so no rows
                    // were ever written there: the table the new storage owns is new, nothing moves.
                    added.append("relationship \(old.name).\(relationship.name), its own inverse, is now stored in its join table in both directions")
                } else if !sameDeclaration || other.storage != relationship.storage {
                    changed.append("relationship \(old.name).\(relationship.name) changed from \(relationship.kind.rawValue) \(relationship.target) (inverse \(relationship.inverse), \(relationship.deleteRule.rawValue)) to \(other.kind.rawValue) \(other.target) (inverse \(other.inverse), \(other.deleteRule.rawValue))")
                }
            }
            added += new.attributes.filter { old.attribute(named: $0.name) == nil }.map { "attribute \(old.name).\($0.name) is new" }
            added += new.relationships.filter { old.relationship(named: $0.name) == nil }.map { "relationship \(old.name).\($0.name) is new" }
            if (new.uniquenessConstraints ?? []) != (old.uniquenessConstraints ?? []) {
                // Only an index changes; stored values stay as they are (existing duplicates are kept).
                added.append("the #Unique keys of \(old.name) changed from \(old.uniquenessConstraints ?? []) to \(new.uniquenessConstraints ?? [])")
            }
        }
        added += entities.filter { stored.entity(named: $0.name) == nil }.map { "entity \($0.name) is new" }
        if !changed.isEmpty || (!added.isEmpty && !removed.isEmpty) { return .incompatible(changed + removed + added) }
        if !removed.isEmpty { return .subset(removed) }
        // Same entities and properties, other details (indexes, counts, Swift type names): safe to adopt.
        return .additive(added.isEmpty ? ["indexes, counts or Swift type names changed"] : added)
    }
}

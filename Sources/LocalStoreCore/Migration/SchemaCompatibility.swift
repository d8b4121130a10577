import SQLiteDatabase

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
        let renames = SchemaRenames(from: stored, to: self)
        var added: [String] = []
        var removed: [String] = []
        var changed: [String] = []
        // Changes that leave every stored value where it is, reported when nothing else changed.
        var adopted: [String] = []
        for old in stored.entities {
            guard let new = renames.entity(old.name) else {
                removed.append("entity \(old.name) is missing")
                continue
            }
            if new.name != old.name { adopted.append("entity \(old.name) is renamed \(new.name)") }
            for attribute in old.attributes {
                guard let other = renames.attribute(attribute.name, of: old.name) else {
                    removed.append("attribute \(old.name).\(attribute.name) is missing")
                    continue
                }
                let isRenamed = other.name != attribute.name
                if isRenamed { adopted.append("attribute \(old.name).\(attribute.name) is renamed \(new.name).\(other.name)") }
                // A renamed attribute's columns are renamed with it: their types must match.
                if (!isRenamed && other.columns.map(\.name) != attribute.columns.map(\.name)) || other.columns.map(\.type) != attribute.columns.map(\.type) {
                    changed.append("attribute \(old.name).\(attribute.name) changed from \(attribute.swiftType) (\(attribute.columns.map { "\($0.name) \($0.type.rawValue)" }.joined(separator: ", "))) to \(other.swiftType) (\(other.columns.map { "\($0.name) \($0.type.rawValue)" }.joined(separator: ", ")))")
                } else if attribute.optional && !other.optional {
                    changed.append("attribute \(old.name).\(attribute.name) became non-optional")
                } else if attribute.storage != other.storage {
                    changed.append("attribute \(old.name).\(attribute.name) changed storage from \(attribute.storage.rawValue) to \(other.storage.rawValue)")
                } else if attribute.rawValues != other.rawValues {
                    // Listing cases where none were listed, or adding cases, keeps every stored value
                    // acceptable. A schema without some listed case is an older app's (or one that
                    // dropped the case): like a missing attribute, it lacks what may be stored.
                    let kept = Set(other.rawValues ?? [])
                    let gone = other.rawValues == nil ? [] : (attribute.rawValues ?? []).filter { !kept.contains($0) }
                    if gone.isEmpty {
                        adopted.append("attribute \(old.name).\(attribute.name) accepts the raw values \(SchemaDocument.list(other.rawValues))")
                    } else {
                        removed.append("attribute \(old.name).\(attribute.name) no longer accepts the raw values \(SchemaDocument.list(gone))")
                    }
                }
            }
            for relationship in old.relationships {
                guard let other = renames.relationship(relationship.name, of: old.name) else {
                    removed.append("relationship \(old.name).\(relationship.name) is missing")
                    continue
                }
                let isRenamed = other.name != relationship.name || new.name != old.name
                    || renames.entity(relationship.target)?.name != relationship.target
                if other.name != relationship.name { adopted.append("relationship \(old.name).\(relationship.name) is renamed \(new.name).\(other.name)") }
                let sameDeclaration = other.kind == relationship.kind && other.target == renames.entity(relationship.target)?.name
                    && other.inverse == renames.relationship(relationship.inverse, of: relationship.target)?.name
                    && other.deleteRule == relationship.deleteRule
                if sameDeclaration && other.storage != relationship.storage && other.isSelfInverse(of: new.name)
                    && !relationship.storage.ownsJoinTable && other.storage.ownsJoinTable {
                    // A self-inverse to-many once named its join table without owning it, so no rows
                    // were ever written there: the table the new storage owns is new, nothing moves.
                    added.append("relationship \(old.name).\(relationship.name), its own inverse, is now stored in its join table in both directions")
                } else if !sameDeclaration || (isRenamed ? !other.storage.hasSameShape(as: relationship.storage) : other.storage != relationship.storage) {
                    changed.append("relationship \(old.name).\(relationship.name) changed from \(relationship.kind.rawValue) \(relationship.target) (inverse \(relationship.inverse), \(relationship.deleteRule.rawValue)) to \(other.kind.rawValue) \(other.target) (inverse \(other.inverse), \(other.deleteRule.rawValue))")
                }
            }
            added += new.attributes.filter { !renames.isCarriedOver(attribute: $0.name, of: new.name) }.map { "attribute \(new.name).\($0.name) is new" }
            added += new.relationships.filter { !renames.isCarriedOver(relationship: $0.name, of: new.name) }.map { "relationship \(new.name).\($0.name) is new" }
            if (new.uniquenessConstraints ?? []) != (old.uniquenessConstraints ?? []) {
                // Only an index changes; stored values stay as they are (existing duplicates are kept).
                added.append("the #Unique keys of \(old.name) changed from \(old.uniquenessConstraints ?? []) to \(new.uniquenessConstraints ?? [])")
            }
        }
        added += entities.filter { !renames.isCarriedOver(entity: $0.name) }.map { "entity \($0.name) is new" }
        if !changed.isEmpty || (!added.isEmpty && !removed.isEmpty) { return .incompatible(changed + removed + added) }
        if !removed.isEmpty { return .subset(removed) }
        // Same entities and properties, other details (indexes, counts, Swift type names): safe to adopt.
        if added.isEmpty && adopted.isEmpty { return .additive(["indexes, counts or Swift type names changed"]) }
        return .additive(added + adopted)
    }

    /// Raw values for a message: `'calm', 'busy'`.
    private static func list(_ values: [SQLValue]?) -> String {
        guard let values else { return "of its raw type (no cases listed)" }
        return values.map(\.description).joined(separator: ", ")
    }
}

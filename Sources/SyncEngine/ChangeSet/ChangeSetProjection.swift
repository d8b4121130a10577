import Foundation
import LocalStoreCore

/// What a replica applies of a change set written under another version of the schema: the
/// operations in this schema's names, and, on a client, only those it knows.
///
/// A dataset's schema changes while older and newer apps keep syncing (CONTRACT.md §8).
///
/// - **Renames.** An operation naming an entity, attribute or relationship by the name it had
///   before a rename (the schema's `originalName`) is translated to the current name. A link
///   through a one-to-one whose recording side the rename changed is recorded from the other side
///   (on a client, any link through the side of a one-to-one it does not record from: a newer
///   schema may have renamed without its knowing).
/// - **Unknown operations.** An operation is *unknown* when it names an entity, attribute or
///   relationship the schema does not have, or writes a value the schema has no room for although
///   a newer schema does: `NULL` in an attribute a newer schema made optional, a raw value of a
///   case a newer schema added. A client applies the rest and keeps the whole change set (it is
///   stored, relayed and served as it was received); when the store is opened with a schema that
///   knows more, ``SyncReplica`` merges its history again so that everything kept takes effect
///   (``SyncReplica/keptChangeSetCount()``). A server, whose schema is the newest, leaves unknown
///   operations in, for the merge to refuse.
///
/// A value of the wrong type (text in an integer column) is not a newer schema's and stays an
/// error (``ChangeSetValidator``).
struct ChangeSetProjection: Sendable {
    let schema: SyncSchema
    let validator: ChangeSetValidator
    /// Whether unknown operations are left out (a client) or left for the merge to refuse (a server).
    let keepsUnknown: Bool
    /// An older name of an entity → its name now.
    private let entityNames: [String: String]
    /// Per entity (current name), an older name of an attribute → its name now.
    private let attributeNames: [String: [String: String]]
    /// Per entity (current name), an older name of a relationship → its name now.
    private let relationshipNames: [String: [String: String]]
    /// The one-to-one relationships recorded from this side under the older names (see ``isCanonical(_:)``).
    private let canonicalBeforeRenames: Set<SyncSchema.RelationshipKey>

    init(schema: SyncSchema, validator: ChangeSetValidator, keepsUnknown: Bool) {
        self.schema = schema
        self.validator = validator
        self.keepsUnknown = keepsUnknown
        var entityNames: [String: String] = [:]
        var attributeNames: [String: [String: String]] = [:]
        var relationshipNames: [String: [String: String]] = [:]
        let renames = SchemaRenames(from: nil, to: schema.document)
        for entity in schema.document.entities {
            if let original = entity.originalName, renames.entity(original)?.name == entity.name { entityNames[original] = entity.name }
            for attribute in entity.attributes {
                if let original = attribute.originalName, entity.attribute(named: original) == nil { attributeNames[entity.name, default: [:]][original] = attribute.name }
            }
            for relationship in entity.relationships {
                if let original = relationship.originalName, entity.relationship(named: original) == nil { relationshipNames[entity.name, default: [:]][original] = relationship.name }
            }
        }
        self.entityNames = entityNames
        self.attributeNames = attributeNames
        self.relationshipNames = relationshipNames
        // Which side of a one-to-one records its edges follows from the names (SyncSchema): under
        // the older names it may have been the other side.
        var canonicalBeforeRenames: Set<SyncSchema.RelationshipKey> = []
        if !entityNames.isEmpty || !relationshipNames.isEmpty {
            func olderName(of relationship: SyncSchema.Relationship) -> (String, String) {
                let entity = schema.document.entity(named: relationship.entity)
                return (entity?.originalName ?? relationship.entity,
                        entity?.relationship(named: relationship.name)?.originalName ?? relationship.name)
            }
            for entity in schema.entities {
                for relationship in entity.relationships where relationship.kind == .toOne && !relationship.isSelfInverse {
                    guard let inverse = schema.inverse(of: relationship), inverse.kind == .toOne else { continue }
                    if olderName(of: relationship) < olderName(of: inverse) { canonicalBeforeRenames.insert(relationship.key) }
                }
            }
        }
        self.canonicalBeforeRenames = canonicalBeforeRenames
    }

    /// The entities the schema renamed: older name → name now.
    var renamedEntities: [String: String] { entityNames }

    /// Whether the schema renames something: operations may need translation.
    private var translates: Bool { !entityNames.isEmpty || !attributeNames.isEmpty || !relationshipNames.isEmpty }

    /// The change set as this replica applies it (translated, and on a client without the
    /// operations it does not know), or `nil` when that is the change set itself (the common
    /// case, which allocates nothing).
    func knownPart(of changeSet: ChangeSet) -> ChangeSet? {
        guard keepsUnknown || translates else { return nil }
        // A change set sets the same few attributes again and again: the last one looked up is
        // checked first, comparing two short names instead of hashing them.
        var last: ChangeSetValidator.Attribute?
        guard let first = changeSet.operations.firstIndex(where: { !knows($0, last: &last) }) else { return nil }
        var known = changeSet
        known.operations = Array(changeSet.operations[..<first])
        known.operations.reserveCapacity(changeSet.operations.count)
        for operation in changeSet.operations[first...] {
            if knows(operation) {
                known.operations.append(operation)
            } else if let translated = translate(operation), knows(translated) {
                known.operations.append(translated)
            } else if !keepsUnknown {
                known.operations.append(operation)
            }
        }
        return known
    }

    /// Whether the schema knows every operation of `changeSet` but its `set`s, as they are
    /// (``knownPart(of:)`` would be `nil` for a change set whose sets are known too).
    func knowsEveryOperationButSets(of changeSet: ChangeSet) -> Bool {
        guard keepsUnknown || translates else { return true }
        return changeSet.operations.allSatisfy { operation in
            if case .set = operation { return true }
            return knows(operation)
        }
    }

    /// The objects `changeSet` creates whose entity the schema does not know (under any name):
    /// operations linking to them are kept too.
    func objectsLeftOut(of changeSet: ChangeSet) -> [UUID] {
        changeSet.operations.compactMap { operation in
            guard case .create(let entity, let id) = operation, schema.entity(entity) == nil, entityNames[entity] == nil else { return nil }
            return id
        }
    }

    /// Whether the schema can apply `operation` as it is.
    func knows(_ operation: Operation) -> Bool {
        var last: ChangeSetValidator.Attribute?
        return knows(operation, last: &last)
    }

    /// ``knows(_:)``, with `last` the attribute the previous `set` named.
    private func knows(_ operation: Operation, last: inout ChangeSetValidator.Attribute?) -> Bool {
        switch operation {
        case .create(let entity, _), .delete(let entity, _, _):
            return schema.entity(entity) != nil
        case .set(let entity, _, let attribute, let values):
            let known: ChangeSetValidator.Attribute
            if let last, last.name == attribute, last.entity == entity {
                known = last
            } else {
                guard let found = validator.attribute(entity, attribute) else { return false }
                known = found
                last = found
            }
            return known.columns.count != values.count || zip(known.columns, values).allSatisfy { column, value in
                // A value of the wrong type is refused by validation, not kept.
                column.accepts(value) || !(value.isNull || column.fitsType(value))
            }
        case .increment(let entity, _, let attribute, _):
            return schema.entity(entity)?.attribute(attribute) != nil
        case .link(let entity, _, let relationship, _), .unlink(let entity, _, let relationship, _, _):
            guard let known = schema.entity(entity)?.relationship(relationship) else { return false }
            return !recordsFromTheOtherSide(known)
        case .position(let entity, _, let relationship, _, _):
            return schema.entity(entity)?.relationship(relationship) != nil
        }
    }

    /// Whether a `link` or `unlink` naming `relationship` is recorded from its inverse here: a
    /// one-to-one is recorded from the side its names order first (SyncSchema), and another
    /// version of the schema may have named the sides so that the other came first. A server
    /// translates only what its own renames moved; a client whatever arrives through the side it
    /// does not record from, since a newer schema may have renamed without its knowing.
    private func recordsFromTheOtherSide(_ relationship: SyncSchema.Relationship) -> Bool {
        guard !relationship.isCanonical, !relationship.isSelfInverse else { return false }
        if canonicalBeforeRenames.contains(relationship.key) { return true }
        return keepsUnknown && relationship.kind == .toOne && schema.inverse(of: relationship)?.kind == .toOne
    }

    /// `operation` in this schema's names, or `nil` when nothing in it was renamed.
    func translate(_ operation: Operation) -> Operation? {
        func entity(_ name: String) -> String { schema.entity(name) == nil ? entityNames[name] ?? name : name }
        func attribute(_ name: String, of entity: String) -> String {
            validator.attribute(entity, name) == nil ? attributeNames[entity]?[name] ?? name : name
        }
        func relationship(_ name: String, of entity: String) -> String {
            schema.entity(entity)?.relationship(name) == nil ? relationshipNames[entity]?[name] ?? name : name
        }
        let translated: Operation
        switch operation {
        case .create(let name, let id):
            translated = .create(entity: entity(name), id: id)
        case .delete(let name, let id, let root):
            translated = .delete(entity: entity(name), id: id, root: root)
        case .set(let name, let id, let property, let values):
            let current = entity(name)
            translated = .set(entity: current, id: id, attribute: attribute(property, of: current), values: values)
        case .increment(let name, let id, let property, let delta):
            let current = entity(name)
            translated = .increment(entity: current, id: id, attribute: attribute(property, of: current), delta: delta)
        case .position(let name, let id, let property, let member, let key):
            let current = entity(name)
            translated = .position(entity: current, id: id, relationship: relationship(property, of: current), member: member, key: key)
        case .link(let name, let id, let property, let target):
            let current = entity(name)
            let known = schema.entity(current)?.relationship(relationship(property, of: current))
            if let known, recordsFromTheOtherSide(known), let inverse = schema.inverse(of: known) {
                translated = .link(entity: inverse.entity, id: target, relationship: inverse.name, target: id)
            } else {
                translated = .link(entity: current, id: id, relationship: relationship(property, of: current), target: target)
            }
        case .unlink(let name, let id, let property, let target, let observed):
            let current = entity(name)
            let known = schema.entity(current)?.relationship(relationship(property, of: current))
            if let known, recordsFromTheOtherSide(known), let inverse = schema.inverse(of: known) {
                translated = .unlink(entity: inverse.entity, id: target, relationship: inverse.name, target: id, observed: observed)
            } else {
                translated = .unlink(entity: current, id: id, relationship: relationship(property, of: current), target: target, observed: observed)
            }
        }
        return translated == operation ? nil : translated
    }
}

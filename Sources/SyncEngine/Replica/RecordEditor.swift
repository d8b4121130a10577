import Codecs
import Foundation
import LocalStoreCore

/// Edits a store through its schema alone, without the app's Swift types: what the `sync`
/// CLI uses. Each ``SyncReplica/edit(_:)`` commits one change set, exactly as a save would,
/// with delete rules applied as a context applies them.
///
/// ```swift
/// try replica.edit { editor in
///     let ada = try editor.insert("Person", values: ["name": .text("Ada")])
///     try editor.link("Person", id: ada, relationship: "place", target: parisID)
/// }
/// ```
///
/// Edits in one commit see the store as it was when the commit began.
public final class RecordEditor {
    let schema: SyncSchema
    let engine: MergeEngine
    private var creates: [Operation] = []
    private var sets: [Operation] = []
    private var edges: [Operation] = []
    private var positions: [Operation] = []
    private var deletes: [Operation] = []

    init(schema: SyncSchema, engine: MergeEngine) {
        self.schema = schema
        self.engine = engine
    }

    var operations: [Operation] { creates + sets + edges + positions + deletes }
    private var connection: SQLiteConnection { get throws { try engine.connection } }

    private func entity(_ name: String) throws -> SchemaDocument.Entity {
        guard let entity = schema.document.entity(named: name) else {
            throw SyncError(.schemaMismatch, "the schema has no entity '\(name)'; it has \(schema.document.entities.map(\.name).joined(separator: ", "))")
        }
        return entity
    }

    /// `entity` as merging sees it, with the SQL of its table built once per schema.
    private func syncEntity(_ entity: SchemaDocument.Entity) throws -> SyncSchema.Entity {
        try schema.requireEntity(entity.name, in: "an edit of \(entity.name)")
    }

    private func requireExisting(_ entity: SchemaDocument.Entity, _ id: UUID) throws {
        guard try syncEntity(entity).rows.containsRow(id, on: connection) else {
            throw StoreError(.objectNotFound, "there is no \(entity.name) \(id.storageText)", entity: entity.name, objectID: id)
        }
    }

    /// Groups `values` (keyed by attribute name, or by column name for composition fields) by attribute.
    private func attributeValues(_ entity: SchemaDocument.Entity, _ values: [String: SQLValue], base: (SchemaDocument.Attribute) throws -> [SQLValue]) throws -> [(String, [SQLValue])] {
        var known: Set<String> = []
        var result: [(String, [SQLValue])] = []
        for attribute in entity.attributes {
            var columns = try base(attribute)
            var touched = false
            for (index, column) in attribute.columns.enumerated() {
                let key = attribute.columns.count == 1 ? attribute.name : column.name
                known.insert(key)
                guard let value = values[key] else { continue }
                if value.isNull && !column.nullable {
                    throw StoreError(.corruptValue, "\(entity.name).\(key) cannot be null", entity: entity.name, attribute: attribute.name)
                }
                columns[index] = value
                touched = true
            }
            if touched || values.isEmpty { result.append((attribute.name, columns)) }
        }
        if let unknown = values.keys.sorted().first(where: { !known.contains($0) }) {
            throw SyncError(.schemaMismatch, "\(entity.name) has no attribute '\(unknown)'; it has \(known.sorted().joined(separator: ", "))")
        }
        return result
    }

    /// Creates an object; attributes not given get the schema's default values. Returns its identifier.
    @discardableResult
    public func insert(_ entityName: String, id: UUID = UUID(), values: [String: SQLValue] = [:]) throws -> UUID {
        let entity = try entity(entityName)
        if try engine.info(ObjectKey(entity: entityName, id: id)) != nil {
            throw SyncError(.conflictingChangeSet, "\(entityName) \(id.storageText) exists already")
        }
        creates.append(.create(entity: entityName, id: id))
        let all = try attributeValues(entity, values) { $0.defaultValues }
        let given = Dictionary(uniqueKeysWithValues: all.map { ($0.0, $0.1) })
        for attribute in entity.attributes {
            sets.append(.set(entity: entityName, id: id, attribute: attribute.name, values: given[attribute.name] ?? attribute.defaultValues))
        }
        return id
    }

    /// Changes attributes of an existing object.
    ///
    /// A counter (`merge: .counter`) is not overwritten: the edit records an increment by the
    /// difference between the given value and the value the object holds now, as an app's save does.
    public func update(_ entityName: String, id: UUID, values: [String: SQLValue]) throws {
        let entity = try entity(entityName)
        try requireExisting(entity, id)
        guard !values.isEmpty else { return }
        let stored = try syncEntity(entity)
        let row = try stored.rows.attributeValues(of: id, on: connection) ?? []
        let current = Dictionary(uniqueKeysWithValues: stored.valuesByAttribute(row[...]).map { ($0.name, $0.values) })
        for (name, columns) in try attributeValues(entity, values, base: { current[$0.name] ?? $0.defaultValues }) {
            guard entity.attribute(named: name)?.mergeKind == .counter else {
                sets.append(.set(entity: entityName, id: id, attribute: name, values: columns))
                continue
            }
            guard case .integer(let now)? = current[name]?.first, case .integer(let wanted)? = columns.first else {
                throw SyncError(.schemaMismatch, "\(entityName).\(name) of \(id.storageText) is a counter: give it an integer")
            }
            let (delta, overflow) = wanted.subtractingReportingOverflow(now)
            guard !overflow else {
                throw SyncError(.schemaMismatch, "\(entityName).\(name) of \(id.storageText) holds \(now): setting it to \(wanted) needs an increment no 64-bit integer holds")
            }
            if delta != 0 { try increment(entityName, id: id, attribute: name, by: delta) }
        }
    }

    /// Adds `delta` to the counter `attribute` (declared `merge: .counter`) of an existing object:
    /// concurrent increments from other replicas add up with it.
    public func increment(_ entityName: String, id: UUID, attribute name: String, by delta: Int64) throws {
        let entity = try entity(entityName)
        try requireExisting(entity, id)
        guard let attribute = entity.attribute(named: name) else {
            throw SyncError(.schemaMismatch, "\(entityName) has no attribute '\(name)'; it has \(entity.attributes.map(\.name).joined(separator: ", "))")
        }
        guard attribute.mergeKind == .counter else {
            throw SyncError(.schemaMismatch, "\(entityName).\(name) is not a counter (merge: .\(attribute.mergeKind.rawValue)); only a counter takes increments")
        }
        sets.append(.increment(entity: entityName, id: id, attribute: name, delta: delta))
    }

    private func relationshipPair(_ entityName: String, _ name: String) throws -> (SchemaDocument.Entity, SyncSchema.Relationship) {
        let entity = try entity(entityName)
        guard let relationship = schema.entity(entityName)?.relationship(name) else {
            throw SyncError(.schemaMismatch, "\(entityName) has no relationship '\(name)'; it has \(entity.relationships.map(\.name).joined(separator: ", "))")
        }
        return (entity, relationship)
    }

    /// Adds `target` to the relationship (replacing the current target of a to-one), updating the inverse.
    public func link(_ entityName: String, id: UUID, relationship name: String, target: UUID) throws {
        let (entity, relationship) = try relationshipPair(entityName, name)
        try requireExisting(entity, id)
        try requireExisting(try self.entity(relationship.target), target)
        guard let (canonical, source, destination) = schema.canonicalEdge(relationship, object: id, member: target) else { return }
        let sourceKey = ObjectKey(entity: canonical.entity, id: source)
        let live = try engine.liveEdges(from: sourceKey, canonical)
        let visible = try StoredRelationships.members(of: ObjectKey(entity: entityName, id: id), try self.entity(entityName).relationship(named: name)!, entity: entity, on: connection)
        if visible.contains(target) { return }
        if canonical.kind == .toOne && canonical.isSelfInverse {
            // Both ends leave their current partners, as a context's setter makes them.
            var stale: [EdgeRecord] = []
            for end in Set([source, destination]) {
                let key = ObjectKey(entity: canonical.entity, id: end)
                stale += try engine.liveEdges(from: key, canonical) + engine.liveEdges(to: key, canonical).filter { $0.source != end }
            }
            unlink(stale.filter { ($0.source, $0.target) != (source, destination) }, canonical, source: nil)
        } else if canonical.kind == .toOne {
            unlink(live.filter { $0.target != destination }, canonical, source: source)
        }
        if canonical.kind == .toOne, !canonical.isSelfInverse, schema.inverse(of: canonical)?.kind == .toOne {
            let claims = try engine.liveEdges(to: ObjectKey(entity: canonical.target, id: destination), canonical).filter { $0.source != source }
            unlink(claims, canonical, source: nil)
        }
        edges.append(.link(entity: canonical.entity, id: source, relationship: canonical.name, target: destination))
        try appendPosition(relationship, object: id, member: target)
    }

    /// Places a newly linked member last in whichever side of the pair is ordered.
    private func appendPosition(_ relationship: SyncSchema.Relationship, object: UUID, member: UUID) throws {
        var ordered: (owner: ObjectKey, name: String, member: UUID)?
        if relationship.kind == .orderedToMany {
            ordered = (ObjectKey(entity: relationship.entity, id: object), relationship.name, member)
        } else if let inverse = schema.inverse(of: relationship), inverse.kind == .orderedToMany {
            ordered = (ObjectKey(entity: inverse.entity, id: member), inverse.name, object)
        }
        guard let ordered else { return }
        let last = try PositionTable.lastKey(in: ordered.owner, ordered.name, on: connection)
        positions.append(.position(entity: ordered.owner.entity, id: ordered.owner.id, relationship: ordered.name,
                                   member: ordered.member, key: PositionKey.between(last, nil)))
    }

    private func unlink(_ records: [EdgeRecord], _ canonical: SyncSchema.Relationship, source: UUID?) {
        let grouped = Dictionary(grouping: records) { "\($0.source.storageText)>\($0.target.storageText)" }
        for key in grouped.keys.sorted() {
            guard let group = grouped[key], let first = group.first else { continue }
            edges.append(.unlink(entity: canonical.entity, id: source ?? first.source, relationship: canonical.name,
                                 target: first.target, observed: group.map(\.added.dot).sorted()))
        }
    }

    /// Removes `target` from the relationship, updating the inverse.
    public func unlink(_ entityName: String, id: UUID, relationship name: String, target: UUID) throws {
        let (entity, relationship) = try relationshipPair(entityName, name)
        try requireExisting(entity, id)
        guard let (canonical, source, destination) = schema.canonicalEdge(relationship, object: id, member: target) else { return }
        let live = try engine.liveEdges(from: ObjectKey(entity: canonical.entity, id: source), canonical).filter { $0.target == destination }
        guard !live.isEmpty else {
            throw StoreError(.objectNotFound, "\(entityName) \(id.storageText) has no \(target.storageText) in '\(name)'", entity: entityName, relationship: name, objectID: id)
        }
        unlink(live, canonical, source: source)
    }

    /// Deletes an object, applying delete rules as a context does: nullify clears inverses,
    /// cascade deletes members, deny refuses the delete while the relationship is not empty.
    public func delete(_ entityName: String, id: UUID) throws {
        let root = try entity(entityName)
        try requireExisting(root, id)
        let plan = try SaveRules.planDeletes(
            [ObjectKey(entity: entityName, id: id)],
            relationships: { object in
                let entity = try entity(object.entity)
                let connection = try connection
                return entity.relationships.map { relationship in
                    SaveRules.DeletedRelationship(name: relationship.name, rule: relationship.deleteRule) {
                        try StoredRelationships.members(of: object, relationship, entity: entity, on: connection)
                            .map { ObjectKey(entity: relationship.target, id: $0) }
                    }
                }
            },
            identity: { ($0.entity, $0.id) })
        let doomed = plan.deleted
        var unlinked: Set<String> = []
        for object in doomed {
            guard let entity = schema.entity(object.entity) else { continue }
            for relationship in entity.relationships {
                guard let canonical = relationship.isCanonical ? relationship : schema.inverse(of: relationship) else { continue }
                let records = relationship.isSelfInverse
                    ? try engine.liveEdges(from: object, canonical) + engine.liveEdges(to: object, canonical)
                    : relationship.isCanonical ? try engine.liveEdges(from: object, canonical) : try engine.liveEdges(to: object, canonical)
                let fresh = records.filter { unlinked.insert("\(canonical.entity).\(canonical.name):\($0.source)>\($0.target)@\($0.added.dot)").inserted }
                unlink(fresh, canonical, source: nil)
            }
            deletes.append(.delete(entity: object.entity, id: object.id, root: id))
        }
    }
}

import Codecs
import Foundation
import LocalStoreCore

/// Uniqueness across replicas (CONTRACT.md §3.8): two objects of one entity created concurrently
/// (neither creating change set had seen the other's) with equal values of a uniqueness key are one
/// object. The earliest created, by `(HLC, replica ID)`, survives; every edge addition, removal and
/// position at the other moves to it, later operations naming the other are applied to it, and the
/// other leaves the entity table without its delete rules running.
///
/// Collisions are judged on creation values only, which the creating change sets fix: the merges
/// are therefore a function of the change sets present, and a merge is final (later edits of the
/// values do not undo it).
/// The objects of uniquely keyed entities one change set creates, with the values it sets on
/// them: what uniqueness merges judge collisions on.
struct UniqueCreations {
    var created: [UUID: ObjectKey] = [:]
    var written: [UUID: [String: [SQLValue]]] = [:]
}

extension MergeEngine {
    /// The uniqueness keys of `entity` (`.unique` attributes and `#Unique` keys).
    func uniqueKeys(of entity: String) -> [UniqueKey] {
        schema.entity(entity)?.uniqueKeys ?? []
    }

    /// Records the key values of the objects `changeSet` created and merges the objects they
    /// collide with.
    func resolveUniqueValues(of changeSet: ChangeSet) throws {
        guard schema.hasUniqueKeys else { return }
        try resolveUniqueValues(uniqueCreations(of: changeSet))
    }

    /// The objects of entities with uniqueness keys that `changeSet` creates, with their values.
    func uniqueCreations(of changeSet: ChangeSet) -> UniqueCreations {
        var creations = UniqueCreations()
        noteUniqueCreations(in: changeSet.operations, into: &creations)
        return creations
    }

    /// The objects of entities with uniqueness keys that `operations` create, and the values
    /// their change set sets on them after the create, added to `creations`.
    func noteUniqueCreations(in operations: some Sequence<Operation>, into creations: inout UniqueCreations) {
        guard schema.hasUniqueKeys else { return }
        for operation in operations {
            switch operation {
            case .create(let entity, let id) where !uniqueKeys(of: entity).isEmpty:
                creations.created[id] = ObjectKey(entity: entity, id: id)
            case .set(_, let id, let attribute, let values) where creations.created[id] != nil:
                creations.written[id, default: [:]][attribute] = values
            default:
                continue
            }
        }
    }

    /// Records the key values of `creations` and merges the objects they collide with.
    func resolveUniqueValues(_ creations: UniqueCreations) throws {
        try recordUniqueValues(creations)
        for object in creations.created.values.sorted() { try mergeCollisions(of: object) }
    }

    /// Records the key values of `creations`, which later creations on other replicas collide with.
    func recordUniqueValues(_ creations: UniqueCreations) throws {
        let created = creations.created, written = creations.written
        guard !created.isEmpty else { return }
        for object in created.values.sorted() {
            guard let entity = schema.document.entity(named: object.entity) else { continue }
            for key in uniqueKeys(of: object.entity) {
                let values = key.attributeNames.flatMap { name in written[object.id]?[name] ?? entity.attribute(named: name)?.defaultValues ?? [.null] }
                guard UniqueKey.canCollide(values) else { continue }
                try UniqueMergeTable.insertCreationValue(object, key: key.displayName, value: ConflictEntry.Value(columns: values).jsonText, on: connection)
            }
        }
    }

    /// The object `object` stands for: its survivor when a merge removed it, else itself.
    func survivor(of object: ObjectKey) -> ObjectKey {
        mirror.mergedDuplicates[object].map { ObjectKey(entity: object.entity, id: $0) } ?? object
    }

    /// An edge's ends as merges leave them: each end's survivor, a self-inverse pair in canonical order.
    func redirected(_ source: ObjectKey, _ target: UUID, _ relationship: SyncSchema.Relationship) -> (ObjectKey, UUID) {
        guard !mirror.mergedDuplicates.isEmpty else { return (source, target) }
        let newSource = survivor(of: source)
        let newTarget = survivor(of: ObjectKey(entity: relationship.target, id: target)).id
        if relationship.isSelfInverse && newTarget.precedesInStorageOrder(newSource.id) {
            return (ObjectKey(entity: source.entity, id: newTarget), newSource.id)
        }
        return (newSource, newTarget)
    }

    /// Merges the objects that collide with `object`, directly or through one another, into the
    /// earliest created of them (``UniquenessResolver``).
    private func mergeCollisions(of object: ObjectKey) throws {
        guard let group = try UniquenessResolver.group(of: object, in: self) else { return }
        let survivorCreation = try requireInfo(group.survivor, for: "a uniqueness merge").creation
        for duplicate in group.duplicates where mirror.mergedDuplicates[duplicate] != group.survivor.id {
            try merge(duplicate, into: group.survivor, survivorCreation: survivorCreation)
        }
    }

    private func merge(_ duplicate: ObjectKey, into survivor: ObjectKey, survivorCreation: Stamp) throws {
        try flushPendingWrites()
        let known = try requireInfo(duplicate, for: "a uniqueness merge")
        let entity = try schema.requireEntity(duplicate.entity, in: "a uniqueness merge")
        var held: [String: ConflictEntry.Value] = ["id": .string(duplicate.id.storageText)]
        for attribute in entity.attributes {
            held[attribute.name] = ConflictEntry.Value(columns: try currentValues(of: attribute, object: duplicate, known: known))
        }
        let heldValues = ConflictEntry.Value.object(held).jsonText
        // The duplicate's neighbours are rewritten, and the deletes around it judged again, before its edges move.
        try markChanged(duplicate)
        try UniqueMergeTable.setMerged(duplicate, into: survivor.id, on: connection)
        for (other, target) in mirror.mergedDuplicates where target == duplicate.id && other.entity == duplicate.entity {
            mirror.mergedDuplicates[other] = survivor.id
        }
        mirror.mergedDuplicates[duplicate] = survivor.id
        known.mayBeDeleted = true
        var pointingAt: [(String, String)] = []
        var orderedOwners: [(String, String)] = []
        for owner in schema.document.entities {
            for relationship in schema.entity(owner.name)?.relationships ?? [] where relationship.target == duplicate.entity {
                if relationship.isCanonical { pointingAt.append((owner.name, relationship.name)) }
                if relationship.kind == .orderedToMany { orderedOwners.append((owner.name, relationship.name)) }
            }
        }
        noteEdgeWrite()
        try UniqueMergeTable.moveEdges(of: duplicate, to: survivor.id, pointingAt: pointingAt, on: connection)
        for relationship in entity.relationships where relationship.isSelfInverse {
            try UniqueMergeTable.recanonicalize(selfInverse: relationship.name, of: survivor, on: connection)
        }
        try UniqueMergeTable.movePositions(of: duplicate, to: survivor.id, asMemberOf: orderedOwners, on: connection)
        try markChanged(survivor)
        try touchRoots(of: duplicate)
        try touchRoots(of: survivor)
        let keys = uniqueKeys(of: duplicate.entity).map(\.displayName).joined(separator: ", ")
        try journal(
            .uniqueMerged, entity: duplicate.entity, object: duplicate.id, property: keys,
            winner: side("\"\(survivor.id.storageText)\"", survivorCreation), loser: side(heldValues, known.creation), cause: current.dot,
            detail: "\(duplicate.entity) \(duplicate.id) was created concurrently with \(survivor.id) holding equal unique values; it was merged into \(survivor.id), which was created first, and its references moved there")
    }

    /// Journals a write to a merged duplicate: it stays on the duplicate (which no longer shows).
    func journalWriteToMergedDuplicate(_ object: ObjectKey, attribute: String, values: [SQLValue]) throws {
        guard let survivor = mirror.mergedDuplicates[object] else { return }
        try journal(
            .uniqueMerged, entity: object.entity, object: object.id, property: attribute,
            winner: side("\"\(survivor.storageText)\"", current.stamp), loser: side(values: values, current.stamp), cause: current.dot,
            detail: MergeEngine.writeToMergedDuplicateDetail(object, attribute: attribute, survivor: survivor))
    }
}

extension MergeEngine: UniquenessResolver.Creations {
    func objectsSharingAKeyValue(with object: ObjectKey) throws -> [ObjectKey] {
        var objects: [ObjectKey] = []
        for (key, value) in try UniqueMergeTable.creationValues(of: object, on: connection) {
            for id in try UniqueMergeTable.objects(of: object.entity, key: key, value: value, on: connection) {
                objects.append(ObjectKey(entity: object.entity, id: id))
            }
        }
        return objects
    }

    func creation(of object: ObjectKey) throws -> (stamp: Stamp, vector: VersionVector)? {
        guard let stamp = try info(object)?.creation else { return nil }
        return (stamp, try vector(of: stamp.dot))
    }
}

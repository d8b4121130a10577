import Codecs
import Foundation
import LocalStoreCore

/// Applying the change set of a local save: the path every `ObjectContext.save()` of a synced
/// store takes, kept apart from the general ``MergeEngine/apply(_:deletedValues:)`` because a
/// large insert spends most of its capture time here.
///
/// LocalStore has already written the rows, so only metadata is recorded, as for any local
/// change set; what differs is how:
/// - An object created by the save cannot have metadata yet, so its ``ObjectMetadataTable`` row is
///   inserted without looking it up first; the table's primary key still refuses a second
///   creation, reported as the lookup reported it.
/// - Its attribute sets change no metadata (the creation stamp stands for them) and are skipped.
/// - ``ObjectMetadataTable`` and ``EdgeTable`` rows are inserted in primary-key order, ids bound without
///   making strings: rows in random id order spread over every page of the tables, more than the
///   page cache holds, and pages were written out and read back several times within one save.
extension MergeEngine {
    /// Applies `changeSet`, made by ``ChangeRecorder`` from a save, to the metadata.
    func applyLocalSave(_ changeSet: ChangeSet, deletedValues: [UUID: [String: SQLValue]]) throws {
        precondition(isLocal, "a local save's change set is applied by an engine for local change sets")
        current = changeSet
        vectors[changeSet.dot] = changeSet.vector
        appliedInBatch.insert(changeSet.dot)
        var creates: [(index: Int, object: ObjectKey)] = []
        for (index, operation) in changeSet.operations.enumerated() {
            if case .create(let entity, let id) = operation { creates.append((index, ObjectKey(entity: entity, id: id))) }
        }
        try recordCreates(creates)
        var links: [PendingLink] = []
        // The sets of one object come together: look it up once for all of them.
        var lastSet: (object: ObjectKey, isNew: Bool)?
        for (index, operation) in changeSet.operations.enumerated() {
            switch operation {
            case .create:
                continue
            case .set(let entity, let id, _, _) where isCreatedHere(ObjectKey(entity: entity, id: id), cache: &lastSet):
                continue
            case .link(let entity, let id, let relationship, let target):
                links.append(PendingLink(index: index, source: ObjectKey(entity: entity, id: id), relationship: relationship, target: target))
            default:
                // Edges first: the operation may read them.
                try recordLinks(&links)
                try atOperation(index) { try apply(operation, deletedValues: deletedValues) }
            }
        }
        try recordLinks(&links)
        try resolveUniqueValues(of: changeSet)
        try VersionVectorTable.advance(to: changeSet.dot, on: connection)
    }

    /// Whether the current change set created `object`.
    private func isCreatedHere(_ object: ObjectKey, cache: inout (object: ObjectKey, isNew: Bool)?) -> Bool {
        if let cache, cache.object == object { return cache.isNew }
        let isNew = objects[object]?.createdBy == current.dot
        cache = (object, isNew)
        return isNew
    }

    // MARK: Creates

    private func recordCreates(_ creates: [(index: Int, object: ObjectKey)]) throws {
        guard !creates.isEmpty else { return }
        let stamp = current.stamp
        var entity: (name: String, known: Bool) = ("", false)
        objects.reserveCapacity(objects.count + creates.count)
        let writer = try ObjectMetadataTable.CreationWriter(creation: stamp, on: connection)
        for (index, object) in creates.sorted(by: { $0.object < $1.object }) {
            // Creates of one entity come together: check each name once.
            if !entity.known || entity.name != object.entity {
                _ = try atOperation(index) { try schema.requireEntity(object.entity, in: "create of \(object.id)") }
                entity = (object.entity, true)
            }
            guard try writer.insert(object) else {
                throw SyncError(.conflictingChangeSet, "change set \(current.dot), operation \(index): creates \(object.entity) \(object.id), which already exists")
            }
            let created = ObjectInfo(creation: stamp, hasRow: true, mayBeDeleted: false)
            created.createdBy = current.dot
            created.storedFieldStamps = FieldStamps()
            objects[object] = created
        }
    }

    // MARK: Links

    /// A `link` of the change set, not recorded yet.
    struct PendingLink {
        var index: Int
        var source: ObjectKey
        var relationship: String
        var target: UUID

        /// ``EdgeTable``'s primary-key order (the rest of the key is the change set's dot).
        func precedes(_ other: PendingLink) -> Bool {
            if source != other.source { return source < other.source }
            if relationship != other.relationship { return relationship < other.relationship }
            return target.precedesInStorageOrder(other.target)
        }
    }

    /// Records `links` (consecutive `link` operations) and empties it: both objects must exist,
    /// and deletes of an object that existed before the save are judged again (see ``touchRoots(of:)``).
    private func recordLinks(_ links: inout [PendingLink]) throws {
        guard !links.isEmpty else { return }
        var relationship: (source: String, name: String, canonical: SyncSchema.Relationship, what: String)?
        var touched: Set<ObjectKey> = []
        try flushPendingRows()
        let writer = try EdgeTable.AdditionWriter(added: current.stamp, on: connection)
        for link in links.sorted(by: { $0.precedes($1) }) {
            try atOperation(link.index) {
                // Links of one relationship come together: look each up once.
                if relationship.map({ $0.source != link.source.entity || $0.name != link.relationship }) ?? true {
                    relationship = (link.source.entity, link.relationship, try canonicalRelationship(link.source, link.relationship),
                                    "link of \(link.source.entity).\(link.relationship)")
                }
                let (_, _, canonical, what) = relationship!
                func check(_ endpoint: ObjectKey) throws {
                    guard try requireInfo(endpoint, for: what).createdBy != current.dot, touched.insert(endpoint).inserted else { return }
                    try touchRoots(of: endpoint)
                }
                try check(link.source)
                try check(ObjectKey(entity: canonical.target, id: link.target))
                touchMergeBounds(link.source, ObjectKey(entity: canonical.target, id: link.target), canonical)
            }
            try writer.insert(from: link.source, link.relationship, to: link.target)
        }
        links.removeAll(keepingCapacity: true)
    }
}

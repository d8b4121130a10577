import Codecs
import Foundation
import LocalStoreCore

/// One edge addition still in force: `link`ed and not removed by an `unlink` (or removed only
/// by an unlink whose delete was voided).
struct EdgeRecord {
    var source: UUID
    var target: UUID
    var added: Stamp
}

/// The stored edges a batch's merge read, by query, since the last edge write.
///
/// A merge asks for the same objects' edges many times: marking neighbours changed, judging
/// delete roots again and again until they settle, and, materializing, for each object's row,
/// its relationships, its neighbours' one-to-one components, its counts. Every edge write through
/// the engine empties the cache (``MergeEngine/noteEdgeWrite()``), so what it holds is what the
/// table holds.
struct EdgeReadCache {
    enum Query: Hashable {
        case from(ObjectKey, relationship: String)
        case to(UUID, relationship: String, sourceEntity: String)
    }

    var edges: [Query: [EdgeTable.StoredEdge]] = [:]
}

extension MergeEngine {
    /// Every addition from `source` through `relationship`, removed or not.
    private func storedEdges(from source: ObjectKey, _ relationship: String) throws -> [EdgeTable.StoredEdge] {
        try cachedEdges(.from(source, relationship: relationship)) { try EdgeTable.edges(from: source, relationship, on: connection) }
    }

    /// Every addition into `target` through `relationship` of `sourceEntity`, removed or not.
    private func storedEdges(to target: UUID, _ relationship: String, of sourceEntity: String) throws -> [EdgeTable.StoredEdge] {
        try cachedEdges(.to(target, relationship: relationship, sourceEntity: sourceEntity)) {
            try EdgeTable.edges(to: target, relationship, of: sourceEntity, on: connection)
        }
    }

    private func cachedEdges(_ query: EdgeReadCache.Query, read: () throws -> [EdgeTable.StoredEdge]) rethrows -> [EdgeTable.StoredEdge] {
        if let known = edgeReads?.edges[query] { return known }
        let edges = try read()
        edgeReads?.edges[query] = edges
        return edges
    }

    /// Reads ahead, into the edge cache, the edges materializing `objects` asks for: from each
    /// object through its entity's canonical relationships, and into it through the inverses a
    /// foreign key of its own shows (one-to-one) and through self-inverse ones, a few hundred
    /// objects per statement instead of one statement per object and relationship. The cache
    /// then answers each object's questions as the table would (``EdgeReadCache``).
    func readEdgesAhead(of objects: Set<ObjectKey>) throws {
        guard edgeReads != nil else { return }
        var idsByEntity: [String: [UUID]] = [:]
        for object in objects { idsByEntity[object.entity, default: []].append(object.id) }
        // In name order, though the order changes nothing but the order of reads.
        for (entityName, ids) in idsByEntity.sorted(by: { $0.key < $1.key }) {
            guard let entity = schema.entity(entityName) else { continue }
            for relationship in entity.relationships {
                if relationship.isCanonical {
                    try readAhead(ids, as: { .from(ObjectKey(entity: entityName, id: $0), relationship: relationship.name) }) {
                        try EdgeTable.edges(fromEach: $0, of: entityName, relationship.name, on: connection)
                    }
                }
                var showsInverse = relationship.isSelfInverse
                if !relationship.isCanonical, case .foreignKey = relationship.storage { showsInverse = true }
                guard showsInverse, let canonical = relationship.isSelfInverse ? relationship : schema.inverse(of: relationship) else { continue }
                try readAhead(ids, as: { .to($0, relationship: canonical.name, sourceEntity: canonical.entity) }) {
                    try EdgeTable.edges(toEach: $0, canonical.name, of: canonical.entity, on: connection)
                }
            }
        }
    }

    /// Reads the edges of those of `ids` whose `query` the cache has not answered, a few hundred
    /// per `read`, and keeps each object's (none included) as the answer to its query.
    private func readAhead(_ ids: [UUID], as query: (UUID) -> EdgeReadCache.Query,
                           read: (ArraySlice<UUID>) throws -> [UUID: [EdgeTable.StoredEdge]]) throws {
        let unread = ids.filter { edgeReads?.edges[query($0)] == nil }
        for chunk in MergeEngine.chunks(of: unread) {
            let found = try read(chunk)
            for id in chunk { edgeReads?.edges[query(id)] = found[id] ?? [] }
        }
    }

    /// Empties the edge cache of a materialization in progress: called by every write of an edge.
    func noteEdgeWrite() {
        if edgeReads != nil { edgeReads = EdgeReadCache() }
    }

    private func edges(_ stored: [EdgeTable.StoredEdge], includingRemoved: Bool = false) -> [EdgeRecord] {
        stored.compactMap { edge in
            if edge.isRemoved && !includingRemoved {
                // Removed, unless the removal came from a delete that was voided since, and so did
                // every other removal of the same addition.
                guard let root = edge.removalRoot, mirror.voided.contains(root), edge.furtherRemovalRoots.allSatisfy(mirror.voided.contains) else { return nil }
            }
            return EdgeRecord(source: edge.source, target: edge.target, added: edge.added)
        }
    }

    /// Live edge additions from `source` through the canonical `relationship`.
    func liveEdges(from source: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> [EdgeRecord] {
        edges(try storedEdges(from: source, relationship.name))
    }

    /// Live edge additions into `target` through the canonical `relationship`.
    func liveEdges(to target: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> [EdgeRecord] {
        edges(try storedEdges(to: target.id, relationship.name, of: relationship.entity))
    }

    /// The objects at the other end of `object`'s `relationship` (either side), with the stamp of each live edge addition.
    func incidentEdges(of object: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> [(other: ObjectKey, added: Stamp)] {
        if relationship.isSelfInverse {
            return Self.bothEnds(of: object, from: try liveEdges(from: object, relationship), to: try liveEdges(to: object, relationship))
        }
        if relationship.isCanonical {
            return try liveEdges(from: object, relationship).map { (ObjectKey(entity: relationship.target, id: $0.target), $0.added) }
        }
        guard let canonical = schema.inverse(of: relationship) else { return [] }
        return try liveEdges(to: object, canonical).map { (ObjectKey(entity: relationship.target, id: $0.source), $0.added) }
    }

    /// Every edge addition ever made between `object` and others through `relationship`, removed or not.
    func everyEdge(of object: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> [(other: ObjectKey, added: Stamp)] {
        if relationship.isSelfInverse {
            return Self.bothEnds(
                of: object, from: edges(try storedEdges(from: object, relationship.name), includingRemoved: true),
                to: edges(try storedEdges(to: object.id, relationship.name, of: relationship.entity), includingRemoved: true))
        }
        if relationship.isCanonical {
            return edges(try storedEdges(from: object, relationship.name), includingRemoved: true)
                .map { (ObjectKey(entity: relationship.target, id: $0.target), $0.added) }
        }
        guard let canonical = schema.inverse(of: relationship) else { return [] }
        return edges(try storedEdges(to: object.id, canonical.name, of: canonical.entity), includingRemoved: true)
            .map { (ObjectKey(entity: relationship.target, id: $0.source), $0.added) }
    }

    /// A self-inverse relationship's edges seen from `object`: those it is the source of and those
    /// it is the target of, each as the object at the other end. An edge from `object` to itself
    /// is listed once.
    private static func bothEnds(of object: ObjectKey, from outgoing: [EdgeRecord], to incoming: [EdgeRecord]) -> [(other: ObjectKey, added: Stamp)] {
        outgoing.map { (ObjectKey(entity: object.entity, id: $0.target), $0.added) }
            + incoming.filter { $0.source != object.id }.map { (ObjectKey(entity: object.entity, id: $0.source), $0.added) }
    }

    /// Whether the object exists and no delete in force (explicit or by cascade) removes it.
    func isAlive(_ object: ObjectKey, ignoring ignoredRoot: DeleteRoot? = nil) throws -> Bool {
        guard let known = try info(object) else { return false }
        // A duplicate a uniqueness merge removed never shows again.
        if !mirror.mergedDuplicates.isEmpty, mirror.mergedDuplicates[object] != nil { return false }
        guard known.mayBeDeleted else { return true }
        for root in try DeleteTable.roots(deleting: object, on: connection) where root != ignoredRoot && !mirror.voided.contains(root) {
            return false
        }
        return true
    }

    func vector(of dot: Dot) throws -> VersionVector {
        if let known = changeSets.vectors[dot] { return known }
        guard let stored = try ChangeSetTable.vector(of: dot, on: connection) else {
            throw SyncError(.notSyncable, "the change set \(dot) is referred to but not stored")
        }
        changeSets.vectors[dot] = stored
        return stored
    }
}

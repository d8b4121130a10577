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

extension MergeEngine {
    static let edgeColumns = "id, target, hlc, replica, seq, removed_replica, removed_seq, removed_root"

    private func edges(_ sql: String, _ arguments: [SQLValue], includingRemoved: Bool = false) throws -> [EdgeRecord] {
        try flushPendingInserts()
        return try connection.rows(sql, arguments).compactMap { row in
            guard case .text(let sourceText) = row[0], let source = UUID(storageText: sourceText),
                  case .text(let targetText) = row[1], let target = UUID(storageText: targetText),
                  let added = MergeEngine.stamp(row[2], row[3], row[4]) else { return nil }
            if !row[5].isNull && !includingRemoved {
                // Removed, unless the removal came from a delete that was voided since.
                guard let root = MergeEngine.deleteRoot(row[5], row[6], row[7]), voided.contains(root) else { return nil }
            }
            return EdgeRecord(source: source, target: target, added: added)
        }
    }

    /// Live edge additions from `source` through the canonical `relationship`.
    func liveEdges(from source: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> [EdgeRecord] {
        try edges("SELECT \(MergeEngine.edgeColumns) FROM _sync_edge WHERE entity = ? AND id = ? AND relationship = ?",
                  [.text(source.entity), .text(source.id.storageText), .text(relationship.name)])
    }

    /// Live edge additions into `target` through the canonical `relationship`.
    func liveEdges(to target: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> [EdgeRecord] {
        try edges("SELECT \(MergeEngine.edgeColumns) FROM _sync_edge WHERE entity = ? AND relationship = ? AND target = ?",
                  [.text(relationship.entity), .text(relationship.name), .text(target.id.storageText)])
    }

    /// The objects at the other end of `object`'s `relationship` (either side), with the stamp of each live edge addition.
    func incidentEdges(of object: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> [(other: ObjectKey, added: Stamp)] {
        if relationship.isCanonical {
            return try liveEdges(from: object, relationship).map { (ObjectKey(entity: relationship.target, id: $0.target), $0.added) }
        }
        guard let canonical = schema.inverse(of: relationship) else { return [] }
        return try liveEdges(to: object, canonical).map { (ObjectKey(entity: relationship.target, id: $0.source), $0.added) }
    }

    /// Every edge addition ever made between `object` and others through `relationship`, removed or not.
    func everyEdge(of object: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> [(other: ObjectKey, added: Stamp)] {
        if relationship.isCanonical {
            return try edges("SELECT \(MergeEngine.edgeColumns) FROM _sync_edge WHERE entity = ? AND id = ? AND relationship = ?",
                             [.text(object.entity), .text(object.id.storageText), .text(relationship.name)], includingRemoved: true)
                .map { (ObjectKey(entity: relationship.target, id: $0.target), $0.added) }
        }
        guard let canonical = schema.inverse(of: relationship) else { return [] }
        return try edges("SELECT \(MergeEngine.edgeColumns) FROM _sync_edge WHERE entity = ? AND relationship = ? AND target = ?",
                         [.text(canonical.entity), .text(canonical.name), .text(object.id.storageText)], includingRemoved: true)
            .map { (ObjectKey(entity: relationship.target, id: $0.source), $0.added) }
    }

    /// Whether the object exists and no delete in force (explicit or by cascade) removes it.
    func isAlive(_ object: ObjectKey, ignoring ignoredRoot: DeleteRoot? = nil) throws -> Bool {
        guard let known = try info(object) else { return false }
        guard known.mayBeDeleted else { return true }
        for row in try connection.rows("SELECT replica, seq, root FROM _sync_delete WHERE entity = ? AND id = ?",
                                       [.text(object.entity), .text(object.id.storageText)]) {
            guard let root = MergeEngine.deleteRoot(row[0], row[1], row[2]) else { continue }
            if root != ignoredRoot && !voided.contains(root) { return false }
        }
        return true
    }

    func vector(of dot: Dot) throws -> VersionVector {
        if let known = vectors[dot] { return known }
        guard let stored = try SyncTables.vectorOfChangeSet(dot, on: connection) else {
            throw SyncError(.notSyncable, "the change set \(dot) is referred to but not stored")
        }
        vectors[dot] = stored
        return stored
    }
}

import Foundation
import LocalStoreCore

extension SyncTables {
    /// How much sync history the store file holds (see ``SyncReplica/heldHistory()``).
    static func heldHistory(on connection: SQLiteConnection) throws -> SyncReplica.HeldHistory {
        func count(_ sql: String) throws -> Int {
            if case .integer(let value)? = try connection.rows(sql).first?.first { return Int(value) }
            return 0
        }
        var byStatus: [OutboxStatus: Int] = [:]
        for row in try connection.rows("SELECT status, count(*) FROM _sync_changeset GROUP BY status") {
            guard case .text(let text) = row[0], let status = OutboxStatus(rawValue: text), case .integer(let value) = row[1] else { continue }
            byStatus[status] = Int(value)
        }
        let pageCount = try count("PRAGMA page_count"), pageSize = try count("PRAGMA page_size")
        let freePages = try count("PRAGMA freelist_count")
        return SyncReplica.HeldHistory(
            pending: byStatus[.pending] ?? 0, sent: byStatus[.sent] ?? 0, acknowledged: byStatus[.acknowledged] ?? 0,
            remote: byStatus[.remote] ?? 0,
            deleteRecords: try count("SELECT count(*) FROM _sync_delete"),
            tombstones: try count("SELECT count(*) FROM _sync_object WHERE tombstone IS NOT NULL"),
            fieldStamps: try FieldStampTable.count(on: connection),
            edgeAdditions: try count("SELECT count(*) FROM _sync_edge"),
            // An addition's first removal is marked on its row; further ones (by other deletes) have rows of their own.
            edgeRemovals: try count("SELECT count(*) FROM _sync_edge WHERE removed_replica IS NOT NULL")
                + count("SELECT count(*) FROM _sync_edge_removal"),
            // A row packs the entries of one cause: they are counted, not the rows.
            journalEntries: try ConflictTable.count(after: 0, on: connection),
            keptForNewerSchema: try KeptChangeSetTable.count(on: connection),
            compactedThrough: try CompactionTable.compactedVector(on: connection),
            forgottenBelow: try CompactionTable.forgottenBelow(on: connection),
            lastCompaction: try CompactionTable.lastCompaction(on: connection),
            fileBytes: Int64(pageCount - freePages) * Int64(pageSize))
    }
}

import Codecs
import Foundation
import LocalStoreCore

/// What moving a compacted dataset to other storage reads of its store file: every log entry
/// from the first, compacted or not.
extension SQLiteDatasetEngine {
    /// The compaction point of the log: the last compacted entry's cursor and digest; `nil`
    /// when the log was never compacted.
    package func compactionPoint() throws -> LogPosition? {
        try replica.withConnection { try ServerCompactedLogTable.compactionPoint(on: $0) }
    }

    /// Calls `body` with every entry of the log in order after its floor (from cursor 1 when it
    /// has none): the compacted entries (with their change set when the store still holds it,
    /// `nil` when compaction deleted it), then the log. Reads in pages, under one read
    /// transaction, so the floor and the entries are those of one moment; `body` must not use
    /// this engine. Returns the floor.
    ///
    /// - Throws: ``SyncError`` when the cursors are not consecutive from the floor's, or a
    ///   logged change set is missing.
    @discardableResult
    package func forEachLogEntry(_ body: (MirroredLogEntry, ChangeSet?) throws -> Void) throws -> LogFloor? {
        let pageSize: Int64 = 1_000
        return try replica.withConnection { connection in
            try connection.execute("BEGIN")
            defer { try? connection.execute("COMMIT") }
            let floor = try ServerCompactedLogTable.floor(on: connection)
            var previous = floor?.position.cursor ?? 0
            for table in ["_server_log_compacted", "_server_log"] {
                while true {
                    let rows = try connection.rows("SELECT cursor, replica, seq, digest FROM \(table) WHERE cursor > ? ORDER BY cursor LIMIT ?",
                                                   [.integer(previous), .integer(pageSize)])
                    for row in rows {
                        guard case .integer(let cursor) = row[0], let author = UUID(stored: row[1]), case .integer(let seq) = row[2],
                              case .blob(let digestBytes) = row[3], let digest = LogDigest(bytes: Array(digestBytes)) else {
                            throw SyncError(.notSyncable, "\(connection.path): the \(table) row after cursor \(previous) is damaged")
                        }
                        guard cursor == previous + 1 else {
                            throw SyncError(.notSyncable, "\(connection.path): the log's cursors jump from \(previous) to \(cursor) in \(table)")
                        }
                        let dot = Dot(replica: author, seq: UInt64(seq))
                        let changeSet = try ChangeSetTable.changeSet(dot, on: connection)
                        if table == "_server_log", changeSet == nil {
                            throw SyncError(.notSyncable, "\(connection.path): the change set \(dot) of log entry \(cursor) is not stored")
                        }
                        try body(MirroredLogEntry(cursor: cursor, dot: dot, digest: digest), changeSet)
                        previous = cursor
                    }
                    if Int64(rows.count) < pageSize { break }
                }
            }
            return floor
        }
    }
}

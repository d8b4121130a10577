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
    package func forEachLogEntry(_ body: (LogEntry, ChangeSet?) throws -> Void) throws -> LogFloor? {
        let pageSize = 1_000
        return try replica.withConnection { connection in
            try connection.execute("BEGIN")
            defer { try? connection.execute("COMMIT") }
            let floor = try ServerCompactedLogTable.floor(on: connection)
            var previous = floor?.position.cursor ?? 0
            for compacted in [true, false] {
                let log = compacted ? "the compacted log" : "the log"
                while true {
                    let entries = compacted
                        ? try ServerCompactedLogTable.entries(after: previous, limit: pageSize, on: connection)
                        : try ServerLogTable.entries(after: previous, limit: pageSize, on: connection)
                    for entry in entries {
                        guard entry.cursor == previous + 1 else {
                            throw SyncError(.notSyncable, "\(connection.path): the cursors of \(log) jump from \(previous) to \(entry.cursor)")
                        }
                        let changeSet = try ChangeSetTable.changeSet(entry.dot, on: connection)
                        if !compacted, changeSet == nil {
                            throw SyncError(.notSyncable, "\(connection.path): the change set \(entry.dot) of log entry \(entry.cursor) is not stored")
                        }
                        try body(entry, changeSet)
                        previous = entry.cursor
                    }
                    if entries.count < pageSize { break }
                }
            }
            return floor
        }
    }
}

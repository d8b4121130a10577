import Codecs
import Foundation
import LocalStoreCore

/// What a storage whose log lives elsewhere (syncd's PostgreSQL storage) needs of a store file
/// used as its merged-state cache: the same merge, with the author check and the log entries
/// written by the caller, and log entries that carry the shared log's cursors and digests.
extension SQLiteDatasetEngine {
    /// Merges `batch` as ``apply(_:pushedBy:)`` does, but instead of checking authors and
    /// logging, calls `record` inside the merge's transaction with the change sets applied, in
    /// the order they were applied. `record` throwing rolls the merge back.
    package func apply(_ batch: ValidatedBatch,
                       recording record: (SQLiteConnection, [ChangeSet]) throws -> Void) throws -> (applied: [Dot], alreadyApplied: [Dot]) {
        let result = try replica.apply(batch, alsoInTransaction: record)
        return (result.applied, result.alreadyApplied)
    }

    /// Records `entries` in the store file's log with their own cursors and digests (inside a
    /// transaction of ``apply(_:recording:)``), so a snapshot of the file names the shared log's position.
    package static func appendMirroredLogEntries(_ entries: [LogEntry], on connection: SQLiteConnection) throws {
        try ServerLogTable.append(mirroring: entries, on: connection)
    }

    /// Copies the store file whole (log and compacted log included) to `path`: a base from which
    /// another instance's cache replays the shared log's tail.
    package func copyStoreFile(to path: String) throws {
        try replica.withConnection { try $0.run("VACUUM INTO ?", [.text(path)]) }
    }

    /// The cursor of the store file's last log entry and the digest up to it.
    package func logEnd() throws -> LogPosition {
        try replica.withConnection { try ServerLogTable.end(on: $0) }
    }
}

extension SQLiteDatasetEngine {
    /// Every replica key registered in the store file, for moving the dataset to other storage.
    package func registeredReplicaKeys() throws -> [ReplicaCredentials] {
        try replica.withConnection { connection in
            try ServerReplicaKeyTable.replicas(on: connection).compactMap { replica in
                try ServerReplicaKeyTable.key(of: replica, on: connection).map { ReplicaCredentials(replica: replica, key: $0) }
            }
        }
    }
}

import Codecs
import Foundation
import LocalStoreCore

/// `_server_log_compacted`: what a server keeps of the log entries it compacted (see
/// ``SQLiteDatasetEngine/compactLog(stable:)``): each entry's cursor, dot and digest, without
/// its change set.
///
/// The digests keep the check of a pull's `afterDigest` sound for a cursor before the
/// compaction point, and the dots let the server prove that a puller already has every
/// compacted entry after its cursor. A row costs some 70 bytes, against the kilobytes of the
/// change set it replaces. Like the log, it is dropped from snapshots.
enum ServerCompactedLogTable {
    static func install(on connection: SQLiteConnection) throws {
        try connection.execute(
            "CREATE TABLE IF NOT EXISTS _server_log_compacted (cursor INTEGER PRIMARY KEY, replica TEXT NOT NULL, seq INTEGER NOT NULL, digest BLOB NOT NULL)")
    }

    /// Moves the log entries up to `cursor` out of `_server_log` into this table.
    static func moveLogEntries(through cursor: Int64, on connection: SQLiteConnection) throws {
        try connection.run("INSERT INTO _server_log_compacted (cursor, replica, seq, digest) SELECT cursor, replica, seq, digest FROM _server_log WHERE cursor <= ?",
                           [.integer(cursor)])
        try connection.run("DELETE FROM _server_log WHERE cursor <= ?", [.integer(cursor)])
    }

    /// The compaction point: the last compacted entry's cursor and digest; `nil` when nothing was compacted.
    static func compactionPoint(on connection: SQLiteConnection) throws -> LogPosition? {
        guard let row = try connection.rows("SELECT cursor, digest FROM _server_log_compacted ORDER BY cursor DESC LIMIT 1").first else {
            return nil
        }
        guard case .integer(let cursor) = row[0], case .blob(let data) = row[1], let digest = LogDigest(bytes: Array(data)) else {
            throw SyncError(.notSyncable, "\(connection.path): the last _server_log_compacted row is damaged")
        }
        return LogPosition(cursor: cursor, digest: digest)
    }

    /// The digest stored with the compacted entry at `cursor`, `nil` when none has that cursor.
    static func digest(at cursor: Int64, on connection: SQLiteConnection) throws -> LogDigest? {
        guard let value = try connection.rows("SELECT digest FROM _server_log_compacted WHERE cursor = ?", [.integer(cursor)]).first?.first else {
            return nil
        }
        guard case .blob(let data) = value, let digest = LogDigest(bytes: Array(data)) else {
            throw SyncError(.notSyncable, "\(connection.path): the _server_log_compacted row at cursor \(cursor) is damaged")
        }
        return digest
    }

    /// The first compacted entry after `cursor`, up to `point`, that `replica` did not author and
    /// `known` does not cover: one the replica cannot be shown to have; `nil` when there is none.
    static func firstUnknown(after cursor: Int64, through point: Int64, to replica: ReplicaID?, known: VersionVector,
                             on connection: SQLiteConnection) throws -> Dot? {
        var unknown: Dot?
        try connection.forEachRow("SELECT replica, seq FROM _server_log_compacted WHERE cursor > ? AND cursor <= ? AND replica IS NOT ? ORDER BY cursor",
                                  [.integer(cursor), .integer(point), replica.map { .text($0.storageText) } ?? .null]) { row in
            guard unknown == nil, let author = row.uuid(at: 0) else { return }
            let dot = Dot(replica: author, seq: UInt64(row.integer(at: 1)))
            if !known.covers(dot) { unknown = dot }
        }
        return unknown
    }

    /// Drops the table from a copy of the store file made for a client.
    static func removeFromCopy(on connection: SQLiteConnection) throws {
        try connection.execute("DROP TABLE IF EXISTS _server_log_compacted")
    }
}

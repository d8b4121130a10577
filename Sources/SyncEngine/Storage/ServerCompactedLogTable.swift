import Codecs
import Foundation
import LocalStoreCore

/// `_server_log_compacted` and `_server_log_floor`: what a server keeps of the log entries it
/// compacted (see ``SQLiteDatasetEngine/compactLog(stable:)``).
///
/// `_server_log_compacted` holds each compacted entry's cursor, dot and digest, without its
/// change set, while an active replica may still pull from before it: the digests keep the
/// check of a pull's `afterDigest` sound for a cursor before the compaction point, and the dots
/// let the server prove that a puller already has every compacted entry after its cursor. A row
/// costs some 70 bytes. Once every active replica has pulled past an entry, its row goes into
/// the one row of `_server_log_floor` (a ``LogFloor``: position and vector). Both tables are
/// dropped from snapshots, like the log.
enum ServerCompactedLogTable {
    static func install(on connection: SQLiteConnection) throws {
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS _server_log_compacted (cursor INTEGER PRIMARY KEY, replica BLOB NOT NULL, seq INTEGER NOT NULL, digest BLOB NOT NULL);
            CREATE TABLE IF NOT EXISTS _server_log_floor (id INTEGER PRIMARY KEY CHECK (id = 1), cursor INTEGER NOT NULL, digest BLOB NOT NULL, vector TEXT NOT NULL)
            """)
    }

    /// Whether the store file has the compacted log: a store written before compaction existed,
    /// opened without migrating, has not.
    static func exists(on connection: SQLiteConnection) throws -> Bool {
        try !connection.rows("SELECT 1 FROM sqlite_master WHERE name = '_server_log_compacted'").isEmpty
    }

    /// Up to `limit` compacted entries after `cursor`, oldest first.
    static func entries(after cursor: Int64, limit: Int, on connection: SQLiteConnection) throws -> [LogEntry] {
        try ServerLogTable.entries(in: "_server_log_compacted", after: cursor, limit: limit, on: connection)
    }

    /// The floor of the compacted log, `nil` while every compacted entry has its row.
    static func floor(on connection: SQLiteConnection) throws -> LogFloor? {
        // A store written before the floor existed opens read-only without the table.
        guard try !connection.rows("SELECT 1 FROM sqlite_master WHERE name = '_server_log_floor'").isEmpty,
              let row = try connection.rows("SELECT cursor, digest, vector FROM _server_log_floor").first else { return nil }
        guard case .integer(let cursor) = row[0], case .blob(let data) = row[1], let digest = LogDigest(bytes: Array(data)),
              case .text(let text) = row[2], let vector = ReplicaRegistry.vector(fromText: text) else {
            throw SyncError(.notSyncable, "\(connection.path): the _server_log_floor row is damaged")
        }
        return LogFloor(position: LogPosition(cursor: cursor, digest: digest), vector: vector)
    }

    /// Replaces the floor with `floor` (an imported log's).
    static func setFloor(_ floor: LogFloor, on connection: SQLiteConnection) throws {
        try connection.run("INSERT OR REPLACE INTO _server_log_floor (id, cursor, digest, vector) VALUES (1, ?, ?, ?)",
                           [.integer(floor.position.cursor), .blob(Data(floor.position.digest.bytes)), .text(ReplicaRegistry.text(of: floor.vector))])
    }

    /// Folds the compacted entries up to `cursor` into the floor and deletes their rows; returns
    /// how many it folded (0 when the floor is at or above `cursor` already).
    ///
    /// - Throws: ``SyncError`` when no compacted entry has that cursor.
    static func raiseFloor(to cursor: Int64, on connection: SQLiteConnection) throws -> Int {
        var floor = try self.floor(on: connection) ?? LogFloor(position: LogPosition(cursor: 0, digest: .empty), vector: VersionVector())
        guard cursor > floor.position.cursor else { return 0 }
        guard let digest = try digest(at: cursor, on: connection) else {
            throw SyncError(.notSyncable, "\(connection.path): no compacted log entry has cursor \(cursor), so the floor cannot rise to it")
        }
        let folded = [SQLValue.integer(floor.position.cursor), .integer(cursor)]
        for row in try connection.rows("SELECT replica, max(seq) FROM _server_log_compacted WHERE cursor > ? AND cursor <= ? GROUP BY replica", folded) {
            guard let replica = UUID(stored: row[0]), case .integer(let seq) = row[1] else {
                throw SyncError(.notSyncable, "\(connection.path): a _server_log_compacted row up to cursor \(cursor) is damaged")
            }
            floor.vector[replica] = max(floor.vector[replica], UInt64(seq))
        }
        floor.position = LogPosition(cursor: cursor, digest: digest)
        try setFloor(floor, on: connection)
        try connection.run("DELETE FROM _server_log_compacted WHERE cursor > ? AND cursor <= ?", folded)
        return connection.changes
    }

    /// Moves the log entries up to `cursor` out of `_server_log` into this table.
    static func moveLogEntries(through cursor: Int64, on connection: SQLiteConnection) throws {
        try connection.run("INSERT INTO _server_log_compacted (cursor, replica, seq, digest) SELECT cursor, replica, seq, digest FROM _server_log WHERE cursor <= ?",
                           [.integer(cursor)])
        try connection.run("DELETE FROM _server_log WHERE cursor <= ?", [.integer(cursor)])
    }

    /// The compaction point: the last compacted entry's cursor and digest (the floor's when
    /// every compacted entry was folded into it); `nil` when nothing was compacted.
    static func compactionPoint(on connection: SQLiteConnection) throws -> LogPosition? {
        guard let row = try connection.rows("SELECT cursor, digest FROM _server_log_compacted ORDER BY cursor DESC LIMIT 1").first else {
            return try floor(on: connection)?.position
        }
        guard case .integer(let cursor) = row[0], case .blob(let data) = row[1], let digest = LogDigest(bytes: Array(data)) else {
            throw SyncError(.notSyncable, "\(connection.path): the last _server_log_compacted row is damaged")
        }
        return LogPosition(cursor: cursor, digest: digest)
    }

    /// The digest stored with the compacted entry at `cursor` (or the floor's at its cursor),
    /// `nil` when none has that cursor: the digests below the floor are gone.
    static func digest(at cursor: Int64, on connection: SQLiteConnection) throws -> LogDigest? {
        guard let value = try connection.rows("SELECT digest FROM _server_log_compacted WHERE cursor = ?", [.integer(cursor)]).first?.first else {
            guard let floor = try floor(on: connection), floor.position.cursor == cursor else { return nil }
            return floor.position.digest
        }
        guard case .blob(let data) = value, let digest = LogDigest(bytes: Array(data)) else {
            throw SyncError(.notSyncable, "\(connection.path): the _server_log_compacted row at cursor \(cursor) is damaged")
        }
        return digest
    }

    /// The first compacted entry after `cursor`, up to `point`, that `replica` did not author and
    /// `known` does not cover: one the replica cannot be shown to have; `nil` when there is none.
    /// From a cursor below the floor, every entry the floor covers counts (their cursors are gone).
    static func firstUnknown(after cursor: Int64, through point: Int64, to replica: ReplicaID?, known: VersionVector,
                             on connection: SQLiteConnection) throws -> Dot? {
        let (start, unknownBelowFloor) = LogFloor.checkStart(try floor(on: connection), after: cursor, to: replica, known: known)
        if let unknownBelowFloor { return unknownBelowFloor }
        var unknown: Dot?
        try connection.forEachRow("SELECT replica, seq FROM _server_log_compacted WHERE cursor > ? AND cursor <= ? AND replica IS NOT ? ORDER BY cursor",
                                  [.integer(start), .integer(point), replica.map { $0.storedValue } ?? .null]) { row in
            guard unknown == nil, let author = row.identifier(at: 0) else { return }
            let dot = Dot(replica: author, seq: UInt64(row.integer(at: 1)))
            if !known.covers(dot) { unknown = dot }
        }
        return unknown
    }

    /// Drops the table from a copy of the store file made for a client.
    static func removeFromCopy(on connection: SQLiteConnection) throws {
        try connection.execute("DROP TABLE IF EXISTS _server_log_compacted; DROP TABLE IF EXISTS _server_log_floor")
    }
}

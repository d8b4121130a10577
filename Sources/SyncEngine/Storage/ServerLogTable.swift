import Codecs
import Foundation
import LocalStoreCore

/// `_server_log`: a server's log of the change sets it stored, in the dataset's store file.
///
/// A row is written in the merge's own transaction for every change set the server applies, in
/// application order, so the log order respects causality and a cursor (a row's `cursor`) names
/// exactly the change sets a client has seen. `AUTOINCREMENT` keeps cursors from ever being
/// reused. Clients have no use for it: ``removeFromCopy(on:)`` drops it from snapshots.
///
/// Each row also keeps the ``LogDigest`` of the log up to it, which a client sends back with its
/// cursor: a server restored from a backup assigns the same cursors to other change sets, and
/// only the digest tells the two logs apart.
enum ServerLogTable {
    static func install(on connection: SQLiteConnection) throws {
        try connection.execute(
            "CREATE TABLE IF NOT EXISTS _server_log (cursor INTEGER PRIMARY KEY AUTOINCREMENT, replica BLOB NOT NULL, seq INTEGER NOT NULL, digest BLOB)")
        let columns = try connection.rows("PRAGMA table_info(_server_log)").compactMap { $0[1].textValue }
        if !columns.contains("digest") {
            try connection.inTransaction { try addDigestColumn(on: connection) }
        }
    }

    /// Gives a log written before rows had digests its digests, computed row by row in log order.
    private static func addDigestColumn(on connection: SQLiteConnection) throws {
        try connection.execute("ALTER TABLE _server_log ADD COLUMN digest BLOB")
        var digest = LogDigest.empty
        for row in try connection.rows("SELECT cursor, replica, seq FROM _server_log ORDER BY cursor") {
            guard case .integer(let cursor) = row[0], let dot = dot(row, at: 1) else {
                throw SyncError(.notSyncable, "\(connection.path): a _server_log row is damaged")
            }
            digest = digest.appending(dot)
            try connection.run("UPDATE _server_log SET digest = ? WHERE cursor = ?", [.blob(Data(digest.bytes)), .integer(cursor)])
        }
    }

    static func append(_ changeSets: [ChangeSet], on connection: SQLiteConnection) throws {
        guard !changeSets.isEmpty else { return }
        var digest = try end(on: connection).digest
        for changeSet in changeSets {
            digest = digest.appending(changeSet.dot)
            try connection.run("INSERT INTO _server_log (replica, seq, digest) VALUES (?, ?, ?)",
                               [changeSet.dot.replica.storedValue, .integer(Int64(changeSet.dot.seq)), .blob(Data(digest.bytes))])
        }
    }

    /// Appends entries that keep the cursors and digests another log gave them (a mirror of a
    /// shared log, so that a snapshot of the store file names that log's position).
    static func append(mirroring entries: [LogEntry], on connection: SQLiteConnection) throws {
        for entry in entries {
            try connection.run("INSERT INTO _server_log (cursor, replica, seq, digest) VALUES (?, ?, ?, ?)",
                               [.integer(entry.cursor), entry.dot.replica.storedValue, .integer(Int64(entry.dot.seq)), .blob(Data(entry.digest.bytes))])
        }
    }

    /// The cursor of the last entry and the digest of the log up to it (0 and
    /// ``LogDigest/empty`` for an empty log; the compaction point when every entry was compacted).
    static func end(on connection: SQLiteConnection) throws -> LogPosition {
        guard let row = try connection.rows("SELECT cursor, digest FROM _server_log ORDER BY cursor DESC LIMIT 1").first else {
            return try ServerCompactedLogTable.compactionPoint(on: connection) ?? LogPosition(cursor: 0, digest: .empty)
        }
        guard case .integer(let cursor) = row[0] else {
            throw SyncError(.notSyncable, "\(connection.path): the last _server_log row's cursor is damaged (\(row[0].storageClassName))")
        }
        return LogPosition(cursor: cursor, digest: try storedDigest(row[1], on: connection))
    }

    /// The digest of the log up to `cursor`: ``LogDigest/empty`` at 0, `nil` when no entry has
    /// that cursor, logged or compacted.
    static func digest(at cursor: Int64, on connection: SQLiteConnection) throws -> LogDigest? {
        guard cursor != 0 else { return .empty }
        guard let row = try connection.rows("SELECT digest FROM _server_log WHERE cursor = ?", [.integer(cursor)]).first else {
            return try ServerCompactedLogTable.digest(at: cursor, on: connection)
        }
        return try storedDigest(row[0], on: connection)
    }

    private static func storedDigest(_ value: SQLValue, in table: String = "_server_log", on connection: SQLiteConnection) throws -> LogDigest {
        guard case .blob(let data) = value, let digest = LogDigest(bytes: Array(data)) else {
            throw SyncError(.notSyncable, "\(connection.path): a \(table) row's digest is damaged (\(value.storageClassName))")
        }
        return digest
    }

    private static func dot(_ row: [SQLValue], at index: Int) -> Dot? {
        guard let replica = UUID(stored: row[index]), case .integer(let seq) = row[index + 1], seq > 0 else {
            return nil
        }
        return Dot(replica: replica, seq: UInt64(seq))
    }

    /// The highest cursor ever assigned, even if rows were removed since.
    static func highestAssignedCursor(on connection: SQLiteConnection) throws -> Int64 {
        let assigned: Int64
        if case .integer(let value)? = try connection.rows("SELECT seq FROM sqlite_sequence WHERE name = '_server_log'").first?.first {
            assigned = value
        } else {
            assigned = 0
        }
        return max(assigned, try end(on: connection).cursor)
    }

    /// Up to `limit` entries after `cursor`, oldest first.
    static func entries(after cursor: Int64, limit: Int, on connection: SQLiteConnection) throws -> [LogEntry] {
        try entries(in: "_server_log", after: cursor, limit: limit, on: connection)
    }

    /// Up to `limit` entries of `table` (the log, or ``ServerCompactedLogTable``'s rows, which
    /// have the log's columns) after `cursor`, oldest first.
    static func entries(in table: String, after cursor: Int64, limit: Int, on connection: SQLiteConnection) throws -> [LogEntry] {
        try connection.rows("SELECT cursor, replica, seq, digest FROM \(table) WHERE cursor > ? ORDER BY cursor LIMIT ?",
                            [.integer(cursor), .integer(Int64(limit))]).map { row in
            guard case .integer(let cursor) = row[0], let dot = dot(row, at: 1) else {
                throw SyncError(.notSyncable, "\(connection.path): the \(table) row after cursor \(cursor) is damaged")
            }
            return LogEntry(cursor: cursor, dot: dot, digest: try storedDigest(row[3], in: table, on: connection))
        }
    }

    /// Drops the log from a copy of the store file made for a client, and compacts the copy.
    static func removeFromCopy(on connection: SQLiteConnection) throws {
        try connection.execute("DROP TABLE IF EXISTS _server_log; DELETE FROM sqlite_sequence WHERE name = '_server_log'; VACUUM")
    }
}

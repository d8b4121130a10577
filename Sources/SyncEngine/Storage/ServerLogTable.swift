import Codecs
import Foundation
import LocalStoreCore

/// `_server_log`: a server's log of the change sets it stored, in the dataset's store file.
///
/// A row is written in the merge's own transaction for every change set the server applies, in
/// application order, so the log order respects causality and a cursor (a row's `cursor`) names
/// exactly the change sets a client has seen. `AUTOINCREMENT` keeps cursors from ever being
/// reused. Clients have no use for it: ``removeFromCopy(on:)`` drops it from snapshots.
enum ServerLogTable {
    /// One logged change set.
    struct Entry {
        var cursor: Int64
        var dot: Dot
    }

    static func install(on connection: SQLiteConnection) throws {
        try connection.execute(
            "CREATE TABLE IF NOT EXISTS _server_log (cursor INTEGER PRIMARY KEY AUTOINCREMENT, replica TEXT NOT NULL, seq INTEGER NOT NULL)")
    }

    static func append(_ changeSets: [ChangeSet], on connection: SQLiteConnection) throws {
        for changeSet in changeSets {
            try connection.run("INSERT INTO _server_log (replica, seq) VALUES (?, ?)",
                               [.text(changeSet.dot.replica.storageText), .integer(Int64(changeSet.dot.seq))])
        }
    }

    /// The cursor of the last entry (0 for an empty log).
    static func lastCursor(on connection: SQLiteConnection) throws -> Int64 {
        if case .integer(let value)? = try connection.rows("SELECT max(cursor) FROM _server_log").first?.first { return value }
        return 0
    }

    /// The highest cursor ever assigned, even if rows were removed since.
    static func highestAssignedCursor(on connection: SQLiteConnection) throws -> Int64 {
        let assigned: Int64
        if case .integer(let value)? = try connection.rows("SELECT seq FROM sqlite_sequence WHERE name = '_server_log'").first?.first {
            assigned = value
        } else {
            assigned = 0
        }
        return max(assigned, try lastCursor(on: connection))
    }

    /// Up to `limit` entries after `cursor`, oldest first.
    static func entries(after cursor: Int64, limit: Int, on connection: SQLiteConnection) throws -> [Entry] {
        try connection.rows("SELECT cursor, replica, seq FROM _server_log WHERE cursor > ? ORDER BY cursor LIMIT ?",
                            [.integer(cursor), .integer(Int64(limit))]).map { row in
            guard case .integer(let cursor) = row[0], case .text(let text) = row[1], let replica = UUID(storageText: text),
                  case .integer(let seq) = row[2], seq > 0 else {
                throw SyncError(.notSyncable, "a _server_log row is damaged")
            }
            return Entry(cursor: cursor, dot: Dot(replica: replica, seq: UInt64(seq)))
        }
    }

    /// Drops the log from a copy of the store file made for a client, and compacts the copy.
    static func removeFromCopy(on connection: SQLiteConnection) throws {
        try connection.execute("DROP TABLE IF EXISTS _server_log; DELETE FROM sqlite_sequence WHERE name = '_server_log'; VACUUM")
    }
}

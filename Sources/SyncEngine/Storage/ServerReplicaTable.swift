import Codecs
import Foundation
import LocalStoreCore

/// `_server_replica`: the dataset's replica registry in its store file (see ``ReplicaRecord``):
/// each replica's acknowledged vector and the cursor it covers, when it was last seen
/// (milliseconds since 1970), whether it was retired, its unpushed bounds and the vector it
/// reported forgetting deleted objects below (`NULL` until it does).
///
/// Written by the pushes and pulls of a replica only when its acknowledged vector grows or its
/// last-seen time is older than ``ReplicaPolicy/lastSeenResolution``, and by `syncd replica
/// retire`, possibly from another process: the running server reads the row on every contact.
/// Clients have no use for it: ``removeFromCopy(on:)`` drops it from snapshots.
enum ServerReplicaTable {
    static func install(on connection: SQLiteConnection) throws {
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS _server_replica (replica BLOB PRIMARY KEY NOT NULL, acknowledged TEXT NOT NULL,
                acknowledged_cursor INTEGER NOT NULL, last_seen INTEGER NOT NULL, retired INTEGER NOT NULL DEFAULT 0,
                unpushed TEXT NOT NULL DEFAULT '', forgotten TEXT) WITHOUT ROWID
            """)
        // A registry written before replicas reported their unpushed bounds gains the column.
        let columns = try connection.rows("SELECT name FROM pragma_table_info('_server_replica')").compactMap { row -> String? in
            if case .text(let name)? = row.first { return name }
            return nil
        }
        if !columns.contains("unpushed") {
            try connection.execute("ALTER TABLE _server_replica ADD COLUMN unpushed TEXT NOT NULL DEFAULT ''")
        }
        // And before they reported what they forgot.
        if !columns.contains("forgotten") {
            try connection.execute("ALTER TABLE _server_replica ADD COLUMN forgotten TEXT")
        }
    }

    private static let columns = "replica, acknowledged, acknowledged_cursor, last_seen, retired, unpushed, forgotten"

    /// The record of `replica`, if the dataset ever heard from it.
    static func record(of replica: ReplicaID, on connection: SQLiteConnection) throws -> ReplicaRecord? {
        try connection.rows("SELECT \(columns) FROM _server_replica WHERE replica = ?", [replica.storedValue]).first
            .map { try record($0, on: connection) }
    }

    /// Every record, in replica order.
    static func records(on connection: SQLiteConnection) throws -> [ReplicaRecord] {
        try connection.rows("SELECT \(columns) FROM _server_replica ORDER BY replica").map { try record($0, on: connection) }
    }

    private static func record(_ row: [SQLValue], on connection: SQLiteConnection) throws -> ReplicaRecord {
        guard let replica = UUID(stored: row[0]), case .text(let vectorText) = row[1],
              let acknowledged = ReplicaRegistry.vector(fromText: vectorText), case .integer(let cursor) = row[2],
              case .integer(let lastSeen) = row[3], case .integer(let retired) = row[4],
              case .text(let unpushedText) = row[5], let unpushed = UnpushedBounds(text: unpushedText) else {
            throw SyncError(.notSyncable, "\(connection.path): a _server_replica row is damaged (\(row[0]))")
        }
        var forgotten: VersionVector?
        if case .text(let forgottenText) = row[6] {
            guard let vector = ReplicaRegistry.vector(fromText: forgottenText) else {
                throw SyncError(.notSyncable, "\(connection.path): the forgotten vector of a _server_replica row is damaged (\(row[0]))")
            }
            forgotten = vector
        }
        return ReplicaRecord(replica: replica, acknowledged: acknowledged, acknowledgedCursor: cursor,
                             lastSeen: Date(timeIntervalSince1970: Double(lastSeen) / 1000), retired: retired != 0, unpushedBounds: unpushed,
                             forgottenBelow: forgotten)
    }

    /// Writes a contact's record; never clears a retirement another process wrote meanwhile.
    static func save(_ record: ReplicaRecord, on connection: SQLiteConnection) throws {
        try connection.run("""
            INSERT INTO _server_replica (replica, acknowledged, acknowledged_cursor, last_seen, retired, unpushed, forgotten)
            VALUES (?, ?, ?, ?, 0, ?, ?)
            ON CONFLICT (replica) DO UPDATE SET acknowledged = excluded.acknowledged,
                acknowledged_cursor = excluded.acknowledged_cursor, last_seen = excluded.last_seen, unpushed = excluded.unpushed,
                forgotten = excluded.forgotten
            """, [record.replica.storedValue, .text(ReplicaRegistry.text(of: record.acknowledged)),
                  .integer(record.acknowledgedCursor), .integer(Int64((record.lastSeen.timeIntervalSince1970 * 1000).rounded())),
                  .text(record.unpushedBounds.text), record.forgottenBelow.map { .text(ReplicaRegistry.text(of: $0)) } ?? .null])
    }

    /// Marks `replica` retired (recording it first if the dataset never heard from it).
    static func retire(_ replica: ReplicaID, at now: Date, on connection: SQLiteConnection) throws {
        try connection.run("""
            INSERT INTO _server_replica (replica, acknowledged, acknowledged_cursor, last_seen, retired) VALUES (?, '', 0, ?, 1)
            ON CONFLICT (replica) DO UPDATE SET retired = 1
            """, [replica.storedValue, .integer(Int64((now.timeIntervalSince1970 * 1000).rounded()))])
    }

    /// Drops the registry from a copy of the store file made for a client.
    static func removeFromCopy(on connection: SQLiteConnection) throws {
        try connection.execute("DROP TABLE IF EXISTS _server_replica")
    }
}

extension ServerLogTable {
    /// The highest seq of every replica among the log entries after `cursor` through `end`.
    static func vector(after cursor: Int64, through end: Int64, on connection: SQLiteConnection) throws -> VersionVector {
        var vector = VersionVector()
        for row in try connection.rows("SELECT replica, max(seq) FROM _server_log WHERE cursor > ? AND cursor <= ? GROUP BY replica",
                                       [.integer(cursor), .integer(end)]) {
            guard let replica = UUID(stored: row[0]), case .integer(let seq) = row[1], seq > 0 else {
                throw SyncError(.notSyncable, "\(connection.path): a _server_log row between cursors \(cursor) and \(end) is damaged")
            }
            vector[replica] = UInt64(seq)
        }
        return vector
    }
}

import Codecs
import Foundation
import LocalStoreCore

/// `_server_forgotten_object`: the identifiers of the objects a server's compaction forgot
/// (deleted for good, every other trace of them gone; see
/// ``SyncTables/compactServerState(stable:droppingDeletedObjects:forgottenEverywhereBelow:on:)``),
/// 16 bytes each, so that a change set creating one of them again is refused as it was while the
/// object's creation row stood; and `_server_forgetting`, the stable vector of each compaction
/// that forgot objects, which each identifier names by number.
///
/// Only a server keeps them: every change set reaches clients through a server, which refuses such
/// a create, and a client's own saves draw random identifiers. Like the log, they are dropped from
/// snapshots, so a new client's bootstrap does not grow with the deletes of the dataset's past.
///
/// An identifier is needed only while a replica may still hold a record of its object: a create
/// of it would meet that record there. Once every active replica reported that it holds no
/// object deleted at or below a compaction's stable vector (pull header `Sync-Forgotten-Below`,
/// ``ReplicaRecord/forgottenBelow``), the identifiers that compaction forgot are released
/// (``release(forgottenEverywhereBelow:on:)``): the table holds the deletes of the recent past, not of the whole history.
enum ServerForgottenObjectTable {
    private static let createStatements = [
        """
        CREATE TABLE IF NOT EXISTS _server_forgotten_object (entity TEXT NOT NULL, id BLOB NOT NULL,
            forgetting INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (entity, id)) WITHOUT ROWID
        """,
        "CREATE TABLE IF NOT EXISTS _server_forgetting (number INTEGER PRIMARY KEY, stable TEXT NOT NULL)",
    ]

    /// Whether the store has the table, that is, a compaction forgot objects in it.
    static func exists(on connection: SQLiteConnection) throws -> Bool {
        try !connection.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_server_forgotten_object'").isEmpty
    }

    /// Records the objects of `table` (columns `entity, id`), forgotten by a compaction below `stable`.
    static func insert(objectsIn table: String, forgottenBelow stable: VersionVector, on connection: SQLiteConnection) throws {
        guard try connection.rows("SELECT 1 FROM \(table) LIMIT 1").first != nil else { return }
        for statement in createStatements { try connection.execute(statement) }
        try connection.run("INSERT INTO _server_forgetting (number, stable) SELECT ifnull(max(number), 0) + 1, ? FROM _server_forgetting",
                           [.text(ReplicaRegistry.text(of: stable))])
        try connection.execute("""
            INSERT OR IGNORE INTO _server_forgotten_object (entity, id, forgetting)
            SELECT entity, id, (SELECT max(number) FROM _server_forgetting) FROM \(table)
            """)
    }

    /// Removes the identifiers forgotten by compactions whose stable vector `everywhere`
    /// dominates: every active replica holds no record of their objects. Returns how many.
    static func release(forgottenEverywhereBelow everywhere: VersionVector, on connection: SQLiteConnection) throws -> Int {
        guard try exists(on: connection) else { return 0 }
        var released: [Int64] = []
        for row in try connection.rows("SELECT number, stable FROM _server_forgetting ORDER BY number") {
            guard case .integer(let number) = row[0], case .text(let text) = row[1], let stable = ReplicaRegistry.vector(fromText: text) else {
                throw SyncError(.notSyncable, "\(connection.path): a _server_forgetting row is damaged (\(row[0]))")
            }
            if everywhere.dominates(stable) { released.append(number) }
        }
        guard !released.isEmpty else { return 0 }
        // One pass over the identifiers, which have no index by compaction: it would cost as much again.
        let numbers = released.map(String.init).joined(separator: ",")
        try connection.execute("DELETE FROM _server_forgotten_object WHERE forgetting IN (\(numbers))")
        let count = connection.changes
        try connection.execute("DELETE FROM _server_forgetting WHERE number IN (\(numbers))")
        // Like the first compaction that forgot something, which creates them, the last release
        // drops them: a dataset remembering nothing keeps no page for it.
        if try connection.rows("SELECT 1 FROM _server_forgetting LIMIT 1").isEmpty { try dropTables(on: connection) }
        return count
    }

    /// Gives the identifiers a store of sync format 7 or older remembers the compaction that
    /// forgot them: one below the store's vector, which dominates each of their deletes.
    static func tagLegacyIdentifiers(on connection: SQLiteConnection) throws {
        guard try exists(on: connection) else { return }
        try connection.execute("ALTER TABLE _server_forgotten_object ADD COLUMN forgetting INTEGER NOT NULL DEFAULT 0")
        try connection.execute(createStatements[1])
        try connection.run("INSERT OR REPLACE INTO _server_forgetting (number, stable) VALUES (0, ?)",
                           [.text(ReplicaRegistry.text(of: try VersionVectorTable.vector(on: connection)))])
    }

    /// Whether `object` was forgotten, on a store that has the table (see ``exists(on:)``).
    static func contains(_ object: ObjectKey, on connection: SQLiteConnection) throws -> Bool {
        try !connection.rows("SELECT 1 FROM _server_forgotten_object WHERE entity = ? AND id = ?",
                             object.values).isEmpty
    }

    /// How many identifiers the store remembers.
    static func count(on connection: SQLiteConnection) throws -> Int {
        guard try exists(on: connection),
              case .integer(let count)? = try connection.rows("SELECT count(*) FROM _server_forgotten_object").first?.first else { return 0 }
        return Int(count)
    }

    /// Drops the tables from a copy of the store file made for a client.
    static func removeFromCopy(on connection: SQLiteConnection) throws {
        try dropTables(on: connection)
    }

    private static func dropTables(on connection: SQLiteConnection) throws {
        try connection.execute("DROP TABLE IF EXISTS _server_forgotten_object")
        try connection.execute("DROP TABLE IF EXISTS _server_forgetting")
    }
}

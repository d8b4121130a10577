import Codecs
import Foundation
import LocalStoreCore

/// `_server_forgotten_object`: the identifiers of the objects a server's compaction forgot
/// (deleted for good, every other trace of them gone; see
/// ``SyncTables/compactServerState(stable:droppingDeletedObjects:on:)``), 16 bytes each, so that
/// a change set creating one of them again is refused as it was while the object's creation row
/// stood.
///
/// Only a server keeps it: every change set reaches clients through a server, which refuses such
/// a create, and a client's own saves draw random identifiers. Like the log, it is dropped from
/// snapshots, so a new client's bootstrap does not grow with the deletes of the dataset's past.
enum ServerForgottenObjectTable {
    private static let createStatement = """
        CREATE TABLE IF NOT EXISTS _server_forgotten_object (entity TEXT NOT NULL, id BLOB NOT NULL, PRIMARY KEY (entity, id)) WITHOUT ROWID
        """

    /// Whether the store has the table, that is, a compaction forgot objects in it.
    static func exists(on connection: SQLiteConnection) throws -> Bool {
        try !connection.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_server_forgotten_object'").isEmpty
    }

    /// Records the objects of `table` (columns `entity, id`).
    static func insert(objectsIn table: String, on connection: SQLiteConnection) throws {
        try connection.execute(createStatement)
        try connection.execute("INSERT OR IGNORE INTO _server_forgotten_object (entity, id) SELECT entity, id FROM \(table)")
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

    /// Drops the table from a copy of the store file made for a client.
    static func removeFromCopy(on connection: SQLiteConnection) throws {
        try connection.execute("DROP TABLE IF EXISTS _server_forgotten_object")
    }
}

import Foundation
import LocalStoreCore

/// `_server_schema_history`: every schema a dataset's store was registered with, oldest first,
/// with when this server first held it. A server's own record: ``removeFromCopy(on:)`` drops it
/// from snapshots.
enum ServerSchemaHistoryTable {
    static func install(on connection: SQLiteConnection) throws {
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS _server_schema_history (
                version_hash TEXT PRIMARY KEY NOT NULL, registered_at INTEGER, schema TEXT NOT NULL)
            """)
    }

    /// Appends `schema` unless it is the newest version already. `registeredAt` is `nil` for a
    /// store that held `schema` before the history was kept.
    static func record(_ schema: SchemaDocument, registeredAt: Date?, on connection: SQLiteConnection) throws {
        let newest = try connection.rows("SELECT version_hash FROM _server_schema_history ORDER BY rowid DESC LIMIT 1").first?.first
        guard newest != .text(schema.versionHash) else { return }
        // A version registered again after another keeps its first time and moves to the end.
        let previous = try connection.rows("SELECT registered_at FROM _server_schema_history WHERE version_hash = ?", [.text(schema.versionHash)]).first?.first
        try connection.run("DELETE FROM _server_schema_history WHERE version_hash = ?", [.text(schema.versionHash)])
        let time: SQLValue = previous ?? registeredAt.map { .integer(Int64(($0.timeIntervalSince1970 * 1000).rounded())) } ?? .null
        try connection.run("INSERT INTO _server_schema_history (version_hash, registered_at, schema) VALUES (?, ?, ?)",
                           [.text(schema.versionHash), time, .text(String(decoding: try schema.jsonData(), as: UTF8.self))])
    }

    /// Whether no version is recorded (a new store, or one from before the history was kept).
    static func isEmpty(on connection: SQLiteConnection) throws -> Bool {
        try connection.rows("SELECT 1 FROM _server_schema_history LIMIT 1").isEmpty
    }

    /// Every version, oldest first.
    ///
    /// - Throws: ``SyncError`` `.notSyncable` when a stored schema cannot be read.
    static func versions(on connection: SQLiteConnection) throws -> [SchemaVersion] {
        try connection.rows("SELECT version_hash, registered_at, schema FROM _server_schema_history ORDER BY rowid").map { row in
            guard case .text(let hash) = row[0], case .text(let json) = row[2],
                  let schema = try? SchemaDocument(jsonData: Data(json.utf8)), schema.versionHash == hash else {
                throw SyncError(.notSyncable, "the schema history holds a damaged entry (\(row[0]))")
            }
            var registeredAt: Date?
            if case .integer(let milliseconds) = row[1] { registeredAt = Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
            return SchemaVersion(schema: schema, registeredAt: registeredAt)
        }
    }

    /// Drops the history from a copy of the store file made for a client.
    static func removeFromCopy(on connection: SQLiteConnection) throws {
        try connection.execute("DROP TABLE IF EXISTS _server_schema_history")
    }
}

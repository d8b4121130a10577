import Foundation
import LocalStoreCore

/// `_sync_kept`: the change sets this replica applied only in part, because they name what its
/// schema does not know (``ChangeSetProjection``), with the `versionHash` of the schema that
/// applied them. The change sets themselves stay whole in ``ChangeSetTable``.
enum KeptChangeSetTable {
    static let createStatements = [
        "CREATE TABLE IF NOT EXISTS _sync_kept (replica TEXT NOT NULL, seq INTEGER NOT NULL, schema TEXT NOT NULL, PRIMARY KEY (replica, seq)) WITHOUT ROWID",
    ]

    /// Records that the schema `schemaVersionHash` applied `dot` in part.
    static func record(_ dot: Dot, schemaVersionHash: String, on connection: SQLiteConnection) throws {
        try connection.run("INSERT OR REPLACE INTO _sync_kept (replica, seq, schema) VALUES (?, ?, ?)",
                           [.text(dot.replica.storageText), .integer(Int64(dot.seq)), .text(schemaVersionHash)])
    }

    /// How many change sets are applied in part.
    static func count(on connection: SQLiteConnection) throws -> Int {
        guard case .integer(let count)? = try connection.rows("SELECT count(*) FROM _sync_kept").first?.first else { return 0 }
        return Int(count)
    }

    /// Whether a schema other than `schemaVersionHash` applied some change set in part: one that
    /// may know what that schema did not.
    static func hasEntries(notAppliedBy schemaVersionHash: String, on connection: SQLiteConnection) throws -> Bool {
        try !connection.rows("SELECT 1 FROM _sync_kept WHERE schema <> ? LIMIT 1", [.text(schemaVersionHash)]).isEmpty
    }

    /// Forgets every entry (before the history is merged again, which records them anew).
    static func removeAll(on connection: SQLiteConnection) throws {
        try connection.execute("DELETE FROM _sync_kept")
    }
}

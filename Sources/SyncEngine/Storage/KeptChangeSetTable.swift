import Foundation
import LocalStoreCore

/// `_sync_kept`: the change sets this replica applied only in part, because they name what its
/// schema does not know (``ChangeSetProjection``), with the `versionHash` of the schema that
/// applied them; `_sync_kept_object`: the objects those change sets created whose entity it does
/// not know. The change sets themselves stay whole in ``ChangeSetTable``.
enum KeptChangeSetTable {
    static let createStatements = [
        "CREATE TABLE IF NOT EXISTS _sync_kept (replica BLOB NOT NULL, seq INTEGER NOT NULL, schema TEXT NOT NULL, PRIMARY KEY (replica, seq)) WITHOUT ROWID",
        // Objects whose creation was kept (their entity is unknown here): operations that link to
        // them through a relationship this schema knows are kept too.
        "CREATE TABLE IF NOT EXISTS _sync_kept_object (id BLOB PRIMARY KEY NOT NULL) WITHOUT ROWID",
    ]

    /// A query with a row when the change set named by the SQL expressions `replica` and `seq` is kept.
    static func keptQuery(replica: String, seq: String) -> String {
        "SELECT 1 FROM _sync_kept AS k WHERE k.replica = \(replica) AND k.seq = \(seq)"
    }

    /// The objects whose creation was kept.
    static func keptObjects(on connection: SQLiteConnection) throws -> Set<UUID> {
        var objects: Set<UUID> = []
        try connection.forEachRow("SELECT id FROM _sync_kept_object") { row in
            if let id = row.identifier(at: 0) { objects.insert(id) }
        }
        return objects
    }

    /// Records that the creations of `objects` were kept.
    static func recordKeptObjects(_ objects: [UUID], on connection: SQLiteConnection) throws {
        for id in objects { try connection.run("INSERT OR IGNORE INTO _sync_kept_object (id) VALUES (?)", [id.storedValue]) }
    }

    /// Records that the schema `schemaVersionHash` applied `dot` in part.
    static func record(_ dot: Dot, schemaVersionHash: String, on connection: SQLiteConnection) throws {
        try connection.run("INSERT OR REPLACE INTO _sync_kept (replica, seq, schema) VALUES (?, ?, ?)",
                           [dot.replica.storedValue, .integer(Int64(dot.seq)), .text(schemaVersionHash)])
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

}

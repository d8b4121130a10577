import Codecs
import Foundation
import LocalStoreCore

/// `_sync_format`: one row, the layout version of the sync tables in this file.
///
/// Its own layout never changes, so any release can read the version before touching the other
/// tables. Stores written before the version was recorded have no row: they are version 0, and
/// open as the first step of ``migrate(on:)`` finds them.
enum SyncFormatTable {
    /// The layout this release reads and writes.
    static let currentVersion: Int64 = 11

    /// Turns layout `version` into `version + 1`, inside the caller's transaction.
    private static func step(from version: Int64, on connection: SQLiteConnection) throws {
        switch version {
        case 0:
            // The layout of stores written before the version was recorded (or a new file): the
            // tables may be missing, and older stores keep their conflict journal one row per entry.
            for statement in SyncTables.statements { try connection.execute(statement) }
            try ConflictJournal.migrateLegacyTable(on: connection)
        case 1:
            // Further delete-caused removals of an edge addition get their own table.
            for statement in EdgeTable.removalStatements { try connection.execute(statement) }
        case 2:
            // Change sets carry their author's authenticator, and the replica gets the secret key
            // that makes them. Its own change sets without one are authenticated in this step, so
            // that any replica can relay them to a server restored from a backup.
            try ChangeSetTable.addAuthenticatorColumn(on: connection)
            if let (replica, key) = try SyncStateTable.addMissingReplicaKey(on: connection) {
                try ChangeSetTable.authenticateUnauthenticated(of: replica, key: key, on: connection)
            }
        case 3:
            // Uniqueness merges keep objects' creation values and the duplicates they removed.
            // Objects created before are not recorded: they collide with nothing that arrives later.
            for statement in UniqueMergeTable.createStatements { try connection.execute(statement) }
        case 4:
            // Change sets applied in part (they name what the store's schema does not know) are
            // recorded, so that a store opened with a newer schema merges them again.
            for statement in KeptChangeSetTable.createStatements { try connection.execute(statement) }
        case 5:
            // An object's attribute stamps are one row, not one row per attribute.
            try FieldStampTable.migrateLegacyTable(on: connection)
        case 6:
            // Identifiers are stored as their 16 bytes: ``migrate(on:)`` rewrote them before the
            // first step, so that every step reads and writes the layout of this release.
            break
        case 7:
            // A server's forgotten identifiers name the compaction that forgot them, so that they
            // can be released once no replica holds their objects.
            try ServerForgottenObjectTable.tagLegacyIdentifiers(on: connection)
        case 8:
            // The tables with a row per live object name replicas by a small number of the file's
            // own, not by their 16 bytes. (A file that step 0 created has that layout already.)
            for statement in ReplicaNumberTable.createStatements { try connection.execute(statement) }
            try ObjectMetadataTable.numberLegacyReplicas(on: connection)
            try EdgeTable.numberLegacyReplicas(on: connection)
        case 9:
            // Conflict journal rows are written in their second format (names and replicas once
            // per row); rows of the first stay as they are and are still read. The version tells
            // an older release, which reads only the first, that the file is not for it.
            break
        case 10:
            // Edges and their further removals are indexed by target first, and removed additions
            // on their own, so that merges and compactions look up the edges of a few objects
            // without reading every edge of an entity (or all of them).
            try connection.execute("DROP INDEX IF EXISTS _sync_edge_target")
            for statement in EdgeTable.indexStatements { try connection.execute(statement) }
        default:
            preconditionFailure("no migration step from sync format version \(version)")
        }
    }

    /// The columns that hold object or replica identifiers, by table, in every layout a store may
    /// have had: the tables of this release, and those earlier steps turn into them.
    static let identifierColumns: [(table: String, columns: [String])] = [
        ("_sync_vector", ["replica"]),
        ("_sync_changeset", ["replica"]),
        ("_sync_compacted", ["replica"]),
        ("_sync_object", ["id", "replica"]),
        ("_sync_field_stamps", ["id"]),
        ("_sync_field", ["id", "replica"]),
        ("_sync_edge", ["id", "target", "replica", "removed_replica", "removed_root"]),
        ("_sync_edge_removal", ["id", "target", "replica", "removed_replica", "removed_root"]),
        ("_sync_position", ["id", "member", "replica"]),
        ("_sync_delete", ["id", "replica", "root"]),
        ("_sync_void", ["replica", "root"]),
        ("_sync_conflict", ["cause_replica"]),
        ("_sync_journal", ["object", "cause_replica"]),
        ("_sync_unique_value", ["id"]),
        ("_sync_unique_merge", ["duplicate", "survivor"]),
        ("_sync_counter", ["id"]),
        ("_sync_kept", ["replica"]),
        ("_sync_kept_object", ["id"]),
        ("_server_log", ["replica"]),
        ("_server_log_compacted", ["replica"]),
        ("_server_replica", ["replica"]),
        ("_server_replica_key", ["replica"]),
    ]

    /// The first version that stores identifiers as bytes.
    private static let identifiersAsBytesVersion: Int64 = 7

    /// Rewrites every identifier held as text (by a release before format version 7) as its 16
    /// bytes, in the tables the file has. Bytes sort as the upper-case text did, so keys and
    /// indexes keep their order.
    private static func storeIdentifiersAsBytes(on connection: SQLiteConnection) throws {
        try connection.addUUIDBytesFunction(named: "_sync_uuid_bytes")
        for (table, columns) in identifierColumns {
            // A table the file does not have has no columns.
            let present = try Set(connection.rows("SELECT name FROM pragma_table_info(?)", [.text(table)]).compactMap(\.first?.textValue))
            let assignments = columns.filter(present.contains).map { "\($0) = _sync_uuid_bytes(\($0))" }
            guard !assignments.isEmpty else { continue }
            try connection.execute("UPDATE \(table) SET \(assignments.joined(separator: ", "))")
        }
    }

    /// The stored version: 0 when no version was recorded.
    static func storedVersion(on connection: SQLiteConnection) throws -> Int64 {
        guard try !connection.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sync_format'").isEmpty,
              case .integer(let version)? = try connection.rows("SELECT max(version) FROM _sync_format").first?.first
        else { return 0 }
        return version
    }

    /// Refuses a file written by a newer release.
    ///
    /// - Throws: ``SyncError`` `.unsupportedStoreFormat` naming the file and both versions.
    static func checkReadable(on connection: SQLiteConnection) throws {
        try checkReadable(try storedVersion(on: connection), on: connection)
    }

    private static func checkReadable(_ stored: Int64, on connection: SQLiteConnection) throws {
        guard stored <= currentVersion else {
            throw SyncError(.unsupportedStoreFormat,
                            "\(connection.path) has sync tables in format version \(stored), newer than this release reads (version \(currentVersion)): open it with a newer release")
        }
    }

    /// Brings the sync tables to ``currentVersion``, step by step, and records it. Runs inside
    /// the caller's transaction, so a failed step leaves the file as it was.
    static func migrate(on connection: SQLiteConnection) throws {
        let stored = try storedVersion(on: connection)
        try checkReadable(stored, on: connection)
        guard stored < currentVersion else { return }
        if stored < identifiersAsBytesVersion { try storeIdentifiersAsBytes(on: connection) }
        for version in stored..<currentVersion { try step(from: version, on: connection) }
        try connection.execute("CREATE TABLE IF NOT EXISTS _sync_format (version INTEGER NOT NULL)")
        try connection.execute("DELETE FROM _sync_format")
        try connection.run("INSERT INTO _sync_format (version) VALUES (?)", [.integer(currentVersion)])
    }
}

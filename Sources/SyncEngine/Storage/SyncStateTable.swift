import Codecs
import Foundation
import LocalStoreCore

/// `_sync_state`: key-value pairs of the replica — its ID, counters and the settings of tools
/// built on SyncKit (kept under `setting:<key>`).
enum SyncStateTable {
    /// The counters kept in the table.
    enum Counter: String {
        /// The seq of this replica's last local change set.
        case seq
        /// The latest HLC this replica issued or observed.
        case hlc
        /// The number the next conflict journal entry gets.
        case journalNext = "journal_next"
    }

    static let createStatements = [
        "CREATE TABLE IF NOT EXISTS _sync_state (key TEXT PRIMARY KEY NOT NULL, value NOT NULL)",
    ]

    /// Whether the file has the table, that is, was ever set up for sync.
    static func exists(on connection: SQLiteConnection) throws -> Bool {
        try !connection.rows("SELECT 1 FROM sqlite_master WHERE name = '_sync_state'").isEmpty
    }

    /// The replica's ID, `nil` before ``initialize(replica:on:)``.
    ///
    /// - Throws: ``SyncError`` `.notSyncable` when the stored ID is not a UUID.
    static func replicaID(on connection: SQLiteConnection) throws -> ReplicaID? {
        guard case .text(let text)? = try connection.rows("SELECT value FROM _sync_state WHERE key = 'replica'").first?.first else {
            return nil
        }
        guard let replica = UUID(storageText: text) else {
            throw SyncError(.notSyncable, "the store's replica ID '\(text)' is not a UUID")
        }
        return replica
    }

    /// Records the replica's ID and a new secret key, with seq and HLC at 0.
    static func initialize(replica: ReplicaID, on connection: SQLiteConnection) throws {
        try connection.run("INSERT INTO _sync_state (key, value) VALUES ('replica', ?), ('seq', 0), ('hlc', 0)", [.text(replica.storageText)])
        try storeNewReplicaKey(on: connection)
    }

    /// This replica's secret key, which authenticates the change sets it authors; `nil` in a
    /// file never set up for sync. Never logged, never sent except in the push's key header.
    static func replicaKey(on connection: SQLiteConnection) throws -> [UInt8]? {
        guard let value = try connection.rows("SELECT value FROM _sync_state WHERE key = 'replica_key'").first?.first else { return nil }
        guard case .blob(let key) = value, key.count == ReplicaCredentials.keyLength else {
            throw SyncError(.notSyncable, "\(connection.path): the stored replica key is damaged (\(value.storageClassName))")
        }
        return Array(key)
    }

    /// Removes the key from a copy of a store file handed to others (a server's snapshot):
    /// ``becomeNewReplica(_:on:)`` gives the adopting replica a key of its own.
    static func removeReplicaKey(on connection: SQLiteConnection) throws {
        try connection.execute("DELETE FROM _sync_state WHERE key = 'replica_key'")
    }

    /// Gives a replica set up before replicas had keys (sync format 2) its key, inside the
    /// format migration's transaction. Returns its ID and key; `nil` when the file has no replica yet.
    static func addMissingReplicaKey(on connection: SQLiteConnection) throws -> (replica: ReplicaID, key: [UInt8])? {
        guard let replica = try replicaID(on: connection) else { return nil }
        if let key = try replicaKey(on: connection) { return (replica, key) }
        return (replica, try storeNewReplicaKey(on: connection))
    }

    @discardableResult
    private static func storeNewReplicaKey(on connection: SQLiteConnection) throws -> [UInt8] {
        let key = SecureRandomBytes.make(count: ReplicaCredentials.keyLength)
        try connection.run("INSERT OR REPLACE INTO _sync_state (key, value) VALUES ('replica_key', ?)", [.blob(Data(key))])
        return key
    }

    static func value(of counter: Counter, on connection: SQLiteConnection) throws -> UInt64 {
        if case .integer(let value)? = try connection.rows("SELECT value FROM _sync_state WHERE key = ?", [.text(counter.rawValue)]).first?.first {
            return UInt64(bitPattern: value)
        }
        return 0
    }

    static func set(_ counter: Counter, to value: UInt64, on connection: SQLiteConnection) throws {
        try connection.run("INSERT OR REPLACE INTO _sync_state (key, value) VALUES (?, ?)", [.text(counter.rawValue), .integer(Int64(bitPattern: value))])
    }

    /// The schema the merged tables were last derived under (`nil` before it was recorded): a
    /// store opened with another schema may have to merge its history again.
    static func mergedSchema(on connection: SQLiteConnection) throws -> SchemaDocument? {
        guard case .text(let json)? = try connection.rows("SELECT value FROM _sync_state WHERE key = 'merged_schema'").first?.first else { return nil }
        // A record that cannot be read counts as none: the store then decides as for a store
        // that never recorded it.
        return try? SchemaDocument(jsonData: Data(json.utf8))
    }

    /// Records the schema the merged tables are derived under.
    static func setMergedSchema(_ schema: SchemaDocument, on connection: SQLiteConnection) throws {
        try connection.run("INSERT OR REPLACE INTO _sync_state (key, value) VALUES ('merged_schema', ?)",
                           [.text(String(decoding: try schema.jsonData(), as: UTF8.self))])
    }

    static func setting(_ key: String, on connection: SQLiteConnection) throws -> String? {
        try connection.rows("SELECT value FROM _sync_state WHERE key = ?", [.text("setting:" + key)]).first?.first?.textValue
    }

    /// Stores (or, with `nil`, removes) a setting.
    static func setSetting(_ key: String, to value: String?, on connection: SQLiteConnection) throws {
        if let value {
            try connection.run("INSERT OR REPLACE INTO _sync_state (key, value) VALUES (?, ?)", [.text("setting:" + key), .text(value)])
        } else {
            try connection.run("DELETE FROM _sync_state WHERE key = ?", [.text("setting:" + key)])
        }
    }

    /// Stores (or, with `nil`, removes) settings that belong together in one transaction, so no
    /// reader or crash sees some of them changed without the others.
    static func setSettings(_ settings: KeyValuePairs<String, String?>, on connection: SQLiteConnection) throws {
        try connection.inTransaction {
            for (key, value) in settings { try setSetting(key, to: value, on: connection) }
        }
    }

    /// Gives a copied file a replica identity of its own: a new ID and key, seq back at 0, no settings.
    static func becomeNewReplica(_ replica: ReplicaID, on connection: SQLiteConnection) throws {
        try connection.run("UPDATE _sync_state SET value = ? WHERE key = 'replica'", [.text(replica.storageText)])
        try storeNewReplicaKey(on: connection)
        try connection.run("UPDATE _sync_state SET value = 0 WHERE key = 'seq'")
        try connection.run("DELETE FROM _sync_state WHERE key LIKE 'setting:%'")
    }
}

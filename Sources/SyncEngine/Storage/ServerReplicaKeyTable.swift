import Codecs
import Foundation
import LocalStoreCore

/// `_server_replica_key`: the secret key of every replica that pushed to this dataset, in the
/// dataset's store file, registered by the replica's first push (trust on first use).
///
/// The server checks each pushed change set's authenticator with its author's key here, so a
/// holder of the dataset's token cannot push change sets under another replica's ID. Clients
/// have no use for the keys and must never see them: ``removeFromCopy(on:)`` drops the table
/// from snapshots. A backup of the store file keeps the keys, so a restored server still
/// verifies relays of the replicas it knew.
enum ServerReplicaKeyTable {
    static func install(on connection: SQLiteConnection) throws {
        try connection.execute("CREATE TABLE IF NOT EXISTS _server_replica_key (replica BLOB PRIMARY KEY NOT NULL, key BLOB NOT NULL) WITHOUT ROWID")
    }

    /// The key registered for `replica`, if it ever pushed.
    ///
    /// - Throws: ``SyncError`` `.notSyncable` when the stored key is damaged.
    static func key(of replica: ReplicaID, on connection: SQLiteConnection) throws -> [UInt8]? {
        guard let value = try connection.rows("SELECT key FROM _server_replica_key WHERE replica = ?", [replica.storedValue]).first?.first else {
            return nil
        }
        guard case .blob(let key) = value, key.count == ReplicaCredentials.keyLength else {
            throw SyncError(.notSyncable, "the registered key of replica \(replica.storageText) is damaged (\(value.storageClassName))")
        }
        return Array(key)
    }

    /// Every replica with a registered key, in identifier order as stored.
    static func replicas(on connection: SQLiteConnection) throws -> [ReplicaID] {
        try connection.rows("SELECT replica FROM _server_replica_key ORDER BY replica").compactMap { UUID(stored: $0[0]) }
    }

    /// Registers the key of a replica that has none registered, inside the push's transaction.
    static func register(_ credentials: ReplicaCredentials, on connection: SQLiteConnection) throws {
        try connection.run("INSERT INTO _server_replica_key (replica, key) VALUES (?, ?)",
                           [credentials.replica.storedValue, .blob(Data(credentials.key))])
    }

    /// Drops the keys from a copy of the store file made for a client.
    static func removeFromCopy(on connection: SQLiteConnection) throws {
        try connection.execute("DROP TABLE IF EXISTS _server_replica_key")
    }
}

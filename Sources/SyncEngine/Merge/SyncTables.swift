import Codecs
import Foundation
import LocalStoreCore

/// The tables sync keeps in the store file, next to the entity tables, so that change
/// capture and merges commit atomically with the data.
///
/// - `_sync_state`: this replica's ID, last seq and latest HLC (never reused, even after a crash).
/// - `_sync_vector`: the store's version vector.
/// - `_sync_changeset`: every change set applied here (local ones with their outbox status), its
///   vector as JSON and its operations as ``StoredOperations``' blob (JSON text in older rows).
/// - `_sync_object`: each object's creation stamp, and its column values while it is deleted
///   (so a delete voided by a deny rule can bring it back with its last values).
/// - `_sync_field`: the stamp of the last write to each column (absent: the creation stamp).
/// - `_sync_edge`: one row per edge addition (`link`), marked removed by `unlink`.
/// - `_sync_position`: ordered-relationship keys, one per member.
/// - `_sync_delete`, `_sync_void`: deletes (explicit and by cascade) and voided delete roots.
/// - `_sync_conflict`: the conflict journal (see ``ConflictJournal``).
enum SyncTables {
    static let statements = [
        "CREATE TABLE IF NOT EXISTS _sync_state (key TEXT PRIMARY KEY NOT NULL, value NOT NULL)",
        "CREATE TABLE IF NOT EXISTS _sync_vector (replica TEXT PRIMARY KEY NOT NULL, seq INTEGER NOT NULL) WITHOUT ROWID",
        """
        CREATE TABLE IF NOT EXISTS _sync_changeset (replica TEXT NOT NULL, seq INTEGER NOT NULL, hlc INTEGER NOT NULL,
            vector TEXT NOT NULL, operations TEXT NOT NULL, status TEXT NOT NULL, PRIMARY KEY (replica, seq)) WITHOUT ROWID
        """,
        "CREATE INDEX IF NOT EXISTS _sync_changeset_status ON _sync_changeset (status, hlc)",
        """
        CREATE TABLE IF NOT EXISTS _sync_object (entity TEXT NOT NULL, id TEXT NOT NULL, hlc INTEGER NOT NULL,
            replica TEXT NOT NULL, seq INTEGER NOT NULL, tombstone TEXT, PRIMARY KEY (entity, id)) WITHOUT ROWID
        """,
        """
        CREATE TABLE IF NOT EXISTS _sync_field (entity TEXT NOT NULL, id TEXT NOT NULL, field TEXT NOT NULL,
            hlc INTEGER NOT NULL, replica TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (entity, id, field)) WITHOUT ROWID
        """,
        """
        CREATE TABLE IF NOT EXISTS _sync_edge (entity TEXT NOT NULL, id TEXT NOT NULL, relationship TEXT NOT NULL,
            target TEXT NOT NULL, replica TEXT NOT NULL, seq INTEGER NOT NULL, hlc INTEGER NOT NULL,
            removed_replica TEXT, removed_seq INTEGER, removed_root TEXT,
            PRIMARY KEY (entity, id, relationship, target, replica, seq)) WITHOUT ROWID
        """,
        "CREATE INDEX IF NOT EXISTS _sync_edge_target ON _sync_edge (entity, relationship, target)",
        """
        CREATE TABLE IF NOT EXISTS _sync_position (entity TEXT NOT NULL, id TEXT NOT NULL, relationship TEXT NOT NULL,
            member TEXT NOT NULL, key TEXT NOT NULL, hlc INTEGER NOT NULL, replica TEXT NOT NULL, seq INTEGER NOT NULL,
            PRIMARY KEY (entity, id, relationship, member)) WITHOUT ROWID
        """,
        """
        CREATE TABLE IF NOT EXISTS _sync_delete (entity TEXT NOT NULL, id TEXT NOT NULL, replica TEXT NOT NULL,
            seq INTEGER NOT NULL, root TEXT NOT NULL, implicit INTEGER NOT NULL,
            PRIMARY KEY (entity, id, replica, seq, root)) WITHOUT ROWID
        """,
        "CREATE INDEX IF NOT EXISTS _sync_delete_root ON _sync_delete (replica, seq, root)",
        "CREATE TABLE IF NOT EXISTS _sync_void (replica TEXT NOT NULL, seq INTEGER NOT NULL, root TEXT NOT NULL, PRIMARY KEY (replica, seq, root)) WITHOUT ROWID",
    ] + ConflictJournal.statements

    /// Creates the tables if needed and returns this replica's ID, choosing a random one the first time.
    static func install(on connection: SQLiteConnection, newReplicaID: ReplicaID) throws -> ReplicaID {
        try connection.inTransaction {
            for statement in statements { try connection.execute(statement) }
            try ConflictJournal.migrateLegacyTable(on: connection)
            if case .text(let text)? = try connection.rows("SELECT value FROM _sync_state WHERE key = 'replica'").first?.first {
                guard let replica = UUID(storageText: text) else {
                    throw SyncError(.notSyncable, "the store's replica ID '\(text)' is not a UUID")
                }
                return replica
            }
            let replica = newReplicaID
            try connection.run("INSERT INTO _sync_state (key, value) VALUES ('replica', ?), ('seq', 0), ('hlc', 0)", [.text(replica.storageText)])
            return replica
        }
    }

    static func integerState(_ key: String, on connection: SQLiteConnection) throws -> UInt64 {
        if case .integer(let value)? = try connection.rows("SELECT value FROM _sync_state WHERE key = ?", [.text(key)]).first?.first {
            return UInt64(bitPattern: value)
        }
        return 0
    }

    static func setIntegerState(_ key: String, _ value: UInt64, on connection: SQLiteConnection) throws {
        try connection.run("INSERT OR REPLACE INTO _sync_state (key, value) VALUES (?, ?)", [.text(key), .integer(Int64(bitPattern: value))])
    }

    static func vector(on connection: SQLiteConnection) throws -> VersionVector {
        var vector = VersionVector()
        for row in try connection.rows("SELECT replica, seq FROM _sync_vector") {
            if case .text(let text) = row[0], let replica = UUID(storageText: text), case .integer(let seq) = row[1] {
                guard let seq = UInt64(exactly: seq) else {
                    throw SyncError(.notSyncable, "the version vector (table _sync_vector) holds the negative seq \(seq) for replica \(text)")
                }
                vector[replica] = seq
            }
        }
        return vector
    }

    static func advanceVector(to dot: Dot, on connection: SQLiteConnection) throws {
        try connection.run("INSERT OR REPLACE INTO _sync_vector (replica, seq) VALUES (?, ?)", [.text(dot.replica.storageText), .integer(Int64(dot.seq))])
    }

    // MARK: Change sets

    /// Numbers, stamps and stores a new local change set (status pending), advancing the
    /// replica's seq and HLC. Runs inside the caller's transaction, so a seq is never reused.
    static func commitLocalChangeSet(_ operations: [Operation], replica: ReplicaID, wallClock: UInt64, on connection: SQLiteConnection) throws -> ChangeSet {
        let changeSet = try numberLocalChangeSet(operations, replica: replica, wallClock: wallClock, on: connection)
        try storeLocalChangeSet(changeSet, on: connection)
        return changeSet
    }

    /// Numbers and stamps a new local change set, advancing the replica's seq and HLC, without
    /// storing it: the caller must ``storeLocalChangeSet(_:on:)`` it in the same transaction.
    static func numberLocalChangeSet(_ operations: [Operation], replica: ReplicaID, wallClock: UInt64, on connection: SQLiteConnection) throws -> ChangeSet {
        // Read seq and HLC inside the transaction: another connection may have committed since.
        let seq = try integerState("seq", on: connection) + 1
        var clock = HybridLogicalClock(latest: HLC(rawValue: try integerState("hlc", on: connection)))
        let hlc = clock.tick(wallClockMilliseconds: wallClock)
        var vector = try self.vector(on: connection)
        vector[replica] = seq
        try setIntegerState("seq", seq, on: connection)
        try setIntegerState("hlc", hlc.rawValue, on: connection)
        return ChangeSet(dot: Dot(replica: replica, seq: seq), hlc: hlc, vector: vector, operations: operations)
    }

    /// Stores a change set numbered by ``numberLocalChangeSet(_:replica:wallClock:on:)`` in the outbox (status pending).
    static func storeLocalChangeSet(_ changeSet: ChangeSet, on connection: SQLiteConnection) throws {
        try store(changeSet, status: OutboxStatus.pending.rawValue, on: connection)
    }

    /// Inserts a change set row. The vector column holds the wire format's JSON (full vector,
    /// not a delta), written with escaped slashes as `JSONEncoder` writes it; the operations
    /// column holds ``StoredOperations``' blob (``decodeChangeSet(_:)`` also reads rows holding
    /// the operations as JSON text).
    static func store(_ changeSet: ChangeSet, status: String, on connection: SQLiteConnection) throws {
        var vector = JSONWriter(reservingCapacity: 16 + 48 * changeSet.vector.entries.count, escapingSlashes: true)
        vector.writeReplicaMap(changeSet.vector.entries)
        let operations = try StoredOperations.encode(changeSet.operations)
        let statement = try connection.cachedStatement(
            "INSERT INTO _sync_changeset (replica, seq, hlc, vector, status, operations) VALUES (?, ?, ?, ?, ?, ?)")
        try statement.bind([.text(changeSet.dot.replica.storageText), .integer(Int64(changeSet.dot.seq)),
                            .integer(Int64(bitPattern: changeSet.hlc.rawValue)), .text(vector.string), .text(status)])
        // The blob can be tens of megabytes: bound from the writer's buffer.
        try operations.withBytes { try statement.bindBlob($0, at: 6) }
        while try statement.step() {}
    }

    /// A change set from the columns `replica, seq, hlc, vector, operations` of its row.
    ///
    /// - Throws: ``SyncError`` `.notSyncable` naming the change set and what is damaged where.
    static func decodeChangeSet(_ row: [SQLValue]) throws -> ChangeSet {
        guard case .text(let replicaText) = row[0], let replica = UUID(storageText: replicaText),
              case .integer(let seq) = row[1], seq > 0, case .integer(let hlc) = row[2], case .text(let vectorJSON) = row[3] else {
            throw SyncError(.notSyncable, "a stored change set row is damaged")
        }
        let vector: VersionVector, operations: [Operation]
        do {
            vector = VersionVector(try JSONReader.read(vectorJSON) { reader in try JSONReadError.at(.key("vector")) { try reader.readReplicaMap() } })
            switch row[4] {
            case .blob(let blob):
                operations = try blob.withUnsafeBytes { try StoredOperations.decode($0) }
            case .text(let json):
                // Stored by a version before the blob form.
                operations = try JSONReader.read(json) { reader in try JSONReadError.at(.key("operations")) { try reader.readOperations() } }
            default:
                throw SyncError(.notSyncable, "the stored change set \(replicaText):\(seq) has no operations (\(row[4].storageClassName))")
            }
        } catch let error as JSONReadError {
            throw SyncError(.notSyncable, "the stored change set \(replicaText):\(seq) is damaged: \(error)")
        } catch let error as ByteReadError {
            throw SyncError(.notSyncable, "the stored change set \(replicaText):\(seq) is damaged: operations blob, \(error)")
        }
        return ChangeSet(dot: Dot(replica: replica, seq: UInt64(seq)), hlc: HLC(rawValue: UInt64(bitPattern: hlc)), vector: vector, operations: operations)
    }

    static func vectorOfChangeSet(_ dot: Dot, on connection: SQLiteConnection) throws -> VersionVector? {
        guard case .text(let json)? = try connection.rows(
            "SELECT vector FROM _sync_changeset WHERE replica = ? AND seq = ?", [.text(dot.replica.storageText), .integer(Int64(dot.seq))]).first?.first
        else { return nil }
        do {
            return VersionVector(try JSONReader.read(json) { try $0.readReplicaMap() })
        } catch let error as JSONReadError {
            throw SyncError(.notSyncable, "the stored vector of change set \(dot) is damaged: \(error)")
        }
    }
}

import Codecs
import Foundation
import LocalStoreCore

/// `_sync_changeset`: every change set applied here, local ones with their place in the outbox.
///
/// The vector column holds the wire format's JSON (full vector, not a delta), written with
/// escaped slashes as `JSONEncoder` wrote it; the operations column holds ``StoredOperations``'
/// blob (earlier versions stored JSON text there, which ``decode(_:)`` still reads); the status
/// column holds an ``OutboxStatus``' raw value; the authenticator column (added in sync format
/// 3, `NULL` in rows recorded before) the change set's ``ChangeSetAuthenticator`` bytes.
enum ChangeSetTable {
    static let createStatements = [
        """
        CREATE TABLE IF NOT EXISTS _sync_changeset (replica BLOB NOT NULL, seq INTEGER NOT NULL, hlc INTEGER NOT NULL,
            vector TEXT NOT NULL, operations TEXT NOT NULL, status TEXT NOT NULL, PRIMARY KEY (replica, seq)) WITHOUT ROWID
        """,
        "CREATE INDEX IF NOT EXISTS _sync_changeset_status ON _sync_changeset (status, hlc)",
    ]

    /// The columns ``decode(_:)`` reads, in its order.
    private static let changeSetColumns = "replica, seq, hlc, vector, operations, authenticator"

    /// Adds the authenticator column to a table created before sync format 3, unless it has it
    /// (the create statement keeps the older layout, so that every store reaches the same one
    /// through this step).
    static func addAuthenticatorColumn(on connection: SQLiteConnection) throws {
        guard try connection.rows("SELECT 1 FROM pragma_table_info('_sync_changeset') WHERE name = 'authenticator'").isEmpty else { return }
        try connection.execute("ALTER TABLE _sync_changeset ADD COLUMN authenticator BLOB")
    }

    // MARK: Writing

    /// Numbers, stamps and stores a new local change set (status pending), advancing the
    /// replica's seq and HLC. Runs inside the caller's transaction, so a seq is never reused.
    static func commitLocal(_ operations: [Operation], wallClock: UInt64, on connection: SQLiteConnection) throws -> ChangeSet {
        var changeSet = try numberLocal(operations, wallClock: wallClock, on: connection)
        changeSet.authenticator = try store(changeSet, status: .pending, on: connection)
        return changeSet
    }

    /// Numbers and stamps a new local change set, advancing the replica's seq and HLC, without
    /// storing it: the caller must ``store(_:status:on:)`` it (status pending) in the same transaction.
    static func numberLocal(_ operations: [Operation], wallClock: UInt64, on connection: SQLiteConnection) throws -> ChangeSet {
        // Read the replica's identity, seq and HLC inside the transaction: another connection may
        // have committed since, even a new identity (a re-bootstrap replaces the store's contents).
        guard let replica = try SyncStateTable.replicaID(on: connection) else {
            throw SyncError(.notSyncable, "\(connection.path) has no replica ID")
        }
        let seq = try SyncStateTable.value(of: .seq, on: connection) + 1
        var clock = HybridLogicalClock(latest: HLC(rawValue: try SyncStateTable.value(of: .hlc, on: connection)))
        let hlc = clock.tick(wallClockMilliseconds: wallClock)
        var vector = try VersionVectorTable.vector(on: connection)
        vector[replica] = seq
        try SyncStateTable.set(.seq, to: seq, on: connection)
        try SyncStateTable.set(.hlc, to: hlc.rawValue, on: connection)
        return ChangeSet(dot: Dot(replica: replica, seq: seq), hlc: hlc, vector: vector, operations: operations)
    }

    /// Inserts a change set row and returns the authenticator stored with it: a local change set
    /// (status pending) is authenticated here with the replica's key, over the blob just encoded;
    /// a remote one keeps the authenticator it arrived with.
    @discardableResult
    static func store(_ changeSet: ChangeSet, status: OutboxStatus, on connection: SQLiteConnection) throws -> [UInt8]? {
        try store(changeSet, operations: StoredOperations.encode(changeSet.operations), status: status, on: connection)
    }

    /// ``store(_:status:on:)`` with the operations already encoded (`changeSet`'s own are ignored):
    /// a change set merged in slices is never whole in memory.
    @discardableResult
    static func store(_ changeSet: ChangeSet, operations: borrowing ByteWriter, status: OutboxStatus, on connection: SQLiteConnection) throws -> [UInt8]? {
        var vector = JSONWriter(reservingCapacity: 16 + 48 * changeSet.vector.entries.count, escapingSlashes: true)
        vector.writeReplicaMap(changeSet.vector.entries)
        var authenticator = changeSet.authenticator
        if status == .pending {
            guard let key = try SyncStateTable.replicaKey(on: connection) else {
                throw SyncError(.notSyncable, "\(connection.path) has no replica key to authenticate change set \(changeSet.dot) with")
            }
            authenticator = operations.withBytes { ChangeSetAuthenticator.authenticator(of: changeSet, operations: $0, key: key) }
        }
        let statement = try connection.cachedStatement(
            "INSERT INTO _sync_changeset (replica, seq, hlc, vector, status, authenticator, operations) VALUES (?, ?, ?, ?, ?, ?, ?)")
        try statement.bind([changeSet.dot.replica.storedValue, .integer(Int64(changeSet.dot.seq)),
                            .integer(Int64(bitPattern: changeSet.hlc.rawValue)), .text(vector.string), .text(status.rawValue),
                            authenticator.map { .blob(Data($0)) } ?? .null])
        // The blob can be tens of megabytes: bound from the writer's buffer.
        try operations.withBytes { try statement.bindBlob($0, at: 7) }
        while try statement.step() {}
        return authenticator
    }

    /// Replaces the stored operations of change set `dot` with `operations`: a change set merged in
    /// slices is stored before its merge (which may read its row) and gets its operations after.
    static func setOperations(of dot: Dot, to operations: borrowing ByteWriter, on connection: SQLiteConnection) throws {
        let statement = try connection.cachedStatement("UPDATE _sync_changeset SET operations = ? WHERE replica = ? AND seq = ?")
        try statement.bind([.null] + dot.values)
        try operations.withBytes { try statement.bindBlob($0, at: 1) }
        while try statement.step() {}
    }

    /// Authenticates every change set `replica` authored that has no authenticator yet (those
    /// recorded before the replica had a key), with `key`.
    static func authenticateUnauthenticated(of replica: ReplicaID, key: [UInt8], on connection: SQLiteConnection) throws {
        let rows = try connection.rows("SELECT \(changeSetColumns) FROM _sync_changeset WHERE replica = ? AND authenticator IS NULL",
                                       [replica.storedValue])
        for row in rows {
            let changeSet = try decode(row)
            let authenticator = try ChangeSetAuthenticator.authenticator(of: changeSet, key: key)
            try connection.run("UPDATE _sync_changeset SET authenticator = ? WHERE replica = ? AND seq = ?",
                               [.blob(Data(authenticator))] + changeSet.dot.values)
        }
    }

    // MARK: Comparing

    /// Whether two change sets with the same dot have exactly the same contents: HLC, vector
    /// and the bytes of their stored operations (so `0.0` and `-0.0`, which compare equal as
    /// numbers, are different contents).
    static func sameContents(_ first: ChangeSet, _ second: ChangeSet) throws -> Bool {
        guard first.hlc == second.hlc, first.vector == second.vector else { return false }
        let firstOperations = try StoredOperations.encode(first.operations)
        let secondOperations = try StoredOperations.encode(second.operations)
        return firstOperations.withBytes { firstBytes in
            secondOperations.withBytes { secondBytes in firstBytes.elementsEqual(secondBytes) }
        }
    }

    /// Whether the stored change set `dot` has exactly the contents of `changeSet`; `nil` when
    /// it is not stored. Compares the stored columns without decoding the operations blob.
    ///
    /// - Throws: ``SyncError`` `.notSyncable` when the stored row is damaged.
    static func storedContents(of dot: Dot, match changeSet: ChangeSet, on connection: SQLiteConnection) throws -> Bool? {
        try storedContents(of: dot, match: changeSet, operations: { try StoredOperations.encode(changeSet.operations) }, on: connection)
    }

    /// ``storedContents(of:match:on:)`` comparing the stored operations with `operations`, encoded
    /// only when a stored row has the blob form (`changeSet`'s own operations are read otherwise).
    static func storedContents(of dot: Dot, match changeSet: ChangeSet, operations: () throws -> ByteWriter,
                               on connection: SQLiteConnection) throws -> Bool? {
        guard let row = try connection.rows("SELECT \(changeSetColumns) FROM _sync_changeset WHERE replica = ? AND seq = ?", dot.values).first else {
            return nil
        }
        guard case .blob(let storedOperations) = row[4] else {
            // Stored as JSON text by a version before the blob form: compare decoded.
            return try sameContents(decode(row), changeSet)
        }
        guard case .integer(let hlc) = row[2], case .text(let vectorJSON) = row[3] else {
            throw SyncError(.notSyncable, "the stored change set \(dot) is damaged")
        }
        guard UInt64(bitPattern: hlc) == changeSet.hlc.rawValue else { return false }
        let storedVector: VersionVector
        do {
            storedVector = VersionVector(try JSONReader.read(vectorJSON) { try $0.readReplicaMap() })
        } catch let error as JSONReadError {
            throw SyncError(.notSyncable, "the stored vector of change set \(dot) is damaged: \(error)")
        }
        guard storedVector == changeSet.vector else { return false }
        return try operations().withBytes { $0.elementsEqual(storedOperations) }
    }

    // MARK: Reading

    /// A change set from the columns `replica, seq, hlc, vector, operations, authenticator` of its row.
    ///
    /// - Throws: ``SyncError`` `.notSyncable` naming the change set and what is damaged where.
    static func decode(_ row: [SQLValue]) throws -> ChangeSet {
        guard let replica = UUID(stored: row[0]),
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
                throw SyncError(.notSyncable, "the stored change set \(replica.storageText):\(seq) has no operations (\(row[4].storageClassName))")
            }
        } catch let error as JSONReadError {
            throw SyncError(.notSyncable, "the stored change set \(replica.storageText):\(seq) is damaged: \(error)")
        } catch let error as ByteReadError {
            throw SyncError(.notSyncable, "the stored change set \(replica.storageText):\(seq) is damaged: operations blob, \(error)")
        }
        let authenticator: [UInt8]?
        switch row[5] {
        case .null: authenticator = nil
        case .blob(let bytes): authenticator = Array(bytes)
        default: throw SyncError(.notSyncable, "the stored change set \(replica.storageText):\(seq) has a damaged authenticator (\(row[5].storageClassName))")
        }
        return ChangeSet(dot: Dot(replica: replica, seq: UInt64(seq)), hlc: HLC(rawValue: UInt64(bitPattern: hlc)), vector: vector,
                         operations: operations, authenticator: authenticator)
    }

    /// How many change sets of each replica the table holds.
    static func countsByReplica(on connection: SQLiteConnection) throws -> [ReplicaID: UInt64] {
        var counts: [ReplicaID: UInt64] = [:]
        try connection.forEachRow("SELECT replica, count(*) FROM _sync_changeset GROUP BY replica") { row in
            if let replica = row.identifier(at: 0) { counts[replica] = UInt64(row.integer(at: 1)) }
        }
        return counts
    }

    /// The stored change set `dot`, if any.
    static func changeSet(_ dot: Dot, on connection: SQLiteConnection) throws -> ChangeSet? {
        try connection.rows("SELECT \(changeSetColumns) FROM _sync_changeset WHERE replica = ? AND seq = ?", dot.values).first.map(decode)
    }

    /// The change sets a peer with `vector` lacks, by `(HLC, replica ID)`, at most `limit`.
    static func changeSets(missingFrom vector: VersionVector, limit: Int?, on connection: SQLiteConnection) throws -> [ChangeSet] {
        var result: [ChangeSet] = []
        // Only the rows the peer lacks are read whole: the others can hold megabytes of operations.
        try connection.forEachRow("SELECT \(changeSetColumns) FROM _sync_changeset ORDER BY hlc, replica") { row in
            guard limit.map({ result.count < $0 }) ?? true, let replica = row.identifier(at: 0),
                  UInt64(row.integer(at: 1)) > vector[replica] else { return }
            result.append(try decode(row.row()))
        }
        return result
    }

    /// Calls `body` with every stored change set, in an order that respects causality (by
    /// `(HLC, replica ID)`), reading one at a time.
    static func forEachChangeSet(on connection: SQLiteConnection, _ body: (ChangeSet) throws -> Void) throws {
        try connection.forEachRow("SELECT \(changeSetColumns) FROM _sync_changeset ORDER BY hlc, replica") { row in
            try body(try decode(row.row()))
        }
    }

    /// The change sets of `replica` with `status`, by seq.
    static func changeSets(of replica: ReplicaID, status: OutboxStatus, on connection: SQLiteConnection) throws -> [ChangeSet] {
        try connection.rows("SELECT \(changeSetColumns) FROM _sync_changeset WHERE status = ? AND replica = ? ORDER BY seq",
                            [.text(status.rawValue), replica.storedValue]).map(decode)
    }

    /// The `limit` newest change sets (all when `nil`) with their status, oldest first by `(HLC, replica ID)`.
    static func log(limit: Int?, on connection: SQLiteConnection) throws -> [(changeSet: ChangeSet, status: OutboxStatus)] {
        var sql = "SELECT \(changeSetColumns), status FROM _sync_changeset ORDER BY hlc DESC, replica DESC"
        var arguments: [SQLValue] = []
        if let limit {
            sql += " LIMIT ?"
            arguments.append(.integer(Int64(limit)))
        }
        return try connection.rows(sql, arguments).reversed().map { row in
            guard case .text(let status) = row[6], let outboxStatus = OutboxStatus(rawValue: status) else {
                throw SyncError(.notSyncable, "a stored change set has an unknown status")
            }
            return (try decode(row), outboxStatus)
        }
    }

    /// The vector of the stored change set `dot`, or the one kept when compaction dropped it;
    /// `nil` if neither is stored.
    static func vector(of dot: Dot, on connection: SQLiteConnection) throws -> VersionVector? {
        guard case .text(let json)? = try connection.rows(
            "SELECT vector FROM _sync_changeset WHERE replica = ? AND seq = ?", dot.values).first?.first
        else { return try CompactionTable.kept(dot, on: connection)?.vector }
        do {
            return VersionVector(try JSONReader.read(json) { try $0.readReplicaMap() })
        } catch let error as JSONReadError {
            throw SyncError(.notSyncable, "the stored vector of change set \(dot) is damaged: \(error)")
        }
    }

    /// The HLC of the stored change set `dot`, or the one kept when compaction dropped it; `nil`
    /// if neither is stored.
    static func hlc(of dot: Dot, on connection: SQLiteConnection) throws -> HLC? {
        guard case .integer(let value)? = try connection.rows("SELECT hlc FROM _sync_changeset WHERE replica = ? AND seq = ?", dot.values).first?.first
        else { return try CompactionTable.kept(dot, on: connection)?.hlc }
        return HLC(rawValue: UInt64(bitPattern: value))
    }

    // MARK: Outbox

    /// The status of the stored change set `dot`, `nil` if it is not stored.
    ///
    /// - Throws: ``SyncError`` `.notSyncable` when the stored status is not an ``OutboxStatus``.
    static func status(of dot: Dot, on connection: SQLiteConnection) throws -> OutboxStatus? {
        guard let value = try connection.rows("SELECT status FROM _sync_changeset WHERE replica = ? AND seq = ?", dot.values).first?.first else {
            return nil
        }
        guard case .text(let text) = value, let status = OutboxStatus(rawValue: text) else {
            throw SyncError(.notSyncable, "the stored change set \(dot) has an unknown outbox status \(value)")
        }
        return status
    }

    /// Stores a status ``OutboxStatus/moving(to:changeSet:)`` allowed.
    static func setStatus(_ status: OutboxStatus, of dot: Dot, on connection: SQLiteConnection) throws {
        try connection.run("UPDATE _sync_changeset SET status = ? WHERE replica = ? AND seq = ?", [.text(status.rawValue)] + dot.values)
    }

    /// How many change sets of `replica` are pending or sent.
    static func unacknowledgedCount(of replica: ReplicaID, on connection: SQLiteConnection) throws -> Int {
        if case .integer(let count)? = try connection.rows(
            "SELECT count(*) FROM _sync_changeset WHERE replica = ? AND status IN (?, ?)",
            [replica.storedValue, .text(OutboxStatus.pending.rawValue), .text(OutboxStatus.sent.rawValue)]).first?.first {
            return Int(count)
        }
        return 0
    }

    /// The dots and vectors of `replica`'s pending and sent change sets (their operations are not read).
    static func unacknowledgedVectors(of replica: ReplicaID, on connection: SQLiteConnection) throws -> [(dot: Dot, vector: VersionVector)] {
        var result: [(dot: Dot, vector: VersionVector)] = []
        for row in try connection.rows("SELECT seq, vector FROM _sync_changeset WHERE replica = ? AND status IN (?, ?)",
                                       [replica.storedValue, .text(OutboxStatus.pending.rawValue), .text(OutboxStatus.sent.rawValue)]) {
            guard case .integer(let seq) = row[0], case .text(let json) = row[1] else { continue }
            let dot = Dot(replica: replica, seq: UInt64(seq))
            result.append((dot, try CompactionTable.vector(json, of: "the stored vector of change set \(dot)")))
        }
        return result
    }

    /// A selection of stored change sets, as `FROM … WHERE …` over `_sync_changeset AS c`.
    struct Selection {
        let sql: String
    }

    /// The change sets at or below the vector in `stableTable` (columns `replica, seq`) that the
    /// outbox is done with: another replica's, or this replica's once the server acknowledged
    /// them. Pending and sent ones are not (the outbox still has to push them, whatever other
    /// replicas hold), nor those applied in part (a newer schema merges them again).
    static func settled(below stableTable: String) -> Selection {
        Selection(sql: """
            FROM _sync_changeset AS c JOIN \(stableTable) AS s ON s.replica = c.replica AND c.seq <= s.seq
            WHERE c.status IN ('\(OutboxStatus.acknowledged.rawValue)', '\(OutboxStatus.remote.rawValue)')
            AND NOT EXISTS (\(KeptChangeSetTable.keptQuery(replica: "c.replica", seq: "c.seq")))
            """)
    }

    /// The change sets named in `dotsTable` (columns `replica, seq`).
    static func named(in dotsTable: String) -> Selection {
        Selection(sql: "FROM _sync_changeset AS c JOIN \(dotsTable) AS d ON d.replica = c.replica AND d.seq = c.seq WHERE 1 = 1")
    }

    /// Removes the change sets `selection` selects; returns how many and the bytes they took.
    static func remove(_ selection: Selection, on connection: SQLiteConnection) throws -> (count: Int, bytes: Int64) {
        let measured = try connection.rows("""
            SELECT count(*), ifnull(sum(length(c.operations) + length(c.vector) + ifnull(length(c.authenticator), 0) + length(c.replica) + 24), 0)
            \(selection.sql)
            """).first ?? []
        guard case .integer(let count)? = measured.first, case .integer(let bytes)? = measured.last, count > 0 else { return (0, 0) }
        try connection.execute("DELETE FROM _sync_changeset WHERE (replica, seq) IN (SELECT c.replica, c.seq \(selection.sql))")
        return (Int(count), bytes)
    }

    /// The vector of `replica`'s first stored change set after `seq`, or `nil` when none is stored.
    static func firstVector(of replica: ReplicaID, after seq: UInt64, on connection: SQLiteConnection) throws -> VersionVector? {
        guard case .integer(let first)? = try connection.rows(
            "SELECT seq FROM _sync_changeset WHERE replica = ? AND seq > ? ORDER BY seq LIMIT 1",
            [replica.storedValue, .integer(Int64(bitPattern: seq))]).first?.first
        else { return nil }
        return try vector(of: Dot(replica: replica, seq: UInt64(first)), on: connection)
    }

    /// The vector of `replica`'s oldest pending or sent change set, or `nil` when it has none.
    /// A replica's change sets see more the later they are, so this is the meet of all of theirs.
    static func oldestUnacknowledgedVector(of replica: ReplicaID, on connection: SQLiteConnection) throws -> VersionVector? {
        guard case .integer(let seq)? = try connection.rows(
            "SELECT min(seq) FROM _sync_changeset WHERE replica = ? AND status IN (?, ?)",
            [replica.storedValue, .text(OutboxStatus.pending.rawValue), .text(OutboxStatus.sent.rawValue)]).first?.first
        else { return nil }
        return try vector(of: Dot(replica: replica, seq: UInt64(seq)), on: connection)
    }

    /// Counts every stored change set as received from another replica (for a copied file
    /// that becomes a replica of its own: its outbox belonged to the original).
    static func markAllRemote(on connection: SQLiteConnection) throws {
        try connection.run("UPDATE _sync_changeset SET status = ?", [.text(OutboxStatus.remote.rawValue)])
    }
}

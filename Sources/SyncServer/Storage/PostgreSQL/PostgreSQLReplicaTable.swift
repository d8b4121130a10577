import Foundation
import PostgreSQLClient
import SyncEngine

/// `syncd_replica`: each dataset's replica registry in the shared database (see
/// ``ReplicaRecord``): the acknowledged vector as `replica:seq` pairs, the cursor it covers, the
/// last-seen time in milliseconds since 1970, the retirement, the unpushed bounds and the vector
/// the replica reported forgetting deleted objects below (`NULL` until it does), per dataset and replica.
extension PostgreSQLTables {
    static func installReplicaTable(on connection: PostgreSQLConnection) throws {
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS syncd_replica (
                dataset text NOT NULL, replica text NOT NULL, acknowledged text NOT NULL, acknowledged_cursor bigint NOT NULL,
                last_seen bigint NOT NULL, retired boolean NOT NULL DEFAULT false, PRIMARY KEY (dataset, replica))
            """)
        // ALTER TABLE locks the table exclusively even when it changes nothing: only a registry
        // written before replicas reported their unpushed bounds is altered, so that instances
        // starting beside serving ones do not wait on (or deadlock with) their pushes.
        if try !columnExists("unpushed", in: "syncd_replica", on: connection) {
            try connection.execute("ALTER TABLE syncd_replica ADD COLUMN IF NOT EXISTS unpushed text NOT NULL DEFAULT ''")
        }
        if try !columnExists("forgotten", in: "syncd_replica", on: connection) {
            try connection.execute("ALTER TABLE syncd_replica ADD COLUMN IF NOT EXISTS forgotten text")
        }
    }

    private static let replicaColumns = "replica, acknowledged, acknowledged_cursor, last_seen, retired, unpushed, forgotten"

    /// The record of `replica` in `dataset`, if the dataset ever heard from it.
    static func replicaRecord(of replica: ReplicaID, in dataset: String, on connection: PostgreSQLConnection) throws -> ReplicaRecord? {
        let sql = "SELECT \(replicaColumns) FROM syncd_replica WHERE dataset = $1 AND replica = $2"
        return try connection.execute(sql, [dataset, replica.storageText]).first.map { try replicaRecord($0, dataset: dataset) }
    }

    /// Every record of `dataset`, in replica order.
    static func replicaRecords(of dataset: String, on connection: PostgreSQLConnection) throws -> [ReplicaRecord] {
        let sql = "SELECT \(replicaColumns) FROM syncd_replica WHERE dataset = $1 ORDER BY replica"
        return try connection.execute(sql, [dataset]).map { try replicaRecord($0, dataset: dataset) }
    }

    private static func replicaRecord(_ row: [String?], dataset: String) throws -> ReplicaRecord {
        guard let text = row[0], let replica = UUID(storageText: text), let acknowledged = row[1].flatMap(ReplicaRegistry.vector(fromText:)),
              let cursor = row[2].flatMap({ Int64($0) }), let lastSeen = row[3].flatMap({ Int64($0) }), let retired = row[4],
              let unpushed = row[5].flatMap(UnpushedBounds.init(text:)) else {
            throw SyncError(.notSyncable, "dataset \(dataset): a syncd_replica row is damaged (\(row[0] ?? "NULL"))")
        }
        var forgotten: VersionVector?
        if let forgottenText = row[6] {
            guard let vector = ReplicaRegistry.vector(fromText: forgottenText) else {
                throw SyncError(.notSyncable, "dataset \(dataset): the forgotten vector of a syncd_replica row is damaged (\(text))")
            }
            forgotten = vector
        }
        return ReplicaRecord(replica: replica, acknowledged: acknowledged, acknowledgedCursor: cursor,
                             lastSeen: Date(timeIntervalSince1970: Double(lastSeen) / 1000), retired: retired == "t", unpushedBounds: unpushed,
                             forgottenBelow: forgotten)
    }

    /// Writes a contact's record; never clears a retirement another instance wrote meanwhile.
    static func saveReplicaRecord(_ record: ReplicaRecord, in dataset: String, on connection: PostgreSQLConnection) throws {
        try connection.execute("""
            INSERT INTO syncd_replica (dataset, replica, acknowledged, acknowledged_cursor, last_seen, unpushed, forgotten)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            ON CONFLICT (dataset, replica) DO UPDATE SET acknowledged = excluded.acknowledged,
                acknowledged_cursor = excluded.acknowledged_cursor, last_seen = excluded.last_seen, unpushed = excluded.unpushed,
                forgotten = excluded.forgotten
            """, [dataset, record.replica.storageText, ReplicaRegistry.text(of: record.acknowledged), String(record.acknowledgedCursor),
                  String(Int64((record.lastSeen.timeIntervalSince1970 * 1000).rounded())), record.unpushedBounds.text,
                  record.forgottenBelow.map(ReplicaRegistry.text(of:))])
    }

    /// Marks `replica` of `dataset` retired (recording it first if the dataset never heard from it).
    static func retireReplica(_ replica: ReplicaID, in dataset: String, at now: Date, on connection: PostgreSQLConnection) throws {
        try connection.execute("""
            INSERT INTO syncd_replica (dataset, replica, acknowledged, acknowledged_cursor, last_seen, retired) VALUES ($1, $2, '', 0, $3, true)
            ON CONFLICT (dataset, replica) DO UPDATE SET retired = true
            """, [dataset, replica.storageText, String(Int64((now.timeIntervalSince1970 * 1000).rounded()))])
    }

    /// The highest seq of every replica among `dataset`'s log entries after `cursor` through `end`.
    static func logVector(of dataset: String, after cursor: Int64, through end: Int64, on connection: PostgreSQLConnection) throws -> VersionVector {
        let sql = "SELECT replica, max(seq) FROM syncd_log WHERE dataset = $1 AND cursor > $2 AND cursor <= $3 GROUP BY replica"
        var vector = VersionVector()
        for row in try connection.execute(sql, [dataset, String(cursor), String(end)]) {
            guard let text = row[0], let replica = UUID(storageText: text), let seq = UInt64(row[1] ?? "") else {
                throw SyncError(.notSyncable, "dataset \(dataset): a syncd_log replica or seq is damaged (\(row))")
            }
            vector[replica] = seq
        }
        return vector
    }
}

/// The replica registry of a dataset in the shared database.
extension PostgreSQLDatasetEngine {
    /// Refuses a retired pusher and records what it pushed, inside the push's PostgreSQL transaction.
    func recordPush(by pusher: ReplicaID, of changeSets: [ChangeSet], on connection: PostgreSQLConnection) throws {
        let existing = try PostgreSQLTables.replicaRecord(of: pusher, in: dataset, on: connection)
        let updated = try ReplicaRegistry.contact(existing, replica: pusher, pushed: ReplicaRegistry.vector(of: changeSets),
                                                  policy: replicaPolicy) { _, _ in VersionVector() }
        guard let updated else { return }
        try PostgreSQLTables.saveReplicaRecord(updated, in: dataset, on: connection)
        stableVectorCache.invalidate()
    }

    /// Reads the replica's record and, only when the contact changed it, writes it in a
    /// transaction that locks the row, so instances recording the same replica do not lose a join.
    func recordPull(by replica: ReplicaID, after cursor: Int64, unpushed: UnpushedBounds, forgotten: VersionVector?) throws {
        try pool.withConnection { connection in
            func contact(_ existing: ReplicaRecord?) throws -> ReplicaRecord? {
                try ReplicaRegistry.contact(existing, replica: replica, pulledAfter: cursor, unpushed: unpushed, forgotten: forgotten,
                                            policy: replicaPolicy) { after, through in
                    try PostgreSQLTables.logVector(of: dataset, after: after, through: through, on: connection)
                }
            }
            guard try contact(try PostgreSQLTables.replicaRecord(of: replica, in: dataset, on: connection)) != nil else { return }
            try connection.inTransaction {
                let sql = "SELECT 1 FROM syncd_replica WHERE dataset = $1 AND replica = $2 FOR UPDATE"
                _ = try connection.execute(sql, [dataset, replica.storageText])
                if let updated = try contact(try PostgreSQLTables.replicaRecord(of: replica, in: dataset, on: connection)) {
                    try PostgreSQLTables.saveReplicaRecord(updated, in: dataset, on: connection)
                }
            }
            stableVectorCache.invalidate()
        }
    }

    func replicas() throws -> [ReplicaRecord] {
        try pool.withConnection { try PostgreSQLTables.replicaRecords(of: dataset, on: $0) }
    }

    func retire(_ replica: ReplicaID) throws {
        try pool.withConnection { try PostgreSQLTables.retireReplica(replica, in: dataset, at: replicaPolicy.now(), on: $0) }
        stableVectorCache.invalidate()
    }

    /// The meet of the active replicas' settled vectors, lowered below the change sets above it
    /// that do not cover it. The cache first takes what other instances logged, so that every
    /// change set the dataset holds is looked at.
    func stableVector() throws -> VersionVector {
        let now = replicaPolicy.now()
        return try stableVectorCache.vector(at: now) {
            let records = try replicas()
            try catchUpCache()
            return try currentCache.stableVector(of: records, at: now, horizon: replicaPolicy.horizon)
        }
    }
}

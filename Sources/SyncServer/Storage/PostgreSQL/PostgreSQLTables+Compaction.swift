import Codecs
import Foundation
import PostgreSQLClient
import SyncEngine

/// What log compaction keeps in PostgreSQL: `syncd_log_base`, one row per compacted dataset
/// with the compaction point and a copy of a cache's store file at it (the base a new instance
/// restores before it replays the tail), and `syncd_log` rows up to the point without their
/// change sets (`change_set` `NULL`), so that cursors, digests and dots stay while an active
/// replica may still pull from before them. The rows every active replica pulled past are
/// folded into the base row's floor (`floor_cursor`, `floor_digest`, `floor_vector`: a
/// ``LogFloor``), as the SQLite storage folds them into `_server_log_floor`.
extension PostgreSQLTables {
    /// Creates `syncd_log_base` with its floor columns and lets `syncd_log` rows lose their
    /// change sets. Runs inside ``install(on:)``'s transaction.
    static func installCompaction(on connection: PostgreSQLConnection) throws {
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS syncd_log_base (
                dataset text PRIMARY KEY, cursor bigint NOT NULL, digest bytea NOT NULL, store bytea NOT NULL,
                floor_cursor bigint, floor_digest bytea, floor_vector text)
            """)
        // A base table of an earlier release lacks the floor; ALTER TABLE locks it, so only then.
        if try !columnExists("floor_cursor", in: "syncd_log_base", on: connection) {
            try connection.execute("ALTER TABLE syncd_log_base ADD COLUMN floor_cursor bigint, ADD COLUMN floor_digest bytea, ADD COLUMN floor_vector text")
        }
        // ALTER TABLE locks the log exclusively even when it changes nothing: alter only a log
        // whose change sets are still required.
        let sql = "SELECT is_nullable FROM information_schema.columns WHERE table_name = 'syncd_log' AND column_name = 'change_set'"
        if try connection.execute(sql).scalar == "NO" {
            try connection.execute("ALTER TABLE syncd_log ALTER COLUMN change_set DROP NOT NULL")
        }
    }

    /// Whether `table` (in the search path) has a column called `column`.
    static func columnExists(_ column: String, in table: String, on connection: PostgreSQLConnection) throws -> Bool {
        try connection.execute("SELECT 1 FROM information_schema.columns WHERE table_name = $1 AND column_name = $2", [table, column]).first != nil
    }

    /// The compaction point of `dataset`'s log, `nil` when it was never compacted.
    static func compactionPoint(of dataset: String, on connection: PostgreSQLConnection) throws -> LogPosition? {
        let sql = "SELECT cursor, digest FROM syncd_log_base WHERE dataset = $1"
        guard let row = try connection.execute(sql, [dataset]).first else { return nil }
        guard let digest = LogDigest(bytes: try bytes(ofBytea: row[1], column: "digest", sql: sql)) else {
            throw SyncError(.notSyncable, "dataset \(dataset): the syncd_log_base digest is damaged")
        }
        return LogPosition(cursor: try integer(row[0], column: "cursor", sql: sql), digest: digest)
    }

    /// The floor of `dataset`'s compacted log, `nil` while every compacted entry has its row.
    static func floor(of dataset: String, on connection: PostgreSQLConnection) throws -> LogFloor? {
        let sql = "SELECT floor_cursor, floor_digest, floor_vector FROM syncd_log_base WHERE dataset = $1 AND floor_cursor IS NOT NULL"
        guard let row = try connection.execute(sql, [dataset]).first else { return nil }
        guard let digest = LogDigest(bytes: try bytes(ofBytea: row[1], column: "floor_digest", sql: sql)),
              let vector = ReplicaRegistry.vector(fromText: row[2] ?? "") else {
            throw SyncError(.notSyncable, "dataset \(dataset): the syncd_log_base floor is damaged")
        }
        return LogFloor(position: LogPosition(cursor: try integer(row[0], column: "floor_cursor", sql: sql), digest: digest), vector: vector)
    }

    /// Sets `dataset`'s floor (its base row must exist).
    static func setFloor(_ floor: LogFloor, of dataset: String, on connection: PostgreSQLConnection) throws {
        try connection.execute("UPDATE syncd_log_base SET floor_cursor = $2, floor_digest = $3, floor_vector = $4 WHERE dataset = $1",
                               [dataset, String(floor.position.cursor), bytea(floor.position.digest.bytes), ReplicaRegistry.text(of: floor.vector)])
    }

    /// Folds `dataset`'s log entries up to `cursor` (at most its compaction point) into its floor
    /// and deletes their rows, except those still holding a change set (each replica's latest,
    /// whose vector proves what the replica has); returns how many entries it folded.
    static func raiseFloor(of dataset: String, to cursor: Int64, on connection: PostgreSQLConnection) throws -> Int {
        var floor = try self.floor(of: dataset, on: connection) ?? LogFloor(position: LogPosition(cursor: 0, digest: .empty), vector: VersionVector())
        var folded: Int64 = 0
        if cursor > floor.position.cursor {
            guard let digest = try digest(of: dataset, at: cursor, on: connection) else {
                throw SyncError(.notSyncable, "dataset \(dataset): no log entry has cursor \(cursor), so the floor cannot rise to it")
            }
            floor.vector.merge(try logVector(of: dataset, after: floor.position.cursor, through: cursor, on: connection))
            folded = cursor - floor.position.cursor
            floor.position = LogPosition(cursor: cursor, digest: digest)
            try setFloor(floor, of: dataset, on: connection)
        }
        // Also the rows below a floor that stayed put whose change sets this compaction dropped
        // (a replica's latest until it wrote another).
        try connection.execute("DELETE FROM syncd_log WHERE dataset = $1 AND cursor <= $2 AND change_set IS NULL",
                               [dataset, String(floor.position.cursor)])
        return Int(folded)
    }

    /// The store file of `dataset`'s base, `nil` when its log was never compacted.
    static func baseStore(of dataset: String, on connection: PostgreSQLConnection) throws -> [UInt8]? {
        let sql = "SELECT store FROM syncd_log_base WHERE dataset = $1"
        guard let text = try connection.execute(sql, [dataset]).scalar else { return nil }
        return try bytes(ofBytea: text, column: "store", sql: sql)
    }

    /// Records `store` (a cache's store file at `point`) as `dataset`'s base and drops the change
    /// sets of the log entries up to `point`, except each replica's latest (whose vector proves
    /// what the replica has to a pull from before the point). Returns how many change sets, and
    /// how many bytes of them, were dropped.
    static func compact(_ dataset: String, through point: LogPosition, base store: [UInt8],
                        on connection: PostgreSQLConnection) throws -> (changeSets: Int, bytes: Int64) {
        try connection.execute("""
            INSERT INTO syncd_log_base (dataset, cursor, digest, store) VALUES ($1, $2, $3, $4)
            ON CONFLICT (dataset) DO UPDATE SET cursor = excluded.cursor, digest = excluded.digest, store = excluded.store
            """, [dataset, String(point.cursor), bytea(point.digest.bytes), bytea(store)])
        let dropped = """
            FROM syncd_log WHERE dataset = $1 AND cursor <= $2 AND change_set IS NOT NULL
                AND (replica, seq) NOT IN (SELECT replica, max(seq) FROM syncd_log WHERE dataset = $1 GROUP BY replica)
            """
        let countSQL = "SELECT count(*), coalesce(sum(octet_length(change_set)), 0) " + dropped
        guard let row = try connection.execute(countSQL, [dataset, String(point.cursor)]).first else { return (0, 0) }
        let result = (Int(try integer(row[0], column: "count", sql: countSQL)), try integer(row[1], column: "sum", sql: countSQL))
        try connection.execute("UPDATE syncd_log SET change_set = NULL WHERE (dataset, cursor) IN (SELECT dataset, cursor " + dropped + ")",
                               [dataset, String(point.cursor)])
        return result
    }

    /// The vector of `replica`'s latest change set in `dataset`'s log: everything the replica
    /// had applied when it made it; empty when it has none.
    static func latestVector(of replica: ReplicaID, in dataset: String, on connection: PostgreSQLConnection) throws -> VersionVector {
        let sql = "SELECT change_set FROM syncd_log WHERE dataset = $1 AND replica = $2 ORDER BY seq DESC LIMIT 1"
        guard let json = try connection.execute(sql, [dataset, replica.storageText]).scalar else { return VersionVector() }
        return try ChangeSetCoding.decode(Data(json.utf8)).changeSets.first?.vector ?? VersionVector()
    }

    /// The first entry after `cursor`, up to `point`, that `replica` did not author and `known`
    /// does not cover; `nil` when there is none.
    static func firstUnknown(in dataset: String, after cursor: Int64, through point: Int64, to replica: ReplicaID?,
                             known: VersionVector, on connection: PostgreSQLConnection) throws -> Dot? {
        let (start, unknownBelowFloor) = LogFloor.checkStart(try floor(of: dataset, on: connection), after: cursor, to: replica, known: known)
        if let unknownBelowFloor { return unknownBelowFloor }
        let sql = "SELECT replica, seq FROM syncd_log WHERE dataset = $1 AND cursor > $2 AND cursor <= $3 AND replica <> $4 ORDER BY cursor"
        for row in try connection.execute(sql, [dataset, String(start), String(point), replica?.storageText ?? ""]) {
            guard let text = row[0], let author = UUID(storageText: text), let seq = UInt64(row[1] ?? "") else {
                throw SyncError(.notSyncable, "dataset \(dataset): a syncd_log entry after cursor \(cursor) is damaged")
            }
            let dot = Dot(replica: author, seq: seq)
            if !known.covers(dot) { return dot }
        }
        return nil
    }
}

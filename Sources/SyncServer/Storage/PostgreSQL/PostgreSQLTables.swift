import Codecs
import Foundation
import LocalStoreCore
import PostgreSQLClient
import SyncEngine

/// The tables syncd keeps in a shared PostgreSQL database, for every dataset and every syncd
/// instance using it (see <doc:SharedStorage>):
///
/// - `syncd_dataset`: each dataset's current schema document and its hash.
/// - `syncd_schema_history`: every schema a dataset was registered with, oldest first.
/// - `syncd_log`: the change-set log: per dataset, each entry's cursor, the change set's dot,
///   the ``LogDigest`` up to it and the change set itself (its wire JSON, authenticator included).
/// - `syncd_replica_key`: each replica's registered key, per dataset.
/// - `syncd_replica`: each dataset's replica registry (acknowledged vectors, last seen, retired).
/// - `syncd_token`, `syncd_token_revision`: the bearer tokens' hashes, and a counter every
///   revocation moves so that other instances drop the tokens they trust.
/// - `syncd_upload`, `syncd_upload_part`, `syncd_download`, `syncd_download_part`: large change
///   sets in transit (see ``PostgreSQLTransferStaging``).
enum PostgreSQLTables {
    /// Creates the tables that do not exist yet. Several instances may start at once: the
    /// creation runs under a transaction-scoped advisory lock, so they do not race.
    static func install(on connection: PostgreSQLConnection) throws {
        try connection.inTransaction {
            try connection.execute("SELECT pg_advisory_xact_lock(hashtext('syncd_tables'))")
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS syncd_dataset (
                    name text PRIMARY KEY, schema_json text NOT NULL, version_hash text NOT NULL)
                """)
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS syncd_schema_history (
                    dataset text NOT NULL, registered_at timestamptz NOT NULL DEFAULT now(),
                    version_hash text NOT NULL, schema_json text NOT NULL)
                """)
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS syncd_log (
                    dataset text NOT NULL, cursor bigint NOT NULL, replica text NOT NULL, seq bigint NOT NULL,
                    digest bytea NOT NULL, change_set text NOT NULL,
                    PRIMARY KEY (dataset, cursor), UNIQUE (dataset, replica, seq))
                """)
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS syncd_replica_key (
                    dataset text NOT NULL, replica text NOT NULL, key bytea NOT NULL, PRIMARY KEY (dataset, replica))
                """)
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS syncd_token (
                    hash text PRIMARY KEY, dataset text NOT NULL, created bigint NOT NULL, scope text NOT NULL, expires bigint)
                """)
            try connection.execute("CREATE TABLE IF NOT EXISTS syncd_token_revision (id integer PRIMARY KEY, revision bigint NOT NULL)")
            try installReplicaTable(on: connection)
            try connection.execute("INSERT INTO syncd_token_revision (id, revision) VALUES (1, 0) ON CONFLICT DO NOTHING")
            try installCompaction(on: connection)
            try installTransferStaging(on: connection)
        }
    }

    /// Takes the lock that serializes a dataset's writes until the transaction ends. Holding it
    /// while a log position is assigned and until the commit makes positions commit in order, so
    /// a reader never sees a later position without every earlier one.
    static func lockDataset(_ dataset: String, on connection: PostgreSQLConnection) throws {
        try connection.execute("SELECT pg_advisory_xact_lock(hashtext('syncd_log'), hashtext($1))", [dataset])
    }

    /// `bytes` as a `bytea` parameter in text format.
    static func bytea(_ bytes: some Collection<UInt8>) -> String {
        "\\x" + LowercaseHex.encode(bytes)
    }

    /// The bytes of a `bytea` value PostgreSQL sent in text format (hex output).
    static func bytes(ofBytea text: String?, column: String, sql: String) throws -> [UInt8] {
        guard let text, text.hasPrefix("\\x"), let bytes = LowercaseHex.decode(text.dropFirst(2)) else {
            throw PostgreSQLError(sql: sql, sqlState: "", message: "column \(column) is not a bytea in hex output: \(text ?? "NULL")")
        }
        return bytes
    }

    /// An integer PostgreSQL sent in text format.
    static func integer(_ text: String?, column: String, sql: String) throws -> Int64 {
        guard let text, let value = Int64(text) else {
            throw PostgreSQLError(sql: sql, sqlState: "", message: "column \(column) is not an integer: \(text ?? "NULL")")
        }
        return value
    }

    /// A dataset's schema as stored, `nil` before its first registration.
    static func schema(of dataset: String, on connection: PostgreSQLConnection) throws -> SchemaDocument? {
        guard let json = try connection.execute("SELECT schema_json FROM syncd_dataset WHERE name = $1", [dataset]).scalar else { return nil }
        return try SchemaDocument(jsonData: Data(json.utf8))
    }

    /// Every schema `dataset` was registered with, oldest first.
    static func schemaVersions(of dataset: String, on connection: PostgreSQLConnection) throws -> [SchemaVersion] {
        let sql = "SELECT version_hash, (extract(epoch FROM registered_at) * 1000)::bigint, schema_json "
            + "FROM syncd_schema_history WHERE dataset = $1 ORDER BY registered_at"
        return try connection.execute(sql, [dataset]).map { row in
            guard let hash = row[0], let json = row[2], let schema = try? SchemaDocument(jsonData: Data(json.utf8)), schema.versionHash == hash else {
                throw SyncError(.notSyncable, "dataset \(dataset): syncd_schema_history holds a damaged entry (\(row[0] ?? "NULL"))")
            }
            let registeredAt = row[1].flatMap { Int64($0) }.map { Date(timeIntervalSince1970: Double($0) / 1000) }
            return SchemaVersion(schema: schema, registeredAt: registeredAt)
        }
    }

    /// Records `schema` as `dataset`'s current schema and appends it to the history, as
    /// registered at `registeredAt` (now when `nil`).
    static func setSchema(_ schema: SchemaDocument, of dataset: String, registeredAt: Date? = nil,
                          on connection: PostgreSQLConnection) throws {
        let json = String(decoding: try schema.jsonData(), as: UTF8.self)
        try connection.execute("""
            INSERT INTO syncd_dataset (name, schema_json, version_hash) VALUES ($1, $2, $3)
            ON CONFLICT (name) DO UPDATE SET schema_json = excluded.schema_json, version_hash = excluded.version_hash
            """, [dataset, json, schema.versionHash])
        try appendSchemaHistory(schema, of: dataset, registeredAt: registeredAt, on: connection)
    }

    /// Appends `schema` to `dataset`'s schema history without making it current (an imported
    /// older version), as registered at `registeredAt` (now when `nil`).
    static func appendSchemaHistory(_ schema: SchemaDocument, of dataset: String, registeredAt: Date?,
                                    on connection: PostgreSQLConnection) throws {
        let milliseconds = registeredAt.map { String(Int64(($0.timeIntervalSince1970 * 1000).rounded())) }
        try connection.execute("""
            INSERT INTO syncd_schema_history (dataset, version_hash, schema_json, registered_at)
            VALUES ($1, $2, $3, coalesce(to_timestamp($4::bigint / 1000.0), now()))
            """, [dataset, schema.versionHash, String(decoding: try schema.jsonData(), as: UTF8.self), milliseconds])
    }
}

/// One entry of a dataset's log in PostgreSQL, with its change set when it was read.
struct PostgreSQLLogEntry {
    var mirrored: LogEntry
    var changeSet: ChangeSet?
}

extension PostgreSQLTables {
    private static let entriesSQL = """
        SELECT cursor, replica, seq, digest, CASE WHEN replica = $3 THEN NULL ELSE change_set END
        FROM syncd_log WHERE dataset = $1 AND cursor > $2 ORDER BY cursor LIMIT $4
        """

    /// Up to `limit` entries of `dataset`'s log after `cursor`, oldest first; entries of
    /// `excluding` come without their change set.
    static func entries(of dataset: String, after cursor: Int64, limit: Int, excluding: ReplicaID?,
                        on connection: PostgreSQLConnection) throws -> [PostgreSQLLogEntry] {
        try connection.execute(entriesSQL, [dataset, String(cursor), excluding?.storageText ?? "", String(limit)]).map { row in
            let cursor = try integer(row[0], column: "cursor", sql: entriesSQL)
            guard let replicaText = row[1], let replica = UUID(storageText: replicaText),
                  let seq = UInt64(row[2] ?? ""), seq > 0,
                  let digest = LogDigest(bytes: try bytes(ofBytea: row[3], column: "digest", sql: entriesSQL)) else {
                throw SyncError(.notSyncable, "dataset \(dataset): the syncd_log entry at cursor \(cursor) is damaged")
            }
            var changeSet: ChangeSet?
            if let json = row[4] {
                let decoded = try ChangeSetCoding.decode(Data(json.utf8)).changeSets
                guard decoded.count == 1, decoded[0].dot == Dot(replica: replica, seq: seq) else {
                    throw SyncError(.notSyncable, "dataset \(dataset): the change set logged at cursor \(cursor) is not \(replicaText):\(seq)")
                }
                changeSet = decoded[0]
            }
            return PostgreSQLLogEntry(mirrored: LogEntry(cursor: cursor, dot: Dot(replica: replica, seq: seq), digest: digest),
                                      changeSet: changeSet)
        }
    }

    /// Appends `entries` (with their change sets; `nil` for an imported entry whose change set
    /// was compacted) to `dataset`'s log, many rows per statement: a push's round trips do not grow with its batch.
    static func append(_ entries: [(entry: LogEntry, changeSet: ChangeSet?)], of dataset: String,
                       on connection: PostgreSQLConnection) throws {
        let rowsPerStatement = 500
        for start in stride(from: 0, to: entries.count, by: rowsPerStatement) {
            let chunk = entries[start..<min(start + rowsPerStatement, entries.count)]
            var parameters: [String?] = [dataset]
            var rows: [String] = []
            for (entry, changeSet) in chunk {
                let json = try changeSet.map { String(decoding: try ChangeSetCoding.encode([$0], base: VersionVector()), as: UTF8.self) }
                let first = parameters.count + 1
                rows.append("($1, $\(first), $\(first + 1), $\(first + 2), $\(first + 3), $\(first + 4))")
                parameters += [String(entry.cursor), entry.dot.replica.storageText, String(entry.dot.seq), bytea(entry.digest.bytes), json]
            }
            try connection.execute("INSERT INTO syncd_log (dataset, cursor, replica, seq, digest, change_set) VALUES " + rows.joined(separator: ", "),
                                   parameters)
        }
    }

    /// The highest cursor of `dataset`'s log (0 when it is empty): its last row's, or its floor's
    /// when every entry was folded into it (an imported log can have no row).
    static func highestCursor(of dataset: String, on connection: PostgreSQLConnection) throws -> Int64 {
        let sql = """
            SELECT greatest((SELECT coalesce(max(cursor), 0) FROM syncd_log WHERE dataset = $1),
                            (SELECT coalesce(max(floor_cursor), 0) FROM syncd_log_base WHERE dataset = $1))
            """
        return try integer(try connection.execute(sql, [dataset]).scalar, column: "max(cursor)", sql: sql)
    }

    /// The digest of `dataset`'s log up to `cursor`: empty at 0, `nil` when no entry has that
    /// cursor (or its row was folded into the floor, below which the digests are gone).
    static func digest(of dataset: String, at cursor: Int64, on connection: PostgreSQLConnection) throws -> LogDigest? {
        guard cursor != 0 else { return .empty }
        let sql = "SELECT digest FROM syncd_log WHERE dataset = $1 AND cursor = $2"
        guard let text = try connection.execute(sql, [dataset, String(cursor)]).scalar else {
            guard let floor = try floor(of: dataset, on: connection), floor.position.cursor == cursor else { return nil }
            return floor.position.digest
        }
        guard let digest = LogDigest(bytes: try bytes(ofBytea: text, column: "digest", sql: sql)) else {
            throw SyncError(.notSyncable, "dataset \(dataset): the syncd_log digest at cursor \(cursor) is damaged")
        }
        return digest
    }

    /// The highest seq logged from every replica, its floor's included.
    static func versionVector(of dataset: String, on connection: PostgreSQLConnection) throws -> VersionVector {
        let sql = "SELECT replica, max(seq) FROM syncd_log WHERE dataset = $1 GROUP BY replica"
        var vector = try floor(of: dataset, on: connection)?.vector ?? VersionVector()
        for row in try connection.execute(sql, [dataset]) {
            guard let text = row[0], let replica = UUID(storageText: text), let seq = UInt64(row[1] ?? "") else {
                throw SyncError(.notSyncable, "dataset \(dataset): a syncd_log replica or seq is damaged (\(row))")
            }
            vector[replica] = max(vector[replica], seq)
        }
        return vector
    }

    /// The key registered for `replica` in `dataset`, if it ever pushed there.
    static func replicaKey(of replica: ReplicaID, in dataset: String, on connection: PostgreSQLConnection) throws -> [UInt8]? {
        let sql = "SELECT key FROM syncd_replica_key WHERE dataset = $1 AND replica = $2"
        let rows = try connection.execute(sql, [dataset, replica.storageText])
        guard let row = rows.first else { return nil }
        let key = try bytes(ofBytea: row[0], column: "key", sql: sql)
        guard key.count == ReplicaCredentials.keyLength else {
            throw SyncError(.notSyncable, "dataset \(dataset): the registered key of replica \(replica.storageText) is damaged")
        }
        return key
    }

    /// Registers the key of a replica that has none registered in `dataset`.
    static func registerReplicaKey(_ credentials: ReplicaCredentials, in dataset: String, on connection: PostgreSQLConnection) throws {
        try connection.execute("INSERT INTO syncd_replica_key (dataset, replica, key) VALUES ($1, $2, $3)",
                               [dataset, credentials.replica.storageText, bytea(credentials.key)])
    }
}

import Codecs
import Foundation
import PostgreSQLClient

/// What ``PostgreSQLTransferStaging`` keeps in the shared database, per dataset:
///
/// - `syncd_upload`: each upload's declared size and hash, when it was last touched (milliseconds
///   since 1970) and, once committed, the push result its commit answers.
/// - `syncd_upload_part`: the parts received, with their sizes and hashes.
/// - `syncd_download`: each large change set staged for download, by log entry.
/// - `syncd_download_part`: its parts.
extension PostgreSQLTables {
    /// Creates the staging tables. Runs inside ``install(on:)``'s transaction.
    static func installTransferStaging(on connection: PostgreSQLConnection) throws {
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS syncd_upload (
                dataset text NOT NULL, id text NOT NULL, total_bytes bigint NOT NULL, sha256 text NOT NULL,
                touched bigint NOT NULL, result bytea, PRIMARY KEY (dataset, id))
            """)
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS syncd_upload_part (
                dataset text NOT NULL, upload_id text NOT NULL, number integer NOT NULL, sha256 text NOT NULL,
                size bigint NOT NULL, bytes bytea NOT NULL, PRIMARY KEY (dataset, upload_id, number),
                FOREIGN KEY (dataset, upload_id) REFERENCES syncd_upload (dataset, id) ON DELETE CASCADE)
            """)
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS syncd_download (
                dataset text NOT NULL, entry bigint NOT NULL, total_bytes bigint NOT NULL, sha256 text NOT NULL,
                part_bytes integer NOT NULL, part_count integer NOT NULL, touched bigint NOT NULL, PRIMARY KEY (dataset, entry))
            """)
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS syncd_download_part (
                dataset text NOT NULL, entry bigint NOT NULL, number integer NOT NULL, bytes bytea NOT NULL,
                PRIMARY KEY (dataset, entry, number),
                FOREIGN KEY (dataset, entry) REFERENCES syncd_download (dataset, entry) ON DELETE CASCADE)
            """)
    }
}

/// The large change sets in transit for one dataset, kept in the PostgreSQL database that the
/// syncd instances serving it share (tables in ``PostgreSQLTables/installTransferStaging(on:)``):
/// a client may send the parts of an upload through several instances, ask any of them which
/// arrived, commit through any, and fetch the parts of a change set a pull handed out by
/// reference from any.
///
/// Every statement moves at most one part, so the memory a request needs stays bounded by the
/// part size (the commit's assembled body aside). A commit holds a session advisory lock on the
/// upload, on a connection of ``commitLocks``, while it applies the upload: a commit of the same
/// upload through another instance waits for it, then answers the recorded result. The lock goes
/// with its connection, so an instance that dies mid-commit never blocks the upload.
package final class PostgreSQLTransferStaging: TransferStore, @unchecked Sendable {
    // @unchecked: every property is immutable; the pools are thread-safe.

    let dataset: String
    let pool: PostgreSQLConnectionPool
    /// Connections that hold commit locks. Apart from `pool`, so that commits waiting for a lock
    /// never hold the connections the commit holding it needs to apply the upload.
    let commitLocks: PostgreSQLConnectionPool
    /// How long an upload or download is kept after it was last touched.
    let lifetimeMilliseconds: UInt64
    private let clock: @Sendable () -> UInt64

    package init(dataset: String, pool: PostgreSQLConnectionPool, commitLocks: PostgreSQLConnectionPool,
                 lifetimeMilliseconds: UInt64, clock: @escaping @Sendable () -> UInt64) {
        self.dataset = dataset
        self.pool = pool
        self.commitLocks = commitLocks
        self.lifetimeMilliseconds = lifetimeMilliseconds
        self.clock = clock
    }

    private var now: String { String(Int64(clamping: clock())) }

    // MARK: Uploads

    package func createUpload(totalBytes: Int64, sha256: String) throws -> TransferStaging.Upload {
        let id = LowercaseHex.encode(SecureRandomBytes.make(count: 16))
        let now = clock()
        try pool.withConnection { connection in
            try removeExpired(now: now, on: connection)
            try connection.execute("INSERT INTO syncd_upload (dataset, id, total_bytes, sha256, touched) VALUES ($1, $2, $3, $4, $5)",
                                   [dataset, id, String(totalBytes), sha256, String(Int64(clamping: now))])
        }
        return TransferStaging.Upload(id: id, totalBytes: totalBytes, sha256: sha256, parts: [], result: nil,
                                      expiresAt: now + lifetimeMilliseconds)
    }

    package func upload(_ id: String) throws -> TransferStaging.Upload {
        try pool.withConnection { try upload(id, on: $0) }
    }

    private static let uploadSQL = "SELECT total_bytes, sha256, touched, result FROM syncd_upload WHERE dataset = $1 AND id = $2"
    private static let partsSQL = "SELECT number, size, sha256 FROM syncd_upload_part WHERE dataset = $1 AND upload_id = $2 ORDER BY number"

    private func upload(_ id: String, on connection: PostgreSQLConnection) throws -> TransferStaging.Upload {
        guard let row = try connection.execute(Self.uploadSQL, [dataset, id]).first else { throw TransferStaging.Failure.unknownUpload(id) }
        let total = try PostgreSQLTables.integer(row[0], column: "total_bytes", sql: Self.uploadSQL)
        let touched = try PostgreSQLTables.integer(row[2], column: "touched", sql: Self.uploadSQL)
        let result = try row[3].map { Data(try PostgreSQLTables.bytes(ofBytea: $0, column: "result", sql: Self.uploadSQL)) }
        let parts = try connection.execute(Self.partsSQL, [dataset, id]).map { part in
            TransferStaging.Part(number: Int(try PostgreSQLTables.integer(part[0], column: "number", sql: Self.partsSQL)),
                                 bytes: try PostgreSQLTables.integer(part[1], column: "size", sql: Self.partsSQL), sha256: part[2] ?? "")
        }
        return TransferStaging.Upload(id: id, totalBytes: total, sha256: row[1] ?? "", parts: parts, result: result,
                                      expiresAt: UInt64(max(0, touched)) + lifetimeMilliseconds)
    }

    package func storePart(_ number: Int, of id: String, bytes: Data, sha256: String) throws {
        let received = LowercaseHex.encode(SHA256.hash(bytes))
        guard received == sha256.lowercased() else {
            throw TransferStaging.Failure.partHashMismatch(number: number, expected: sha256, received: received)
        }
        try pool.inTransaction { connection in
            // The row lock orders parts of one upload arriving through several instances at
            // once, so that their sizes are checked against the declared total together.
            let sql = "SELECT total_bytes, result IS NOT NULL FROM syncd_upload WHERE dataset = $1 AND id = $2 FOR UPDATE"
            guard let row = try connection.execute(sql, [dataset, id]).first else { throw TransferStaging.Failure.unknownUpload(id) }
            if row[1] == "t" { throw TransferStaging.Failure.alreadyCommitted(id) }
            let total = try PostgreSQLTables.integer(row[0], column: "total_bytes", sql: sql)
            let othersSQL = "SELECT coalesce(sum(size), 0) FROM syncd_upload_part WHERE dataset = $1 AND upload_id = $2 AND number <> $3"
            let others = try PostgreSQLTables.integer(try connection.execute(othersSQL, [dataset, id, String(number)]).scalar,
                                                      column: "sum(size)", sql: othersSQL)
            guard others + Int64(bytes.count) <= total else {
                throw TransferStaging.Failure.uploadTooLarge(id: id, declared: total, received: others + Int64(bytes.count))
            }
            try connection.execute("""
                INSERT INTO syncd_upload_part (dataset, upload_id, number, sha256, size, bytes) VALUES ($1, $2, $3, $4, $5, $6)
                ON CONFLICT (dataset, upload_id, number) DO UPDATE SET sha256 = excluded.sha256, size = excluded.size, bytes = excluded.bytes
                """, [dataset, id, String(number), received, String(bytes.count), PostgreSQLTables.bytea(bytes)])
            try connection.execute("UPDATE syncd_upload SET touched = $3 WHERE dataset = $1 AND id = $2", [dataset, id, now])
        }
    }

    package func forEachAssembledPart(of id: String, _ consume: (Data) throws -> Void) throws {
        try pool.withConnection { connection in
            let upload = try upload(id, on: connection)
            try TransferStaging.checkComplete(upload)
            var hasher = SHA256()
            // One part per statement: a result set holds one part, not the upload.
            let sql = "SELECT bytes FROM syncd_upload_part WHERE dataset = $1 AND upload_id = $2 AND number = $3"
            for part in upload.parts {
                guard let text = try connection.execute(sql, [dataset, id, String(part.number)]).scalar else {
                    throw TransferStaging.Failure.incomplete(id: id, missing: "part \(part.number) was replaced while the commit read it")
                }
                let bytes = Data(try PostgreSQLTables.bytes(ofBytea: text, column: "bytes", sql: sql))
                hasher.update(bytes)
                try consume(bytes)
            }
            let hash = LowercaseHex.encode(hasher.finish())
            guard hash == upload.sha256 else {
                throw TransferStaging.Failure.uploadHashMismatch(id: id, expected: upload.sha256, received: hash)
            }
        }
    }

    package func commit(_ id: String, by push: () throws -> Data) throws -> Data {
        if let result = try upload(id).result { return result }
        return try commitLocks.withConnection { lockConnection in
            let key = [dataset + "/" + id]
            try lockConnection.execute("SELECT pg_advisory_lock(hashtext('syncd_upload_commit'), hashtext($1))", key)
            // A connection that cannot unlock is broken, and its lock went with its session.
            defer { _ = try? lockConnection.execute("SELECT pg_advisory_unlock(hashtext('syncd_upload_commit'), hashtext($1))", key) }
            if let result = try upload(id).result { return result }
            let answer = try push()
            try pool.inTransaction { connection in
                try connection.execute("UPDATE syncd_upload SET result = $3, touched = $4 WHERE dataset = $1 AND id = $2",
                                       [dataset, id, PostgreSQLTables.bytea(answer), now])
                try connection.execute("DELETE FROM syncd_upload_part WHERE dataset = $1 AND upload_id = $2", [dataset, id])
            }
            return answer
        }
    }

    // MARK: Downloads

    package func stageDownload(entry: Int64, body: Data, partBytes: Int) throws -> TransferStaging.Download {
        let sha256 = LowercaseHex.encode(SHA256.hash(body))
        let partCount = max(1, (body.count + partBytes - 1) / partBytes)
        let now = clock()
        let staged = TransferStaging.Download(entry: entry, totalBytes: Int64(body.count), sha256: sha256, partBytes: partBytes, partCount: partCount)
        try pool.withConnection { connection in
            try removeExpired(now: now, on: connection)
            try connection.inTransaction {
                // Instances staging the same entry at once take turns; the second finds it staged.
                try connection.execute("SELECT pg_advisory_xact_lock(hashtext('syncd_download'), hashtext($1))", [dataset + "/" + String(entry)])
                let parameters = [dataset, String(entry)]
                let row = try connection.execute("SELECT sha256, part_bytes FROM syncd_download WHERE dataset = $1 AND entry = $2", parameters).first
                if let row, row[0] == sha256, row[1] == String(partBytes) {
                    try connection.execute("UPDATE syncd_download SET touched = $3 WHERE dataset = $1 AND entry = $2", parameters + [self.now])
                    return
                }
                try connection.execute("DELETE FROM syncd_download WHERE dataset = $1 AND entry = $2", parameters)
                try connection.execute("""
                    INSERT INTO syncd_download (dataset, entry, total_bytes, sha256, part_bytes, part_count, touched)
                    VALUES ($1, $2, $3, $4, $5, $6, $7)
                    """, parameters + [String(body.count), sha256, String(partBytes), String(partCount), String(Int64(clamping: now))])
                for number in 0..<partCount {
                    let range = (number * partBytes)..<min(body.count, (number + 1) * partBytes)
                    try connection.execute("INSERT INTO syncd_download_part (dataset, entry, number, bytes) VALUES ($1, $2, $3, $4)",
                                           parameters + [String(number + 1), PostgreSQLTables.bytea(body[range])])
                }
            }
        }
        return staged
    }

    package func downloadPart(entry: Int64, number: Int) throws -> Data {
        try pool.withConnection { connection in
            let sql = "SELECT bytes FROM syncd_download_part WHERE dataset = $1 AND entry = $2 AND number = $3"
            guard let text = try connection.execute(sql, [dataset, String(entry), String(number)]).scalar else {
                throw TransferStaging.Failure.unknownDownload(entry: entry, part: number)
            }
            try connection.execute("UPDATE syncd_download SET touched = $3 WHERE dataset = $1 AND entry = $2", [dataset, String(entry), now])
            return Data(try PostgreSQLTables.bytes(ofBytea: text, column: "bytes", sql: sql))
        }
    }

    /// Removes the dataset's uploads and downloads untouched for longer than their lifetime.
    private func removeExpired(now: UInt64, on connection: PostgreSQLConnection) throws {
        let limit = String(Int64(clamping: now) - Int64(min(lifetimeMilliseconds, UInt64(Int64.max / 2))))
        try connection.execute("DELETE FROM syncd_upload WHERE dataset = $1 AND touched < $2", [dataset, limit])
        try connection.execute("DELETE FROM syncd_download WHERE dataset = $1 AND touched < $2", [dataset, limit])
    }
}

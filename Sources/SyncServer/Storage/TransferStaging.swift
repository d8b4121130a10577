import Codecs
import Foundation
import SQLiteDatabase

/// The parts of large change sets in transit for one dataset, in `DIR/datasets/<name>/staging.sqlite`:
/// uploads a client sends part by part before it commits them as one push, and the encodings of
/// large change sets a pull hands out by reference, which clients fetch part by part.
///
/// Parts live in their own SQLite file, not the dataset's store, so that receiving them never
/// waits for a push's write lock, and so that what is staged never enters a snapshot. Staging
/// survives a restart of the server: a client resumes an upload by asking which parts arrived.
/// Uploads and downloads untouched for ``lifetimeMilliseconds`` are removed when the next upload
/// or download is created.
package final class TransferStaging: @unchecked Sendable {
    // @unchecked: `connection` is only used while holding `lock`.

    /// An upload as ``upload(_:)`` reports it.
    package struct Upload: Sendable, Equatable {
        package var id: String
        package var totalBytes: Int64
        package var sha256: String
        /// The parts received, by number, with their sizes and hashes.
        package var parts: [Part]
        /// The push result of the commit, once committed: a commit again answers it unchanged.
        package var result: Data?
        /// Milliseconds since 1970 after which the upload may be removed.
        package var expiresAt: UInt64
    }

    /// One staged part.
    package struct Part: Sendable, Equatable {
        package var number: Int
        package var bytes: Int64
        package var sha256: String
    }

    /// A large change set encoded for download, as a pull page references it.
    package struct Download: Sendable, Equatable {
        /// The log entry (cursor) of the change set.
        package var entry: Int64
        package var totalBytes: Int64
        package var sha256: String
        package var partBytes: Int
        package var partCount: Int
    }

    /// Why a staging request cannot be served.
    package enum Failure: Error, Equatable {
        case unknownUpload(String)
        case partHashMismatch(number: Int, expected: String, received: String)
        case uploadTooLarge(id: String, declared: Int64, received: Int64)
        case alreadyCommitted(String)
        case incomplete(id: String, missing: String)
        case uploadHashMismatch(id: String, expected: String, received: String)
        case unknownDownload(entry: Int64, part: Int)
    }

    let path: String
    /// How long an upload or download is kept after it was last touched.
    let lifetimeMilliseconds: UInt64
    private let clock: @Sendable () -> UInt64
    private let lock = NSLock()
    /// Held while an upload is committed (see ``commit(_:by:)``).
    let commitLock = NSLock()
    private var connection: SQLiteConnection?

    package init(path: String, lifetimeMilliseconds: UInt64, clock: @escaping @Sendable () -> UInt64) {
        self.path = path
        self.lifetimeMilliseconds = lifetimeMilliseconds
        self.clock = clock
    }

    /// Runs `body` on the staging file, opening and setting it up the first time.
    private func withConnection<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        if connection == nil {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let opened = try SQLiteConnection(path: path)
            try opened.execute("""
                PRAGMA journal_mode = WAL;
                CREATE TABLE IF NOT EXISTS upload (
                    id TEXT PRIMARY KEY, total_bytes INTEGER NOT NULL, sha256 TEXT NOT NULL,
                    touched INTEGER NOT NULL, result BLOB);
                CREATE TABLE IF NOT EXISTS upload_part (
                    upload_id TEXT NOT NULL REFERENCES upload(id) ON DELETE CASCADE, number INTEGER NOT NULL,
                    sha256 TEXT NOT NULL, bytes BLOB NOT NULL, PRIMARY KEY (upload_id, number)) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS download (
                    entry INTEGER PRIMARY KEY, total_bytes INTEGER NOT NULL, sha256 TEXT NOT NULL,
                    part_bytes INTEGER NOT NULL, part_count INTEGER NOT NULL, touched INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS download_part (
                    entry INTEGER NOT NULL REFERENCES download(entry) ON DELETE CASCADE, number INTEGER NOT NULL,
                    bytes BLOB NOT NULL, PRIMARY KEY (entry, number)) WITHOUT ROWID;
                PRAGMA foreign_keys = ON;
                """)
            connection = opened
        }
        return try body(connection!)
    }

    // MARK: Uploads

    /// Starts an upload of `totalBytes` bytes whose SHA-256 is `sha256`; returns its ID.
    package func createUpload(totalBytes: Int64, sha256: String) throws -> Upload {
        let id = LowercaseHex.encode(SecureRandomBytes.make(count: 16))
        let now = clock()
        try withConnection { connection in
            try removeExpired(now: now, on: connection)
            try connection.run("INSERT INTO upload (id, total_bytes, sha256, touched) VALUES (?, ?, ?, ?)",
                               [.text(id), .integer(totalBytes), .text(sha256), .integer(Int64(now))])
        }
        return Upload(id: id, totalBytes: totalBytes, sha256: sha256, parts: [], result: nil, expiresAt: now + lifetimeMilliseconds)
    }

    /// The upload `id` with the parts received so far.
    package func upload(_ id: String) throws -> Upload {
        try withConnection { try upload(id, on: $0) }
    }

    private func upload(_ id: String, on connection: SQLiteConnection) throws -> Upload {
        guard let row = try connection.rows("SELECT total_bytes, sha256, touched, result FROM upload WHERE id = ?", [.text(id)]).first,
              case .integer(let total) = row[0], case .text(let sha256) = row[1], case .integer(let touched) = row[2] else {
            throw Failure.unknownUpload(id)
        }
        var result: Data?
        if case .blob(let data) = row[3] { result = data }
        let parts = try connection.rows(
            "SELECT number, length(bytes), sha256 FROM upload_part WHERE upload_id = ? ORDER BY number", [.text(id)]
        ).compactMap { row -> Part? in
            guard case .integer(let number) = row[0], case .integer(let bytes) = row[1], case .text(let hash) = row[2] else { return nil }
            return Part(number: Int(number), bytes: bytes, sha256: hash)
        }
        return Upload(id: id, totalBytes: total, sha256: sha256, parts: parts, result: result,
                      expiresAt: UInt64(touched) + lifetimeMilliseconds)
    }

    /// Stores part `number` of upload `id` after checking `bytes` against `sha256`; a part sent
    /// again replaces the one stored (a resumed client may re-send a part whose answer it lost).
    package func storePart(_ number: Int, of id: String, bytes: Data, sha256: String) throws {
        let received = LowercaseHex.encode(SHA256.hash(bytes))
        guard received == sha256.lowercased() else {
            throw Failure.partHashMismatch(number: number, expected: sha256, received: received)
        }
        try withConnection { connection in
            try connection.inTransaction {
                let upload = try upload(id, on: connection)
                if upload.result != nil { throw Failure.alreadyCommitted(id) }
                let others = upload.parts.filter { $0.number != number }.reduce(Int64(0)) { $0 + $1.bytes }
                guard others + Int64(bytes.count) <= upload.totalBytes else {
                    throw Failure.uploadTooLarge(id: id, declared: upload.totalBytes, received: others + Int64(bytes.count))
                }
                try connection.run("INSERT OR REPLACE INTO upload_part (upload_id, number, sha256, bytes) VALUES (?, ?, ?, ?)",
                                   [.text(id), .integer(Int64(number)), .text(received), .blob(bytes)])
                try connection.run("UPDATE upload SET touched = ? WHERE id = ?", [.integer(Int64(clock())), .text(id)])
            }
        }
    }

    /// Calls `consume` with the upload's parts in order, one at a time, once parts `1...n` are
    /// all there with the declared size; throws after the last one when their bytes joined do
    /// not have the declared hash. Only one part is in memory at a time.
    package func forEachAssembledPart(of id: String, _ consume: (Data) throws -> Void) throws {
        try withConnection { connection in
            let upload = try upload(id, on: connection)
            try TransferStaging.checkComplete(upload)
            var hasher = SHA256()
            for number in upload.parts.map(\.number) {
                // One part at a time: a statement per part keeps one blob in memory.
                guard case .blob(let bytes)? = try connection.rows(
                    "SELECT bytes FROM upload_part WHERE upload_id = ? AND number = ?", [.text(id), .integer(Int64(number))]).first?.first
                else { continue }
                hasher.update(bytes)
                try consume(bytes)
            }
            let hash = LowercaseHex.encode(hasher.finish())
            guard hash == upload.sha256 else { throw Failure.uploadHashMismatch(id: id, expected: upload.sha256, received: hash) }
        }
    }

    /// Records the commit's push result and drops the parts, in one transaction: a commit
    /// again answers the same result.
    package func recordCommit(of id: String, result: Data) throws {
        try withConnection { connection in
            try connection.inTransaction {
                try connection.run("UPDATE upload SET result = ?, touched = ? WHERE id = ?", [.blob(result), .integer(Int64(clock())), .text(id)])
                try connection.run("DELETE FROM upload_part WHERE upload_id = ?", [.text(id)])
            }
        }
    }

    // MARK: Downloads

    /// Stages `body` (a change-set batch holding the change set at log entry `entry`) in parts
    /// of `partBytes`, unless it is staged already, and describes it.
    package func stageDownload(entry: Int64, body: Data, partBytes: Int) throws -> Download {
        let sha256 = LowercaseHex.encode(SHA256.hash(body))
        let partCount = max(1, (body.count + partBytes - 1) / partBytes)
        let now = Int64(clock())
        try withConnection { connection in
            try removeExpired(now: UInt64(now), on: connection)
            try connection.inTransaction {
                if let row = try connection.rows("SELECT sha256 FROM download WHERE entry = ?", [.integer(entry)]).first,
                   row[0] == .text(sha256) {
                    try connection.run("UPDATE download SET touched = ? WHERE entry = ?", [.integer(now), .integer(entry)])
                    return
                }
                try connection.run("DELETE FROM download WHERE entry = ?", [.integer(entry)])
                try connection.run("INSERT INTO download (entry, total_bytes, sha256, part_bytes, part_count, touched) VALUES (?, ?, ?, ?, ?, ?)",
                                   [.integer(entry), .integer(Int64(body.count)), .text(sha256), .integer(Int64(partBytes)),
                                    .integer(Int64(partCount)), .integer(now)])
                for number in 0..<partCount {
                    let range = (number * partBytes)..<min(body.count, (number + 1) * partBytes)
                    try connection.run("INSERT INTO download_part (entry, number, bytes) VALUES (?, ?, ?)",
                                       [.integer(entry), .integer(Int64(number + 1)), .blob(body.subdata(in: range))])
                }
            }
        }
        return Download(entry: entry, totalBytes: Int64(body.count), sha256: sha256, partBytes: partBytes, partCount: partCount)
    }

    /// Part `number` (from 1) of the download staged for log entry `entry`.
    package func downloadPart(entry: Int64, number: Int) throws -> Data {
        try withConnection { connection in
            guard let row = try connection.rows("SELECT bytes FROM download_part WHERE entry = ? AND number = ?",
                                                [.integer(entry), .integer(Int64(number))]).first,
                  case .blob(let bytes) = row[0] else {
                throw Failure.unknownDownload(entry: entry, part: number)
            }
            try connection.run("UPDATE download SET touched = ? WHERE entry = ?", [.integer(Int64(clock())), .integer(entry)])
            return bytes
        }
    }

    /// Removes uploads and downloads untouched for longer than their lifetime.
    private func removeExpired(now: UInt64, on connection: SQLiteConnection) throws {
        let limit = Int64(now) - Int64(min(lifetimeMilliseconds, UInt64(Int64.max / 2)))
        try connection.run("DELETE FROM upload WHERE touched < ?", [.integer(limit)])
        try connection.run("DELETE FROM download WHERE touched < ?", [.integer(limit)])
    }
}

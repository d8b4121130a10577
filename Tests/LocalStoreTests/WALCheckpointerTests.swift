import Dispatch
import Foundation
@testable import SQLiteDatabase
import TestSupport
import Testing

/// A ``WALCheckpointer`` copies the WAL into the database file on its own queue once a commit
/// takes the WAL past its background threshold, and a commit past its bound copies it itself.
/// A database file grows only when a checkpoint copies pages into it, which is what these
/// tests watch.
@Suite struct WALCheckpointerTests {
    /// Bytes of the database file itself (not its WAL).
    static func fileBytes(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber).intValue
    }

    /// A WAL-mode database at `path` with an empty table, with the checkpointer installed.
    static func database(at path: String, checkpointer: WALCheckpointer) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path)
        _ = try connection.rows("PRAGMA journal_mode = WAL")
        try connection.execute("CREATE TABLE filler (value BLOB)")
        checkpointer.install(on: connection)
        return connection
    }

    /// About `pages` pages of new rows, in one transaction.
    static func writePages(_ pages: Int, on connection: SQLiteConnection) throws {
        try connection.run("""
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
            INSERT INTO filler SELECT zeroblob(3000) FROM n
            """, [.integer(Int64(pages))])
    }

    @Test func aCommitPastTheThresholdLeavesTheCopyToTheBackground() throws {
        let file = TemporaryStoreFile(prefix: "checkpoint-background")
        let queue = DispatchQueue(label: "checkpoints under test")
        let checkpointer = WALCheckpointer(path: file.path, backgroundPages: 20, synchronousPages: 1_000_000, queue: queue)
        let connection = try Self.database(at: file.path, checkpointer: checkpointer)
        queue.suspend()
        try Self.writePages(200, on: connection)
        // The commit asked for a checkpoint and went on: nothing reached the file yet.
        #expect(try Self.fileBytes(file.path) < 20 * 4096)
        queue.resume()
        checkpointer.waitUntilIdle()
        #expect(try Self.fileBytes(file.path) >= 200 * 3000)
    }

    @Test func aCommitBelowTheThresholdAsksForNoCheckpoint() throws {
        let file = TemporaryStoreFile(prefix: "checkpoint-below")
        let checkpointer = WALCheckpointer(path: file.path, backgroundPages: 500, synchronousPages: 1_000_000)
        let connection = try Self.database(at: file.path, checkpointer: checkpointer)
        try Self.writePages(200, on: connection)
        checkpointer.waitUntilIdle()
        #expect(try Self.fileBytes(file.path) < 20 * 4096)
    }

    @Test func aCommitPastTheBoundCheckpointsItself() throws {
        let file = TemporaryStoreFile(prefix: "checkpoint-bound")
        let queue = DispatchQueue(label: "checkpoints under test")
        let checkpointer = WALCheckpointer(path: file.path, backgroundPages: 50, synchronousPages: 50, queue: queue)
        let connection = try Self.database(at: file.path, checkpointer: checkpointer)
        // The background never runs: what reaches the file, the commit copied.
        queue.suspend()
        defer { queue.resume() }
        try Self.writePages(200, on: connection)
        #expect(try Self.fileBytes(file.path) >= 200 * 3000)
    }

    /// Without a checkpointer, SQLite's own checkpoint (at 1,000 pages) leaves 200 pages in the WAL:
    /// the tests above see the checkpointer's work, not SQLite's.
    @Test func withoutACheckpointerTheSamePagesStayInTheLog() throws {
        let file = TemporaryStoreFile(prefix: "checkpoint-none")
        let connection = try SQLiteConnection(path: file.path)
        _ = try connection.rows("PRAGMA journal_mode = WAL")
        try connection.execute("CREATE TABLE filler (value BLOB)")
        try Self.writePages(200, on: connection)
        #expect(try Self.fileBytes(file.path) < 20 * 4096)
    }
}

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

    /// A WAL-mode database with an empty table and a checkpointer installed on its connection,
    /// running its checkpoints on ``queue``, which a test may suspend.
    struct Fixture {
        let file: TemporaryStoreFile
        let queue = DispatchQueue(label: "checkpoints under test")
        let checkpointer: WALCheckpointer
        let connection: SQLiteConnection

        init(_ prefix: String, backgroundPages: Int32, synchronousPages: Int32) throws {
            file = TemporaryStoreFile(prefix: prefix)
            checkpointer = WALCheckpointer(path: file.path, backgroundPages: backgroundPages, synchronousPages: synchronousPages, queue: queue)
            connection = try SQLiteConnection(path: file.path)
            _ = try connection.rows("PRAGMA journal_mode = WAL")
            try connection.execute("CREATE TABLE filler (value BLOB)")
            checkpointer.install(on: connection)
        }

        /// Bytes of the database file.
        func fileBytes() throws -> Int { try WALCheckpointerTests.fileBytes(file.path) }
    }

    /// About `pages` pages of new rows, in one transaction.
    static func writePages(_ pages: Int, on connection: SQLiteConnection) throws {
        try connection.run("""
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
            INSERT INTO filler SELECT zeroblob(3000) FROM n
            """, [.integer(Int64(pages))])
    }

    @Test func aCommitPastTheThresholdLeavesTheCopyToTheBackground() throws {
        let database = try Fixture("checkpoint-background", backgroundPages: 20, synchronousPages: 1_000_000)
        database.queue.suspend()
        let written = Result { try Self.writePages(200, on: database.connection) }
        let bytesBeforeTheCheckpoint = Result { try database.fileBytes() }
        // Resumed whatever happened: a suspended queue must not be released.
        database.queue.resume()
        try written.get()
        // The commit asked for a checkpoint and went on: nothing reached the file yet.
        #expect(try bytesBeforeTheCheckpoint.get() < 20 * 4096)
        database.checkpointer.waitUntilIdle()
        #expect(try database.fileBytes() >= 200 * 3000)
    }

    @Test func aCommitBelowTheThresholdAsksForNoCheckpoint() throws {
        let database = try Fixture("checkpoint-below", backgroundPages: 500, synchronousPages: 1_000_000)
        try Self.writePages(200, on: database.connection)
        database.checkpointer.waitUntilIdle()
        #expect(try database.fileBytes() < 20 * 4096)
    }

    @Test func aCommitPastTheBoundCheckpointsItself() throws {
        let database = try Fixture("checkpoint-bound", backgroundPages: 50, synchronousPages: 50)
        // The background never runs: what reaches the file, the commit copied.
        database.queue.suspend()
        defer { database.queue.resume() }
        try Self.writePages(200, on: database.connection)
        #expect(try database.fileBytes() >= 200 * 3000)
    }

    /// A store file removed while its checkpoint waits (a test's temporary file, an app
    /// deleting a store) is not made again, empty, by the checkpoint.
    @Test func aCheckpointOfARemovedFileMakesNoNewFile() throws {
        let database = try Fixture("checkpoint-removed", backgroundPages: 20, synchronousPages: 1_000_000)
        database.queue.suspend()
        let written = Result { try Self.writePages(200, on: database.connection) }
        TemporaryStoreFile.remove(database.file.path)
        database.queue.resume()
        try written.get()
        database.checkpointer.waitUntilIdle()
        #expect(!FileManager.default.fileExists(atPath: database.file.path))
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

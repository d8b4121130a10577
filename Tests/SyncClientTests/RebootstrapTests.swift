import Foundation
import Synchronization
import Testing
@testable import SyncEngine
import SyncKit

/// A client the server refuses (`410 replica_retired`) starts again from a snapshot, replaying
/// only what the snapshot lacks; an attempt that fails before the contents are replaced leaves
/// the store as it was.
@Suite(.serialized) struct RebootstrapTests {
    /// A snapshot of a store that applied `changeSets`, served with `cursor`.
    static func serveSnapshot(of changeSets: [ChangeSet], cursor: String, on server: FakeSyncServer) throws {
        let serverCopy = try ClientReplica()
        _ = try serverCopy.replica.apply(changeSets)
        let snapshotPath = FileManager.default.temporaryDirectory.appendingPathComponent("snapshot-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: snapshotPath) }
        try SQLiteConnection(path: serverCopy.path).execute("VACUUM INTO '\(snapshotPath)'")
        server.state.withLock { $0.snapshot = (try? Data(contentsOf: URL(fileURLWithPath: snapshotPath)), cursor, nil) }
    }

    /// The server stores `a`'s two pending change sets but `a` never learns it (the answers were
    /// lost); `a` saves one more note offline; the server then serves a snapshot of the two and
    /// refuses `a` as retired. Returns `a`'s client.
    static func storePendingThenRetire(_ a: ClientReplica, on server: FakeSyncServer) async throws -> SyncClient {
        let stored = try a.replica.localChangeSets(status: .pending)
        let client = a.client(server)
        try await client.registerSchema()
        _ = try await client.transport.push(stored, as: try a.replica.credentials())
        try a.addNotes(1, prefix: "offline")
        try serveSnapshot(of: stored, cursor: "2", on: server)
        server.inject("POST", "changesets", .error(status: 410, code: "replica_retired", message: "retired by an operator"))
        return client
    }

    @Test func onlyWhatTheSnapshotLacksIsReplayedUnderTheNewReplicaID() async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica()
        try a.addNotes(2)
        // The server stored A's first two, but A never learned it (the answers were lost).
        let client = try await RebootstrapTests.storePendingThenRetire(a, on: server)
        let retired = a.replica.replicaID

        let report = try await client.sync()
        let rebootstrap = try #require(report.rebootstrap)
        #expect(rebootstrap.retiredReplica == retired && rebootstrap.newReplica == a.replica.replicaID && rebootstrap.newReplica != retired)
        #expect(rebootstrap.replayed == 1)
        #expect(report.pushed == 1 && report.pendingAfter == 0)
        #expect(server.logCount == 3)
        #expect(try a.noteTitles() == ["note 0", "note 1", "offline 0"])
        #expect(try a.replica.versionVector() == VersionVector([retired: 2, rebootstrap.newReplica: 1]))
        #expect(!FileManager.default.fileExists(atPath: a.path + ".rebootstrap"))
    }

    /// A replica that starts again from a snapshot keeps its own conflict journal, numbers
    /// included: entries are never exchanged, so a journal the snapshot's store kept is not its.
    @Test func theJournalStaysTheReplicasOwnThroughARebootstrap() async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica(), b = try ClientReplica()
        let note = try #require(try a.addNotes(1).first)
        _ = try b.replica.apply(try a.replica.localChangeSets(status: .pending))
        try #require(try a.context.fetch(FetchDescriptor<Note>()).first { $0.objectID == note }).title = "from a"
        try a.context.save()
        let reader = try b.store.makeContext()
        try #require(try reader.fetch(FetchDescriptor<Note>()).first).title = "from b"
        try reader.save()
        let fromB = try b.replica.localChangeSets(status: .pending)
        _ = try a.replica.apply(fromB)
        let journal = try a.replica.conflicts()
        #expect(journal.count == 1)

        // The snapshot's store never met B's change set: it journaled nothing, and numbers from 1.
        let client = try await RebootstrapTests.storePendingThenRetire(a, on: server)

        let report = try await client.sync()
        #expect(try #require(report.rebootstrap).replayed == 1)
        #expect(try a.replica.conflicts() == journal)
        #expect(try a.noteTitles().count == 2)
        // The next entry is numbered after the kept ones.
        #expect(try a.replica.withConnection { try SyncStateTable.value(of: .journalNext, on: $0) } == UInt64(journal[0].number + 1))
    }

    @Test func aSnapshotThatCannotBeAdoptedLeavesTheStoreAsItWas() async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica()
        try a.addNotes(2)
        server.state.withLock { $0.snapshot = (Data("not a store file".utf8), "0", nil) }
        server.inject("POST", "changesets", .error(status: 410, code: "replica_retired", message: "retired by an operator"))
        // What an attempt killed before it replaced the contents leaves behind.
        try Data("partial".utf8).write(to: URL(fileURLWithPath: a.path + ".rebootstrap"))
        let replica = a.replica.replicaID

        await #expect(throws: SyncClientError.self) { try await a.client(server).sync() }
        #expect(a.replica.replicaID == replica)
        #expect(try a.replica.unacknowledgedCount() == 2)
        #expect(try a.noteTitles() == ["note 0", "note 1"])
        #expect(!FileManager.default.fileExists(atPath: a.path + ".rebootstrap"))
    }

    /// The replacement holds the store's write lock from the last outbox read to the commit of
    /// the new contents: a writer on another connection cannot commit in between (its save would
    /// be lost with the old contents); tables only the new file has are created with their
    /// indexes, and columns only the old file has keep their defaults.
    @Test func theReplacementHoldsTheWriteLockFromTheLastReadToTheNewContents() throws {
        let directory = FileManager.default.temporaryDirectory
        let storePath = directory.appendingPathComponent("replaced-\(UUID().uuidString).sqlite").path
        let sourcePath = directory.appendingPathComponent("source-\(UUID().uuidString).sqlite").path
        defer { for path in [storePath, sourcePath] { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } } }
        let store = try SQLiteConnection(path: storePath)
        try store.execute("PRAGMA journal_mode = WAL; CREATE TABLE note (id INTEGER PRIMARY KEY, title TEXT, local TEXT DEFAULT 'kept'); INSERT INTO note (id, title, local) VALUES (1, 'old', 'x')")
        let source = try SQLiteConnection(path: sourcePath)
        try source.execute("CREATE TABLE note (id INTEGER PRIMARY KEY, title TEXT); INSERT INTO note VALUES (7, 'new')")
        try source.execute("CREATE TABLE tag (name TEXT); CREATE INDEX tag_name ON tag (name); INSERT INTO tag VALUES ('red')")
        let writer = try SQLiteConnection(path: storePath)
        try writer.execute("PRAGMA busy_timeout = 0")

        var ranLocked = false
        try SQLiteConnection(path: storePath).replaceContents(withDatabaseAt: sourcePath) {
            ranLocked = true
            #expect(throws: StoreError.self) { try writer.execute("INSERT INTO note (id, title) VALUES (2, 'late')") }
        }
        #expect(ranLocked)
        #expect(try store.rows("SELECT id, title, local FROM note") == [[.integer(7), .text("new"), .text("kept")]])
        #expect(try store.rows("SELECT name FROM tag") == [[.text("red")]])
        #expect(try store.rows("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'tag_name'").count == 1)
        try writer.execute("INSERT INTO note (id, title) VALUES (2, 'after')")
        #expect(try store.rows("SELECT count(*) FROM note") == [[.integer(2)]])
    }
}

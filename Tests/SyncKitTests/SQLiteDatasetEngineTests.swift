import Foundation
import Testing
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport

extension DatasetEngine {
    /// Validates a batch and applies it, as a server does with a pushed one.
    func apply(_ changeSets: [ChangeSet], pushedBy pusher: ReplicaCredentials?) throws -> DatasetApplyResult {
        try apply(validate(changeSets), pushedBy: pusher)
    }
}

/// The contract of ``DatasetEngine`` as the SQLite engine keeps it: batches applied and logged
/// together, pages of the log by cursor, cursors it never handed out refused, and snapshots a
/// client can adopt.
@Suite struct SQLiteDatasetEngineTests {
    private static func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString).sqlite").path
    }

    @Test func batchesAreLoggedAndReadBackByCursor() throws {
        let a = try TestReplica(name: "client")
        for name in ["one", "two", "three"] {
            let team = Team()
            team.name = name
            a.context.insert(team)
            try a.context.save()
        }
        let path = SQLiteDatasetEngineTests.temporaryPath("engine")
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        #expect(try SQLiteDatasetEngine.open(at: path) == nil)
        let engine = try SQLiteDatasetEngine.create(at: path, schema: a.store.schemaDocument)
        let changeSets = try a.replica.changeSets(missingFrom: VersionVector())

        let first = try engine.apply(Array(changeSets.prefix(2)), pushedBy: try a.replica.credentials())
        #expect(first.applied == changeSets.prefix(2).map(\.dot) && first.alreadyApplied.isEmpty)
        #expect(first.vector == VersionVector([a.replica.replicaID: 2]) && first.cursor == 2)
        let second = try engine.apply(changeSets, pushedBy: try a.replica.credentials())
        #expect(second.applied == [changeSets[2].dot] && second.alreadyApplied == changeSets.prefix(2).map(\.dot))
        #expect(second.cursor == 3)

        let page = try engine.readLog(after: 0, limit: 2, excluding: nil)
        #expect(page.changeSets == Array(changeSets.prefix(2)) && page.cursor == 2 && page.hasMore)
        let excluded = try engine.readLog(after: 2, limit: 5, excluding: a.replica.replicaID)
        #expect(excluded.changeSets.isEmpty && excluded.cursor == 3 && !excluded.hasMore)
        for unknown: Int64 in [-1, 4] {
            #expect(throws: DatasetEngineError.unknownCursor(unknown, logEnd: 3)) { try engine.readLog(after: unknown, limit: 5, excluding: nil) }
        }
        // Opened again, the engine finds its log.
        #expect(try SQLiteDatasetEngine.open(at: path)?.readLog(after: 0, limit: 5, excluding: nil).cursor == 3)
    }

    /// Runs `body` with a client replica that saved one team, and the paths of a dataset store
    /// and of a snapshot, removed afterwards.
    private func withSavedTeam(_ body: (_ client: TestReplica, _ team: Team, _ path: String, _ copy: String) throws -> Void) throws {
        let client = try TestReplica(name: "client")
        let team = Team()
        team.name = "Rovers"
        client.context.insert(team)
        try client.context.save()
        let path = SQLiteDatasetEngineTests.temporaryPath("engine"), copy = SQLiteDatasetEngineTests.temporaryPath("snapshot")
        defer {
            for file in [path, copy] { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) } }
        }
        try body(client, team, path, copy)
    }

    @Test func aSnapshotIsAStoreFileWithoutTheLog() throws {
        try withSavedTeam { a, _, path, copy in
            let engine = try SQLiteDatasetEngine.create(at: path, schema: a.store.schemaDocument)
            let changeSets = try a.replica.changeSets(missingFrom: VersionVector())
            _ = try engine.apply(changeSets, pushedBy: try a.replica.credentials())

            // The log up to the snapshot's cursor holds the team's one change set.
            #expect(try engine.writeSnapshot(to: copy) == LogPosition(cursor: 1, digest: LogDigest.empty.appending(changeSets[0].dot)))
            #expect(try SQLiteConnection(path: copy).rows("SELECT 1 FROM sqlite_master WHERE name LIKE '\\_server%' ESCAPE '\\'").isEmpty)
            try SyncReplica.adoptSnapshot(at: copy)
            let adopted = try SyncReplica(store: try ObjectStore(path: copy, entities: syncEntities))
            #expect(try adopted.versionVector() == engine.versionVector())
            #expect(try TestReplica.digest(of: copy) == a.digest())
        }
    }

    @Test func aDatasetWhoseIdentifierColumnIsIDIsMigratedWhenOpened() throws {
        try withSavedTeam { a, team, path, copy in
            do {
                let engine = try SQLiteDatasetEngine.create(at: path, schema: a.store.schemaDocument)
                _ = try engine.apply(try a.replica.changeSets(missingFrom: VersionVector()), pushedBy: try a.replica.credentials())
            }
            // The layout of datasets stored when the identifier column was named `id`.
            let tables = a.store.schemaDocument.entities.map(\.table)
            do {
                let connection = try SQLiteConnection(path: path)
                for table in tables { try connection.execute(#"ALTER TABLE "\#(table)" RENAME COLUMN "_object_id" TO "id""#) }
            }

            let engine = try #require(try SQLiteDatasetEngine.open(at: path))
            let connection = try SQLiteConnection(path: path)
            for table in tables {
                let columns = try connection.rows("SELECT name FROM pragma_table_info(?)", [.text(table)]).compactMap { $0[0].textValue }
                #expect(columns.first == "_object_id" && !columns.contains("id"), "table \(table): \(columns)")
            }
            // The merge updates the rows it finds under the renamed column.
            team.name = "Wanderers"
            try a.context.save()
            _ = try engine.apply(try a.replica.changeSets(missingFrom: VersionVector()), pushedBy: try a.replica.credentials())
            let end = try engine.readLog(after: 0, limit: 5, excluding: nil)
            #expect(try engine.writeSnapshot(to: copy) == LogPosition(cursor: 2, digest: end.digest))
            try SyncReplica.adoptSnapshot(at: copy)
            #expect(try TestReplica.digest(of: copy) == a.digest())
        }
    }
}

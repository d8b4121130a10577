import Foundation
@testable import HTTPServer
import SyncKit
import TestSupport
import Testing

@testable import SyncServer

/// Pulls after a compacted log: `410 history_compacted` for a puller that cannot be shown to
/// have what was compacted after its cursor, the page from the compaction point for one that
/// can; and the compaction's metrics.
@Suite struct LogCompactionRouteTests {
    @Test(arguments: ServerStorage.allCases) func aPullFromBeforeTheCompactionPointIsGoneUnlessThePullerHasWhatWasCompacted(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        try server.registerSchema()
        let a = try ClientReplica(), b = try ClientReplica()
        for index in 0..<2 { try a.addBoard("a\(index)") }
        try b.addBoard("b0")
        server.push(try a.batch(), as: try a.credentials).expectOK()
        server.push(try b.batch(), as: try b.credentials).expectOK()

        // Compacted by another service on the same storage, as `syncd dataset compact` does.
        let compactorDirectory = try TemporaryDirectory(prefix: "syncd-compactor")
        var configuration = SyncServiceConfiguration(dataDirectory: storage == .sqlite ? server.directory : compactorDirectory.url)
        configuration.databaseURL = server.database?.url
        let stable = VersionVector([a.replica.replicaID: 2])
        configuration.stableVector = { _ in stable }
        let compactor = try SyncService(configuration: configuration)
        let report = try #require(try compactor.compactLog(of: "main"))
        #expect(report.entriesRemoved == 2 && report.logStart.cursor == 2)
        let metrics = compactor.metrics.exposition()
        #expect(metrics.contains("syncd_compaction_bytes_reclaimed_total{dataset=\"main\"} \(report.payloadBytesRemoved)"), "\(metrics)")
        #expect(metrics.contains("syncd_log_start_cursor{dataset=\"main\"} 2"), "\(metrics)")
        #expect(metrics.contains("syncd_compaction_file_bytes_freed_total{dataset=\"main\"} \(report.fileBytesFreed)"), "\(metrics)")
        #expect(metrics.contains("syncd_compaction_objects_forgotten_total{dataset=\"main\"} \(report.mergedState.forgottenObjects)"), "\(metrics)")

        // b never saw a's boards.
        let gone = server.pull(after: "0", exclude: b.replica.replicaID)
        #expect(gone.status == .gone && gone.errorCode == "history_compacted", "\(gone.text)")
        #expect(((gone.json["error"] as? [String: Any])?["logStart"] as? Int) == 2, "\(gone.text)")
        #expect(server.pull(after: "1").errorCode == "history_compacted")
        // a authored everything compacted: its page starts at the compaction point.
        let page = try PullRouteTests.page(server.pull(after: "0", exclude: a.replica.replicaID))
        #expect(page.changeSets.map(\.dot) == [Dot(replica: b.replica.replicaID, seq: 1)] && page.cursor == "3")
        // From the compaction point on, every puller is answered.
        #expect(try PullRouteTests.page(server.pull(after: "2")).changeSets.count == 1)
    }

    @Test(arguments: ServerStorage.allCases) func entriesEveryActiveReplicaPulledPastFoldIntoTheFloor(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        try server.registerSchema()
        let a = try ClientReplica(), b = try ClientReplica()
        for index in 0..<2 { try a.addBoard("a\(index)") }
        server.push(try a.batch(), as: try a.credentials).expectOK()
        try b.addBoard("b0")
        server.push(try b.batch(), as: try b.credentials).expectOK()
        // Compacted below the stable vector the registry computes, by another service on the same
        // storage, as `syncd dataset compact` does.
        let compactorDirectory = try TemporaryDirectory(prefix: "syncd-compactor")
        var configuration = SyncServiceConfiguration(dataDirectory: storage == .sqlite ? server.directory : compactorDirectory.url)
        configuration.databaseURL = server.database?.url
        configuration.stableVector = { try $0.stableVector() }
        let compactor = try SyncService(configuration: configuration)
        func compact() throws -> CompactionReport { try #require(try compactor.compactLog(of: "main")) }
        // a pulled to the end, b only to cursor 2: the floor stops there.
        _ = try PullRouteTests.page(server.pull(after: "3", exclude: a.replica.replicaID))
        let atTwo = try PullRouteTests.page(server.pull(limit: 2))
        #expect(server.pull(after: "2", exclude: b.replica.replicaID).status == .ok)
        let report = try compact()
        #expect(report.logStart.cursor == 3 && report.entriesRemoved == 3 && report.entriesFolded == 2, "\(report)")

        // At the floor the digest is still checked; below it the puller's vector decides.
        let wrong = LogDigest.empty.appending(Dot(replica: b.replica.replicaID, seq: 1)).description
        #expect(server.pull(after: "2", afterDigest: wrong, exclude: b.replica.replicaID).errorCode == "invalid_cursor")
        #expect(atTwo.cursor == "2")
        // a authored everything below the floor, but its latest change set had not seen b0.
        #expect(server.pull(after: "1", afterDigest: wrong, exclude: a.replica.replicaID).errorCode == "history_compacted")
        #expect(server.pull(after: "0").errorCode == "history_compacted")

        // b pulls to the end (and then polls from there): the next compaction folds the rest, removing no entry.
        #expect(try PullRouteTests.page(server.pull(after: "2", exclude: b.replica.replicaID)).cursor == "3")
        #expect(try PullRouteTests.page(server.pull(after: "3", exclude: b.replica.replicaID)).changeSets.isEmpty)
        let again = try compact()
        #expect(again.entriesRemoved == 0 && again.entriesFolded == 1 && again.logStart == report.logStart, "\(again)")
        let metrics = compactor.metrics.exposition()
        #expect(metrics.contains("syncd_compaction_entries_folded_total{dataset=\"main\"} 3"), "\(metrics)")
        try a.addBoard("a2")
        server.push(try a.batch(missingFrom: try server.serverVector()), as: try a.credentials).expectOK()
        #expect(try PullRouteTests.page(server.pull(after: "3", exclude: b.replica.replicaID)).changeSets.map(\.dot)
                == [Dot(replica: a.replica.replicaID, seq: 3)])
        // The shared log keeps no row of a1, only rows of each replica's latest change set below
        // the floor: a new instance still restores the base and replays the tail.
        if storage == .postgreSQL {
            // The compacting instance's cache keeps no per-entry record: its pulls read the shared log.
            let cache = try SQLiteConnection(path: compactorDirectory.url.appendingPathComponent("datasets/main/cache.sqlite").path)
            #expect(try cache.rows("SELECT count(*) FROM _server_log_compacted").first?.first == .integer(0))
            let fresh = try ServerFixture(sharingDatabaseWith: server)
            #expect(try ServerFixture.entityRows(at: fresh.snapshotFile()) == ServerFixture.entityRows(at: server.snapshotFile()))
            #expect(try PullRouteTests.page(fresh.pull(after: "3", exclude: b.replica.replicaID)).changeSets.count == 1)
        }
    }

    /// A new instance on a compacted PostgreSQL dataset restores the base and replays the tail:
    /// its snapshot equals the snapshot of an instance that never lost its cache.
    @Test func aNewPostgreSQLInstanceRestoresTheBaseAndReplaysTheTail() throws {
        let server = try ServerFixture(storage: .postgreSQL)
        try server.registerSchema()
        let a = try ClientReplica(), b = try ClientReplica()
        try a.addBoard("a0", cards: 2)
        server.push(try a.batch(), as: try a.credentials).expectOK()
        try b.addBoard("b0", cards: 1)
        server.push(try b.batch(), as: try b.credentials).expectOK()
        let stable = try server.serverVector()
        let report = try #require(try server.service.registry.dataset("main").compactLog(stableVector: { _ in stable }))
        #expect(report.logStart.cursor == 2 && report.changeSetsRemoved == 0 && report.changeSetsKept == 2, "\(report)")

        try a.addBoard("a1")
        server.push(try a.batch(missingFrom: stable), as: try a.credentials).expectOK()
        let compacted = try #require(try server.service.registry.dataset("main").compactLog(stableVector: { _ in
            VersionVector([a.replica.replicaID: 2, b.replica.replicaID: 1]) }))
        // a's first change set left the shared log; its second is a's latest and stays.
        #expect(compacted.logStart.cursor == 3 && compacted.changeSetsRemoved == 1 && compacted.payloadBytesRemoved > 0, "\(compacted)")

        let fresh = try ServerFixture(sharingDatabaseWith: server)
        #expect(try ServerFixture.entityRows(at: fresh.snapshotFile()) == ServerFixture.entityRows(at: server.snapshotFile()))
        try b.addBoard("b1")
        fresh.push(try b.batch(missingFrom: VersionVector([a.replica.replicaID: 2, b.replica.replicaID: 1])), as: try b.credentials).expectOK()
        #expect(try ServerFixture.entityRows(at: fresh.snapshotFile()) == ServerFixture.entityRows(at: server.snapshotFile()))
        #expect(fresh.pull(after: "0", exclude: b.replica.replicaID).errorCode == "history_compacted")
        #expect(try PullRouteTests.page(fresh.pull(after: "3")).changeSets.count == 1)
        // A re-push of everything, compacted change sets included, is already applied.
        let again = fresh.push(try a.batch(), as: try a.credentials)
        #expect(again.status == .ok && (again.json["alreadyApplied"] as? [Any])?.count == 2, "\(again.text)")
    }

    /// A schema that renames needs every change set merged again: once the log was compacted the
    /// server refuses it before touching the store, and the dataset goes on as it was.
    @Test(arguments: ServerStorage.allCases) func aRenamingSchemaIsRefusedOnceTheLogWasCompacted(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        let client = try ClientReplica()
        let older = try SchemaDocument(jsonData: try client.store.exportSchema())
        try server.registerSchema(try older.jsonData())
        for index in 0..<2 { try client.addBoard("b\(index)") }
        server.push(try client.batch(), as: try client.credentials).expectOK()
        let stable = VersionVector([client.replica.replicaID: 2])
        #expect(try server.service.registry.dataset("main").compactLog(stableVector: { _ in stable })?.changeSetsRemoved == 1)

        let refused = server.send(.put, "/v1/datasets/main/schema", body: try renamingCardText(older))
        #expect(refused.status == .conflict && refused.errorCode == "schema_incompatible", "\(refused.text)")
        #expect(refused.errorMessage.contains("compacted up to cursor 2"), "\(refused.text)")
        #expect(try SchemaDocument(jsonData: server.send(.get, "/v1/datasets/main/schema").body).versionHash == older.versionHash)
        try client.addBoard("b2")
        server.push(try client.batch(missingFrom: stable), as: try client.credentials).expectOK()
        #expect(try PullRouteTests.page(server.pull(after: "2")).changeSets.count == 1)
    }
}

import Foundation
@testable import HTTPServer
import SyncKit
import TestSupport
import Testing

@testable import SyncServer

/// Several instances on one PostgreSQL database (in process, each with its own data directory
/// for its cache): they serve the same datasets, schemas and tokens, and their log never lets a
/// pull skip a change set, whichever instance stored it.
@Suite struct SharedStorageTests {
    @Test func aSecondInstanceServesWhatTheFirstStored() throws {
        let first = try ServerFixture(storage: .postgreSQL)
        let second = try ServerFixture(sharingDatabaseWith: first)
        #expect(second.send(.get, "/v1/datasets/main/schema").status == .notFound)
        try first.registerSchema()
        #expect(second.send(.get, "/v1/datasets/main/schema").status == .ok)

        let client = try ClientReplica()
        try client.addBoard("shared", cards: 2)
        let batch = try client.batch()
        first.push(batch, as: try client.credentials).expectOK()
        let page = try PullRouteTests.page(second.pull(after: "0"))
        #expect(page.changeSets.map(\.dot) == [Dot(replica: client.replica.replicaID, seq: 1)])
        #expect(try ServerFixture.entityRows(at: second.snapshotFile()) == ServerFixture.entityRows(at: first.snapshotFile()))
        #expect(try second.serverVector() == first.serverVector())

        // The same batch again through the other instance is idempotent; other contents under
        // the same dot are refused there too.
        let again = second.push(batch, as: try client.credentials)
        again.expectOK()
        #expect((again.json["alreadyApplied"] as? [Any])?.count == 1)
        let forger = try ClientReplica()
        try forger.addBoard("forged")
        #expect(second.push(try forger.batch(), as: try client.credentials).status != .ok)
        #expect(try PullRouteTests.page(first.pull(after: "0")).changeSets.count == 1)
    }

    @Test func aSchemaRegisteredOnOneInstanceIsUsedByPushesToTheOther() throws {
        let first = try ServerFixture(storage: .postgreSQL)
        let second = try ServerFixture(sharingDatabaseWith: first)
        let document = try SchemaDocument(jsonData: try ClientReplica().store.exportSchema())
        try first.registerSchema(try document.jsonData())
        let client = try ClientReplica()
        try client.addBoard("before")
        second.push(try client.batch(), as: try client.credentials).expectOK()

        let changed = try rehashed(try addingCardColor(to: document))
        try first.registerSchema(changed)
        let newHash = try SchemaDocument(jsonData: changed).versionHash
        #expect(try SchemaDocument(jsonData: second.send(.get, "/v1/datasets/main/schema").body).versionHash == newHash)
        try client.addBoard("after")
        second.push(try client.batch(missingFrom: try second.serverVector()), as: try client.credentials).expectOK()
        #expect(try ServerFixture.entityRows(at: first.snapshotFile()) == ServerFixture.entityRows(at: second.snapshotFile()))
    }

    @Test func aTokenRevokedThroughOneInstanceStopsWorkingOnTheOther() throws {
        let first = try ServerFixture(storage: .postgreSQL)
        let second = try ServerFixture(sharingDatabaseWith: first)
        try first.registerSchema()
        #expect(second.pull(after: "0").status == .ok)
        #expect(try first.service.tokens.revoke(hashPrefix: String(TokenStore.hash(first.token).prefix(16))) == 1)
        #expect(first.pull(after: "0").status == .unauthorized)
        let refused = waitUntil(timeout: 5) { second.pull(after: "0").status == .unauthorized }
        #expect(refused)
    }

    /// Writers push to both instances at once while a reader pages through the log on one of
    /// them with a small limit: the reader ends with every change set exactly once, in the
    /// order of the log, with no cursor skipped, and both instances end with the same state.
    @Test func concurrentPushesToTwoInstancesAreReadWithoutGapsOrDuplicates() throws {
        let first = try ServerFixture(storage: .postgreSQL)
        let second = try ServerFixture(sharingDatabaseWith: first)
        try first.registerSchema()
        let writers = 4, pushesPerWriter = 12
        let clients = try (0..<writers).map { _ in try ClientReplica() }
        let failures = Collector<String>(), finished = Collector<Int>(), read = Collector<Dot>()
        for (index, client) in clients.enumerated() {
            let target = index % 2 == 0 ? first : second
            let credentials = try client.credentials
            let boards = try (0..<pushesPerWriter).map { number in
                try client.addBoard("writer \(index) board \(number)")
                return try ChangeSetCoding.encode(try client.replica.changeSets(missingFrom: VersionVector([client.replica.replicaID: UInt64(number)])),
                                                  base: VersionVector())
            }
            Thread {
                for body in boards {
                    let response = target.push(body, as: credentials)
                    if response.status != .ok { failures.append("writer \(index): \(response.status) \(response.text)") }
                }
                finished.append(index)
            }.start()
        }
        // The reader follows the log with pages of 3 until every writer finished and it is at the end.
        var cursor = "0"
        var reachedEnd = false
        while !reachedEnd {
            let writersDone = finished.values.count == writers
            let page = try PullRouteTests.page(second.pull(after: cursor, limit: 3))
            for changeSet in page.changeSets { read.append(changeSet.dot) }
            cursor = page.cursor
            reachedEnd = writersDone && !page.more && page.changeSets.isEmpty
        }
        #expect(failures.values.isEmpty, "\(failures.values)")
        let dots = read.values
        #expect(dots.count == writers * pushesPerWriter)
        #expect(Set(dots).count == dots.count)
        #expect(cursor == String(writers * pushesPerWriter))
        let whole = try PullRouteTests.page(first.pull(after: "0", limit: 1000))
        #expect(whole.changeSets.map(\.dot) == dots)
        #expect(try ServerFixture.entityRows(at: first.snapshotFile()) == ServerFixture.entityRows(at: second.snapshotFile()))
    }

    @Test func anInstanceWithANewDataDirectoryRebuildsItsCacheFromTheLog() throws {
        let (first, _, _) = try PullRouteTests.populated(storage: .postgreSQL)
        let fresh = try ServerFixture(sharingDatabaseWith: first)
        let snapshot = fresh.send(.get, "/v1/datasets/main/snapshot")
        #expect(snapshot.status == .ok)
        #expect(snapshot.headers["Sync-Cursor"] == "5")
        #expect(try ServerFixture.entityRows(at: fresh.snapshotFile()) == ServerFixture.entityRows(at: first.snapshotFile()))
    }
}

// @unchecked: a fixture's stored properties are constants, and its service is thread-safe; the
// concurrency test pushes through fixtures from several threads.
extension ServerFixture: @unchecked Sendable {}

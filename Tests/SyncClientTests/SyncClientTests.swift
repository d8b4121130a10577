import Foundation
import Synchronization
import Testing
import SyncKit

/// The HTTP client against `FakeSyncServer`, a protocol-v1 stub on a real loopback HTTP server.
@Suite(.serialized) struct SyncClientTests {
    @Test(arguments: RequestPath.allCases) func pushThenPullMovesChangeSetsBetweenReplicas(through path: RequestPath) async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica(), b = try ClientReplica()
        try a.addNotes(3)
        let clientA = a.client(server, through: path), clientB = b.client(server, through: path)
        #expect(clientA.status.pendingCount == 3)

        let pushed = try await clientA.sync()
        #expect(pushed.registeredSchema)
        #expect(pushed.pushed == 3)
        #expect(pushed.pendingAfter == 0)
        #expect(pushed.pulled == 0)
        #expect(try a.replica.localChangeSets(status: .acknowledged).count == 3)
        #expect(server.logCount == 3)

        let pulled = try await clientB.sync()
        #expect(pulled.pulled == 3)
        #expect(pulled.changedObjectIDs.count == 3)
        #expect(pulled.cursor == "3")
        #expect(try b.noteTitles() == ["note 0", "note 1", "note 2"])
        #expect(try b.replica.versionVector() == a.replica.versionVector())

        // The first sync registered the schema, pushed, then pulled excluding its own change sets.
        let first = server.requests.prefix(3).map { "\($0.method) \($0.path.split(separator: "/").last!)" }
        #expect(first == ["PUT schema", "POST changesets", "GET changesets"])
        let pull = try #require(server.requests(GET, "changesets").first)
        #expect(pull.query["after"] == "0")
        #expect(pull.query["exclude"] == a.replica.replicaID.uuidString)
        #expect(pull.authorization == "Bearer secret")

        // Nothing new: no schema registration, no push request, an empty pull.
        let count = server.requests.count
        let again = try await clientA.sync()
        #expect(again.pushed == 0 && again.pulled == 0 && !again.registeredSchema)
        #expect(server.requests.count == count + 1)

        // An attribute-only update counts as a changed object, so contexts refresh it.
        let reader = try b.store.makeContext()
        let seen = try #require(try reader.fetchAll(Note.self).first { $0.title == "note 1" })
        let original = try #require(try a.context.object(Note.self, id: seen.objectID))
        original.count = 42
        try a.context.save()
        try await clientA.sync()
        let update = try await clientB.sync()
        #expect(update.changedObjectIDs == [seen.objectID])
        try reader.refresh(objectIDs: update.changedObjectIDs)
        #expect(seen.count == 42)

        // b's edit travels back to a.
        try b.addNotes(1, prefix: "from b")
        try await clientB.sync()
        let back = try await clientA.sync()
        #expect(back.pulled == 1)
        #expect(try a.noteTitles() == ["from b 0", "note 0", "note 1", "note 2"])
    }

    @Test func pushesInBatchesAndPullsPageByPage() async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica(), b = try ClientReplica()
        try a.addNotes(5)
        let pushReport = try await a.client(server) { $0.pushBatchSize = 2 }.push()
        #expect(pushReport.pushBatches == 3)
        #expect(pushReport.pushed == 5)
        #expect(server.requests(GET, "changesets").isEmpty, "push alone does not pull")

        let report = try await b.client(server) { $0.pullPageSize = 2 }.pull()
        #expect(report.pages == 3)
        #expect(report.pulled == 5)
        #expect(server.requests(GET, "changesets").map { $0.query["after"] } == ["0", "2", "4"])
        #expect(try SyncClient.StoredState.read(from: b.replica).cursor == "5")
    }

    @Test(arguments: RequestPath.allCases) func droppedConnectionResumesFromTheLastAppliedPage(through path: RequestPath) async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica(), b = try ClientReplica()
        try a.addNotes(5)
        try await a.client(server, through: path).push()

        // The server dies while answering the second page.
        server.inject(GET, "changesets", query: "after=2", .dropConnection)
        let clientB = b.client(server, through: path, backoff: Backoff(initial: .milliseconds(10), maxAttempts: 2, jitter: { 0 })) { $0.pullPageSize = 2 }
        await #expect {
            try await clientB.pull()
        } throws: { error in
            guard case .network = error as? SyncClientError else { return false }
            return true
        }
        // The first page was applied and its cursor kept.
        #expect(try SyncClient.StoredState.read(from: b.replica).cursor == "2")
        #expect(try b.noteTitles() == ["note 0", "note 1"])
        if case .network? = clientB.status.lastError {} else { Issue.record("status shows \(String(describing: clientB.status.lastError))") }

        // Back up: the next pull asks for what follows the saved cursor.
        server.stop()
        let pullsBefore = server.requests(GET, "changesets").count
        try server.start()
        let resumed = try await clientB.pull()
        #expect(server.requests(GET, "changesets").dropFirst(pullsBefore).first?.query["after"] == "2")
        #expect(resumed.pulled == 3)
        #expect(try b.noteTitles() == (0..<5).map { "note \($0)" })
        #expect(clientB.status.lastError == nil)
    }

    @Test(arguments: RequestPath.allCases) func retriesServerErrorsWithBackoffThenSucceeds(through path: RequestPath) async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica()
        try a.addNotes(1)
        server.inject(POST, "changesets", .error(status: 503, code: "unavailable", message: "try later"), times: 2)
        let sleeper = Sleeper()
        let report = try await a.client(server, through: path, sleeper: sleeper).sync()
        #expect(report.pushed == 1)
        #expect(server.requests(POST, "changesets").count == 3)
        // Equal jitter with the source fixed at 0.5: 3/4 of 100 ms, then of 200 ms.
        #expect(sleeper.recorded == [.milliseconds(75), .milliseconds(150)])
    }

    @Test func serverErrorsThatPersistSurfaceAfterTheLastAttempt() async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica()
        server.inject(PUT, "schema", .error(status: 500, code: "internal", message: "disk full"), times: 3)
        let sleeper = Sleeper()
        await #expect(throws: SyncClientError.server(code: "internal", message: "disk full", status: 500)) {
            try await a.client(server, sleeper: sleeper).sync()
        }
        #expect(sleeper.recorded.count == 2)
        #expect(server.requests(PUT, "schema").count == 3)
    }

    @Test(arguments: RequestPath.allCases) func pushIsMarkedSentBeforeSendingAndIdempotentOnRetry(through path: RequestPath) async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica()
        try a.addNotes(2)
        let sentDuringRequest = Mutex(-1)
        let replica = a.replica
        // The server stores the batch but the answer is lost (a 502 from a proxy, say).
        server.inject(POST, "changesets", .handleThenFail(status: 502), observe: {
            sentDuringRequest.withLock { $0 = (try? replica.localChangeSets(status: .sent).count) ?? -1 }
        })
        let report = try await a.client(server, through: path).sync()
        #expect(sentDuringRequest.withLock { $0 } == 2)
        #expect(report.pushed == 0)
        #expect(report.alreadyOnServer == 2)
        #expect(server.logCount == 2)
        #expect(try a.replica.unacknowledgedCount() == 0)
    }

    @Test(arguments: RequestPath.allCases) func refusalsMapToTypedErrorsWithoutRetry(through path: RequestPath) async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica()
        try a.addNotes(1)
        let sleeper = Sleeper()

        await #expect(throws: SyncClientError.unauthorized("missing or invalid bearer token")) {
            try await a.client(server, through: path, token: "wrong", sleeper: sleeper).sync()
        }
        #expect(server.requests.count == 1)

        server.state.withLock { $0.incompatibility = "entity Note: attribute title changed type from string to integer" }
        await #expect(throws: SyncClientError.schemaIncompatible("entity Note: attribute title changed type from string to integer")) {
            try await a.client(server, through: path, sleeper: sleeper).sync()
        }
        server.state.withLock { $0.incompatibility = nil }

        server.inject(POST, "changesets", .error(status: 403, code: "forbidden", message: "the token belongs to another dataset"))
        await #expect(throws: SyncClientError.forbidden("the token belongs to another dataset")) {
            try await a.client(server, through: path, sleeper: sleeper).sync()
        }
        server.inject(POST, "changesets", .error(status: 409, code: "causality_violation", message: "missing X:1...2"))
        await #expect(throws: SyncClientError.causality("missing X:1...2")) {
            try await a.client(server, through: path, sleeper: sleeper).sync()
        }
        server.inject(POST, "changesets", .error(status: 422, code: "clock_skew", message: "HLC is 400 s ahead", extra: ["serverTime": "1700000000000"]))
        await #expect(throws: SyncClientError.clockSkew(serverTime: Date(timeIntervalSince1970: 1_700_000_000), message: "HLC is 400 s ahead")) {
            try await a.client(server, through: path, sleeper: sleeper).sync()
        }
        server.inject(POST, "changesets", .error(status: 422, code: "schema_mismatch", message: "no entity Nope"))
        await #expect(throws: SyncClientError.schemaMismatch("no entity Nope")) {
            try await a.client(server, through: path, sleeper: sleeper).sync()
        }
        server.inject(GET, "changesets", .error(status: 400, code: "bad_request", message: "what"))
        await #expect(throws: SyncClientError.server(code: "bad_request", message: "what", status: 400)) {
            try await a.client(server, through: path, sleeper: sleeper).pull()
        }
        #expect(sleeper.recorded.isEmpty, "4xx are never retried")
        #expect(server.requests(POST, "changesets").count == 4)
        // Every refusal left the change set pending (sent, not acknowledged) for the next sync.
        #expect(try a.replica.unacknowledgedCount() == 1)
        #expect(try await a.client(server, through: path).sync().pushed == 1)
    }

    @Test(arguments: RequestPath.allCases) func unreachableServerIsANetworkError(through path: RequestPath) async throws {
        let server = FakeSyncServer()
        try server.start()
        server.stop()
        let a = try ClientReplica()
        try a.addNotes(1)
        let sleeper = Sleeper()
        let client = a.client(server, through: path, sleeper: sleeper)
        await #expect {
            try await client.sync()
        } throws: { error in
            guard case .network = error as? SyncClientError else { return false }
            return true
        }
        #expect(sleeper.recorded.count == 2)
        #expect(client.status.pendingCount == 1)
        #expect(client.status.lastSuccessfulSync == nil)
    }

    @Test func registersTheSchemaOnceAndAgainWhenTheServerForgetsIt() async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica()
        let client = a.client(server)
        #expect(try await client.sync().registeredSchema)
        #expect(try await !client.sync().registeredSchema)
        #expect(server.requests(PUT, "schema").count == 1)
        #expect(try SyncClient.StoredState.read(from: a.replica).registeredSchemaHash == a.store.schemaDocument.versionHash)

        // The server's data was reset: it answers 404 schema_not_registered, the client registers again.
        server.state.withLock { $0.schemaHash = nil }
        try a.addNotes(1)
        let report = try await client.sync()
        #expect(report.registeredSchema)
        #expect(report.pushed == 1)
        #expect(server.requests(PUT, "schema").count == 2)
    }

    @Test func unknownCursorRestartsFromTheBeginning() async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica(), b = try ClientReplica()
        try a.addNotes(2)
        try await a.client(server).push()
        try b.replica.setSetting("sync.cursor", "99")
        try b.replica.setSetting("sync.cursorSource", server.url.absoluteString + " " + server.dataset)
        let report = try await b.client(server).pull()
        #expect(report.pulled == 2)
        #expect(server.requests(GET, "changesets").map { $0.query["after"] } == ["99", "0"])
    }

    /// A page holding a value its column does not hold (a server that stored it unchecked) is
    /// refused whole: nothing of it is stored, the cursor stays, and the error names the value.
    @Test func aPulledValueThatDoesNotFitItsColumnIsRefusedAndNothingIsStored() async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica(), b = try ClientReplica()
        try a.addNotes(1)
        try await a.client(server).push()
        let author = UUID(), note = UUID()
        let bad = ChangeSet(
            dot: Dot(replica: author, seq: 1), hlc: HLC(milliseconds: 1_700_000_000_000, counter: 0), vector: VersionVector([author: 1]),
            operations: [.create(entity: "Note", id: note), .set(entity: "Note", id: note, attribute: "title", values: [.text("x")]),
                         .set(entity: "Note", id: note, attribute: "count", values: [.text("not a number")])])
        server.state.withLock { state in
            state.log.append((state.nextCursor, bad))
            state.nextCursor += 1
        }
        await #expect(throws: SyncClientError.schemaMismatch(
            "change set \(bad.dot), operation 2: sets Note.count of \(note.uuidString) to text 'not a number', but it holds an integer")) {
            try await b.client(server).pull()
        }
        #expect(try b.noteTitles().isEmpty)
        #expect(try b.replica.versionVector() == VersionVector())
        // The page was not taken: the cursor is still at the start of the log.
        #expect(try b.replica.setting("sync.cursor").flatMap { Int($0) } ?? 0 == 0)
    }

    @Test func oversizedBatchesAreSplit() async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica()
        try a.addNotes(4)
        server.inject(POST, "changesets", .error(status: 413, code: "payload_too_large", message: "too big"))
        let report = try await a.client(server).push()
        #expect(report.pushed == 4)
        #expect(server.requests(POST, "changesets").map { try! ChangeSetCoding.decode($0.body).changeSets.count } == [4, 2, 2])
    }

    @Test func serverThatLostChangeSetsGetsThemAgain() async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica()
        try a.addNotes(3)
        let client = a.client(server)
        try await client.sync()
        server.forgetNewest(2)
        try a.addNotes(1, prefix: "late")
        // seq 4 needs seqs 2 and 3, which the server lost: 409 with its vector, then a resend from it.
        let report = try await client.sync()
        #expect(report.pushed == 3)
        #expect(server.logCount == 4)
        #expect(server.state.withLock { $0.vector[a.replica.replicaID] } == 4)
        #expect(try a.replica.unacknowledgedCount() == 0)
    }

    @Test func newStoreFromASnapshotPullsOnlyWhatFollows() async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica()
        try a.addNotes(3)
        try await a.client(server).push()
        // The server's copy of the dataset: a replica that applied the log, copied with VACUUM INTO.
        let serverCopy = try ClientReplica()
        _ = try serverCopy.replica.apply(try a.replica.changeSets(missingFrom: VersionVector()))
        let snapshotPath = FileManager.default.temporaryDirectory.appendingPathComponent("snapshot-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: snapshotPath) }
        try SQLiteConnection(path: serverCopy.path).execute("VACUUM INTO '\(snapshotPath)'")
        let digest = String(repeating: "5c", count: 16)
        server.state.withLock { $0.snapshot = (try? Data(contentsOf: URL(fileURLWithPath: snapshotPath)), "3", digest) }

        let path = FileManager.default.temporaryDirectory.appendingPathComponent("from-snapshot-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let configuration = SyncClient.Configuration(serverURL: server.url, dataset: server.dataset, token: server.token)
        let snapshot = try await SyncClient.createStoreFromSnapshot(at: path, configuration: configuration)
        #expect(snapshot.cursor == "3" && snapshot.cursorDigest == digest)

        let store = try ObjectStore(path: path, entities: clientEntities)
        let replica = try SyncReplica(store: store)
        #expect(replica.replicaID != serverCopy.replica.replicaID)
        #expect(try replica.versionVector() == a.replica.versionVector())
        #expect(try SyncClient.Configuration.stored(in: replica)?.dataset == server.dataset)
        let client = SyncClient(replica: replica, configuration: configuration)
        try a.addNotes(1, prefix: "after")
        try await a.client(server).push()
        let report = try await client.sync()
        #expect(!report.registeredSchema)
        #expect(report.pulled == 1)
        // The first pull sends the snapshot's digest with its cursor.
        let firstPull = server.requests(GET, "changesets").last?.query
        #expect(firstPull?["after"] == "3" && firstPull?["afterDigest"] == digest)
        #expect(try store.makeContext().fetchAll(Note.self).count == 4)

        await #expect(throws: SyncClientError.self) {
            try await SyncClient.createStoreFromSnapshot(at: path, configuration: configuration)
        }
    }

    @Test func statusStreamFollowsASync() async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica()
        try a.addNotes(2)
        let client = a.client(server)
        let updates = client.statusUpdates()
        let collector = Task {
            var seen: [SyncStatus] = []
            for await status in updates {
                seen.append(status)
                if !status.isSyncing && status.lastSuccessfulSync != nil { break }
            }
            return seen
        }
        try await client.sync()
        let seen = await collector.value
        #expect(seen.first == SyncStatus(pendingCount: 2))
        #expect(seen.contains { $0.isSyncing })
        let last = try #require(seen.last)
        #expect(!last.isSyncing && last.pendingCount == 0 && last.lastError == nil && last.lastReport?.pushed == 2)
        #expect(client.status == last)

        // A failure shows as lastError and keeps the last success date.
        server.stop()
        try a.addNotes(1)
        client.refreshStatus()
        #expect(client.status.pendingCount == 1)
        _ = try? await client.sync()
        #expect(client.status.lastError != nil)
        #expect(client.status.lastSuccessfulSync == last.lastSuccessfulSync)
        #expect(!client.status.isSyncing)
    }

    @Test func periodicSyncRunsUntilStopped() async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica()
        let client = a.client(server, sleeper: Sleeper(real: true))
        client.startPeriodicSync(every: .milliseconds(20))
        let deadline = ContinuousClock.now + .seconds(20)
        while server.requests(GET, "changesets").count < 3 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        client.stop()
        #expect(server.requests(GET, "changesets").count >= 3)
        try await Task.sleep(for: .milliseconds(200))
        let settled = server.requests.count
        try await Task.sleep(for: .milliseconds(200))
        #expect(server.requests.count == settled)
    }

    @Test func concurrentSyncsDoNotOverlap() async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica()
        try a.addNotes(3)
        let client = a.client(server) { $0.pushBatchSize = 1 }
        async let first = client.sync()
        async let second = client.sync()
        let reports = try await [first, second]
        #expect(reports.map(\.pushed).reduce(0, +) == 3)
        #expect(server.requests(POST, "changesets").count == 3, "no change set was sent twice")
    }
}

let GET = "GET", POST = "POST", PUT = "PUT"

@Suite struct BackoffTests {
    @Test func growsExponentiallyUpToTheCapWithEqualJitter() {
        let low = Backoff(initial: .milliseconds(100), maximum: .seconds(1), multiplier: 2, maxAttempts: 10, jitter: { 0 })
        #expect((1...6).map(low.delay(beforeRetry:)) == [50, 100, 200, 400, 500, 500].map(Duration.milliseconds))
        let high = Backoff(initial: .milliseconds(100), maximum: .seconds(1), multiplier: 2, maxAttempts: 10, jitter: { 1 })
        #expect((1...6).map(high.delay(beforeRetry:)) == [100, 200, 400, 800, 1000, 1000].map(Duration.milliseconds))
    }
}

@Suite struct HTTPTransportTests {
    @Test func errorBodiesMapToCases() {
        func body(_ code: String, _ extra: String = "") -> Data { Data(#"{"error":{"code":"\#(code)","message":"m"\#(extra)}}"#.utf8) }
        #expect(HTTPTransport.error(status: 401, body: body("unauthorized")) == .unauthorized("m"))
        #expect(HTTPTransport.error(status: 404, body: body("schema_not_registered")) == .schemaNotRegistered("m"))
        #expect(HTTPTransport.error(status: 400, body: body("invalid_cursor")) == .invalidCursor("m"))
        #expect(HTTPTransport.error(status: 413, body: body("payload_too_large")) == .payloadTooLarge("m"))
        #expect(HTTPTransport.error(status: 422, body: body("clock_skew", #","serverTime":1500"#)) == .clockSkew(serverTime: Date(timeIntervalSince1970: 1.5), message: "m"))
        #expect(HTTPTransport.error(status: 502, body: Data("<html>Bad Gateway</html>".utf8)) == .server(code: "http_502", message: "<html>Bad Gateway</html>", status: 502))
        #expect(HTTPTransport.error(status: 503, body: Data()).isTransient)
        #expect(!HTTPTransport.error(status: 409, body: body("schema_incompatible")).isTransient)
    }

    @Test func datasetNames() {
        #expect(HTTPTransport.isValidDatasetName("todo-list_1.v2"))
        #expect(!HTTPTransport.isValidDatasetName(".hidden"))
        #expect(!HTTPTransport.isValidDatasetName(""))
        #expect(!HTTPTransport.isValidDatasetName("a/b"))
        #expect(!HTTPTransport.isValidDatasetName(String(repeating: "x", count: 65)))
    }
}

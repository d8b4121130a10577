import Codecs
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport
import Testing

/// One save larger than syncd's body limit (lowered to 16 KiB so the test runs fast) through two
/// real `syncd` processes on one PostgreSQL database: its upload starts through the first, which
/// is then killed, and is resumed, finished and committed through the second; another client
/// pulls it by reference, with parts staged by one instance served by the other. Nothing is
/// lost or duplicated.
@Suite(.serialized) struct SharedLargeChangeSetEndToEndTests {
    static let squads = 2_000
    /// The two instances, their data directories' parent, the dataset and its token.
    let shared: (TemporaryDirectory, dataset: String, token: String, SyncdServer, SyncdServer)
    var directory: TemporaryDirectory { shared.0 }
    var first: SyncdServer { shared.3 }
    var second: SyncdServer { shared.4 }

    init() throws {
        shared = try SharedPostgreSQLEndToEndTests.startInstances(named: "large", extraArguments: ["--max-body-bytes", "16384"])
    }

    func configuration(_ server: SyncdServer) -> SyncClient.Configuration {
        var configuration = SyncClient.Configuration(serverURL: URL(string: server.url)!, dataset: shared.dataset, token: shared.token)
        configuration.backoff = Backoff(initial: .milliseconds(50), maximum: .milliseconds(400), multiplier: 2, maxAttempts: 4, jitter: { 0.5 })
        configuration.largeChangeSetBytes = 16_384
        return configuration
    }

    func transport(_ server: SyncdServer) -> HTTPTransport {
        HTTPTransport(serverURL: URL(string: server.url)!, dataset: shared.dataset, token: shared.token, session: URLSession(configuration: .ephemeral))
    }

    /// Lines of `server`'s log whose request matches `method`, a path containing `fragment` and `status`.
    func requests(_ server: SyncdServer, _ method: String, _ fragment: String, status: String) -> Int {
        server.logLines.filter { line in
            let fields = line.split(separator: " ")
            return fields.count >= 5 && fields[2] == method && fields[3].contains(fragment) && fields[4] == status
        }.count
    }

    @Test func anUploadStartedThroughOneInstanceIsCommittedThroughTheOtherAndPulledByReference() async throws {
        // The reader's first sync registers the schema.
        let readerPath = directory.file("reader.sqlite")
        let readerReplica = try SyncReplica(store: try ObjectStore(path: readerPath, entities: endToEndEntities))
        let reader = SyncClient(replica: readerReplica, configuration: configuration(first))
        _ = try await reader.sync()

        let writerPath = directory.file("writer.sqlite")
        let writerStore = try ObjectStore(path: writerPath, entities: endToEndEntities)
        let writer = try SyncReplica(store: writerStore)
        let context = try writerStore.makeContext()
        LargeChangeSetEndToEndTests.insertSquads(Self.squads, into: context)
        try context.save()

        // The first half of the parts goes to the first instance, as a client stopped mid-upload
        // leaves it (the upload's ID saved where the client resumes it from)...
        let body = try HTTPTransport.encodeBatch(try writer.changeSets(missingFrom: VersionVector()), base: VersionVector())
        let sha256 = LowercaseHex.encode(SHA256.hash(body))
        let declaration = JSONValue.object(["totalBytes": .integer(Int64(body.count)), "sha256": .string(sha256)]).data
        let created = try await transport(first).sendDetailed("POST", path: "uploads", body: declaration).data
        let upload = try #require(try JSONSerialization.jsonObject(with: created) as? [String: Any])
        let id = try #require(upload["upload"] as? String)
        let partBytes = try #require(upload["maxPartBytes"] as? Int)
        let partCount = (body.count + partBytes - 1) / partBytes
        #expect(partCount >= 10, "the change set spans many parts (\(body.count) bytes)")
        try writer.setSetting(SyncClient.SettingKey.upload, "\(id) \(sha256)")
        for number in 1...(partCount / 2) {
            let part = body.subdata(in: (number - 1) * partBytes..<min(body.count, number * partBytes))
            _ = try await transport(first).sendDetailed("PUT", path: "uploads/\(id)/parts/\(number)", body: part,
                                                        headers: ["Sync-Part-SHA256": LowercaseHex.encode(SHA256.hash(part))])
        }
        // ...which then dies; the client resumes through the second.
        #expect(first.stop(signal: SIGKILL))
        let report = try await SyncClient(replica: writer, configuration: configuration(second)).sync()
        #expect(report.pushed == 1)
        #expect(try writer.unacknowledgedCount() == 0)
        #expect(requests(second, "POST", "/uploads", status: "201") == 0)
        #expect(requests(second, "GET", "/uploads/\(id)", status: "200") == 1)
        #expect(requests(second, "PUT", "/uploads/\(id)/parts/", status: "200") == partCount - partCount / 2)
        #expect(requests(second, "POST", "/uploads/\(id)/commit", status: "200") == 1)

        // The reader pulls it through the restarted first instance, by reference.
        try first.start(port: first.port)
        let pulled = try await reader.sync()
        #expect(pulled.pulled == 1)
        #expect(requests(first, "GET", "/changesets/1/parts/", status: "200") >= 2)
        #expect(try readerReplica.records("Squad").count == Self.squads)
        #expect(try storeDigest(readerPath) == storeDigest(writerPath))

        // A page handed out by the second instance, its parts fetched from the first.
        let page = try await transport(second).pull(after: "0", limit: 500, excluding: nil)
        let reference = try #require(page.largeChangeSet)
        #expect(page.changeSets.isEmpty && page.cursor == "1" && !page.more)
        let fetched = try await transport(first).fetchLargeChangeSet(reference)
        #expect(fetched.map(\.dot) == [Dot(replica: writer.replicaID, seq: 1)])
    }
}

import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport
import Testing

/// A real `syncd` process on loopback, two replicas driven through the `sync` CLI and one
/// through SyncKit in-process: concurrent edits, including a concurrent delete under each
/// delete rule, end in identical states; a server restart mid-run loses nothing.
@Suite(.serialized) struct EndToEndTests {
    let directory: TemporaryDirectory
    let server: SyncdServer
    let token: String

    init() throws {
        directory = try TemporaryDirectory(prefix: "e2e")
        server = SyncdServer(dataDirectory: directory.file("syncd-data"))
        let added = try ProductProcess.run(product: "syncd", ["token", "add", "--dataset", "e2e", "--data", directory.file("syncd-data")])
        guard added.status == 0 else { throw ProductProcessError("token add failed: \(added.standardError)") }
        token = added.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        try server.start()
    }

    /// Runs `sync --store <store> <arguments>` and returns its standard output; a non-zero exit fails the test.
    @discardableResult
    func cli(_ store: String, _ arguments: String...) throws -> String {
        let result = try ProductProcess.run(product: "sync", ["--store", store] + arguments)
        guard result.status == 0 else {
            throw ProductProcessError("sync \(arguments.joined(separator: " ")) exited \(result.status): \(result.standardError)")
        }
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The in-process replica with its client.
    struct InProcess {
        let path: String
        let store: ObjectStore
        let replica: SyncReplica
        let context: ObjectContext
        let client: SyncClient
    }

    /// How in-process clients reach the server: short, fixed backoff.
    var clientConfiguration: SyncClient.Configuration {
        var configuration = SyncClient.Configuration(serverURL: URL(string: server.url)!, dataset: "e2e", token: token)
        configuration.backoff = Backoff(initial: .milliseconds(50), maximum: .milliseconds(400), multiplier: 2, maxAttempts: 4, jitter: { 0.5 })
        return configuration
    }

    func makeInProcessReplica(_ name: String) throws -> InProcess {
        try openInProcessReplica(at: directory.file(name))
    }

    /// An in-process replica whose store is made from the server's snapshot of the dataset.
    func makeInProcessReplicaFromSnapshot(_ name: String) async throws -> InProcess {
        let path = directory.file(name)
        try await SyncClient.createStoreFromSnapshot(at: path, configuration: clientConfiguration)
        return try openInProcessReplica(at: path)
    }

    /// The store at `path` (created if there is none) as an in-process replica with its client.
    private func openInProcessReplica(at path: String) throws -> InProcess {
        let store = try ObjectStore(path: path, entities: endToEndEntities)
        let replica = try SyncReplica(store: store)
        return InProcess(path: path, store: store, replica: replica, context: try store.makeContext(),
                         client: SyncClient(replica: replica, configuration: clientConfiguration))
    }

    /// Creates a CLI replica from the in-process one's schema.
    func makeCLIReplica(_ name: String, schemaFrom store: ObjectStore) throws -> String {
        let schemaFile = directory.file("schema.json")
        try store.exportSchema().write(to: URL(fileURLWithPath: schemaFile))
        let path = directory.file(name)
        try cli(path, "init", path, "--schema", schemaFile, "--server", server.url, "--dataset", "e2e", "--token", token)
        return path
    }

    @Test func threeReplicasConvergeUnderConcurrentEditsAndEveryDeleteRule() async throws {
        let c = try makeInProcessReplica("c.sqlite")
        let red = Squad(), blue = Squad()
        red.name = "Red"
        blue.name = "Blue"
        let ada = Player(), bob = Player(), kim = Player()
        ada.name = "Ada"; bob.name = "Bob"; kim.name = "Kim"
        ada.squad = red; bob.squad = red; kim.squad = blue
        let gold = Badge()
        gold.title = "gold"
        ada.addToBadges(gold)
        c.context.insert(red)
        c.context.insert(blue)
        try c.context.save()
        _ = try await c.client.sync()

        let a = try makeCLIReplica("a.sqlite", schemaFrom: c.store)
        let b = try makeCLIReplica("b.sqlite", schemaFrom: c.store)
        try cli(a, "pull")
        try cli(b, "pull")
        #expect(try storeDigest(a) == storeDigest(c.path))

        // Concurrent edits, no sync in between.
        try cli(a, "put", "Squad", red.objectID.uuidString, "score=5")                       // same attribute…
        try cli(b, "put", "Squad", red.objectID.uuidString, "score=7")                       // …on two replicas
        try cli(a, "delete", "Badge", gold.objectID.uuidString)                              // nullify: B links to it
        try cli(b, "link", "Player", bob.objectID.uuidString, "badges", gold.objectID.uuidString)
        try cli(a, "delete", "Squad", blue.objectID.uuidString)                              // cascade: C adds to it
        let newcomer = Player()
        newcomer.name = "Newcomer"
        newcomer.squad = blue
        try cli(b, "delete", "Player", ada.objectID.uuidString)                              // deny: C reports to Ada
        bob.coach = ada
        try c.context.save()

        // Exchange until everyone has everything.
        for _ in 0..<2 {
            try cli(a, "pull", "--push")
            try cli(b, "pull", "--push")
            _ = try await c.client.sync()
            try c.context.refresh()
        }
        let digest = try storeDigest(c.path)
        #expect(try storeDigest(a) == digest)
        #expect(try storeDigest(b) == digest)

        // The outcome the merge contract promises.
        let reader = try c.store.makeContext()
        let score = try #require(try reader.object(Squad.self, id: red.objectID)).score
        #expect(score == 5 || score == 7)
        #expect(try reader.object(Badge.self, id: gold.objectID) == nil)                            // nullify: the badge is gone…
        #expect(try reader.object(Player.self, id: bob.objectID)?.badges.isEmpty == true)           // …and so is Bob's new link
        #expect(try reader.object(Squad.self, id: blue.objectID) == nil)                            // cascade: Blue is gone…
        #expect(try reader.object(Player.self, id: kim.objectID) == nil)
        #expect(try reader.object(Player.self, id: newcomer.objectID) == nil)                       // …with the newcomer
        let keptAda = try #require(try reader.object(Player.self, id: ada.objectID))                // deny: the delete is void
        #expect(keptAda.reports.map(\.name) == ["Bob"])
        #expect(keptAda.squad?.name == "Red")
        let conflicts = try c.replica.conflicts().map(\.kind)
        #expect(conflicts.contains(.voidedDelete))
        #expect(conflicts.contains(.cascadedDelete))
        let listed = try cli(b, "conflicts")
        #expect(listed.contains("voided_delete"))
    }

    @Test func theClientReadsTheDatasetsSchemaVersions() async throws {
        let replica = try makeInProcessReplica("versions.sqlite")
        await #expect(throws: SyncClientError.self) { try await replica.client.transport.fetchSchemaVersions() }
        let before = Date()
        try await replica.client.sync()
        let versions = try await replica.client.transport.fetchSchemaVersions()
        #expect(versions.map(\.schema.versionHash) == [replica.store.schemaDocument.versionHash])
        #expect(versions.first?.schema == replica.store.schemaDocument)
        let registeredAt = try #require(versions.first?.registeredAt)
        #expect(registeredAt >= before.addingTimeInterval(-1) && registeredAt <= Date().addingTimeInterval(1), "registeredAt \(registeredAt)")
    }

    @Test func aServerRestartMidRunLosesNothing() async throws {
        let c = try makeInProcessReplica("c.sqlite")
        let b = try makeCLIReplica("b.sqlite", schemaFrom: c.store)
        for index in 0..<300 {
            let squad = Squad()
            squad.name = "squad \(index)"
            c.context.insert(squad)
            try c.context.save()
        }
        // Kill the server (as a crash would) while the first push is under way.
        let client = c.client
        let pushing = Task { try? await client.sync() }
        try await Task.sleep(for: .milliseconds(60))
        server.stop(signal: SIGKILL)
        _ = await pushing.value
        try server.start(port: server.port)
        let report = try await c.client.sync()
        _ = report
        #expect(try c.replica.unacknowledgedCount() == 0)
        try cli(b, "pull")
        #expect(try storeDigest(b) == storeDigest(c.path))
        #expect(try SyncReplica(store: ObjectStore(existingAt: b)).records("Squad").count == 300)
    }
}

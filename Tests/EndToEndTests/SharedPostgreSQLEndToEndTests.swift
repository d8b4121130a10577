import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport
import Testing

/// Two real `syncd` processes on one PostgreSQL database (`--database`), each with its own data
/// directory: clients pushing to both at once converge, the log read through either holds every
/// change set exactly once with no cursor skipped, and an instance killed mid-push and restarted
/// loses nothing it acknowledged.
@Suite(.serialized) struct SharedPostgreSQLEndToEndTests {
    let directory: TemporaryDirectory
    let dataset: String
    let token: String
    let first: SyncdServer
    let second: SyncdServer

    init() throws {
        (directory, dataset, token, first, second) = try Self.startInstances(named: "shared")
    }

    /// Two `syncd` processes on the tests' PostgreSQL server started with `extraArguments`, each
    /// with a data directory of its own, and a token for a dataset of the caller's own (datasets
    /// are the unit of isolation in the shared tables).
    static func startInstances(named name: String, extraArguments: [String] = []) throws
        -> (TemporaryDirectory, dataset: String, token: String, SyncdServer, SyncdServer) {
        let directory = try TemporaryDirectory(prefix: "e2e-\(name)")
        let database = try TestPostgreSQL.serverURL()
        let dataset = "\(name)-" + UUID().uuidString.prefix(8).lowercased()
        let added = try ProductProcess.run(product: "syncd", ["token", "add", "--dataset", dataset, "--database", database])
        guard added.status == 0 else { throw ProductProcessError("token add failed: \(added.standardError)") }
        let servers = ["first", "second"].map { SyncdServer(dataDirectory: directory.file($0), databaseURL: database) }
        for server in servers {
            server.extraArguments = extraArguments
            try server.start()
        }
        return (directory, dataset, added.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines), servers[0], servers[1])
    }

    struct Replica {
        let path: String
        let replica: SyncReplica
        let context: ObjectContext
        let client: SyncClient
    }

    func configuration(_ server: SyncdServer) -> SyncClient.Configuration {
        var configuration = SyncClient.Configuration(serverURL: URL(string: server.url)!, dataset: dataset, token: token)
        configuration.backoff = Backoff(initial: .milliseconds(50), maximum: .milliseconds(400), multiplier: 2, maxAttempts: 6, jitter: { 0.5 })
        return configuration
    }

    func makeReplica(_ name: String, on server: SyncdServer) throws -> Replica {
        let path = directory.file(name)
        let store = try ObjectStore(path: path, entities: endToEndEntities)
        let replica = try SyncReplica(store: store)
        return Replica(path: path, replica: replica, context: try store.makeContext(),
                       client: SyncClient(replica: replica, configuration: configuration(server)))
    }

    /// Every dot of the log, read through `server` in pages of `limit`, checking that each page
    /// starts right after the cursor the previous one ended at.
    func logDots(through server: SyncdServer, limit: Int) async throws -> [Dot] {
        let transport = HTTPTransport(serverURL: URL(string: server.url)!, dataset: dataset, token: token, session: URLSession(configuration: .ephemeral))
        var dots: [Dot] = []
        var cursor = "0", digest: String?
        while true {
            let page = try await transport.pull(after: cursor, digest: digest, limit: limit, excluding: nil)
            dots += page.changeSets.map(\.dot)
            #expect(Int(page.cursor)! == dots.count, "cursors are consecutive: every entry is one change set")
            cursor = page.cursor
            digest = page.cursorDigest
            if !page.more { return dots }
        }
    }

    @Test func clientsOnTwoInstancesConvergeAndAKilledInstanceLosesNothingAcknowledged() async throws {
        let replicas = try [
            makeReplica("a.sqlite", on: first), makeReplica("b.sqlite", on: first),
            makeReplica("c.sqlite", on: second), makeReplica("d.sqlite", on: second),
        ]
        let rounds = 3, savesPerRound = 8
        for round in 0..<rounds {
            for (index, replica) in replicas.enumerated() {
                for number in 0..<savesPerRound {
                    let squad = Squad()
                    squad.name = "replica \(index) round \(round) squad \(number)"
                    replica.context.insert(squad)
                    try replica.context.save()
                }
            }
            // Every client pushes and pulls at once, half of them through each instance.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in replicas.map(\.client) { group.addTask { _ = try await client.sync() } }
                try await group.waitForAll()
            }
        }
        for replica in replicas { _ = try await replica.client.sync() }
        let total = replicas.count * rounds * savesPerRound
        for replica in replicas {
            #expect(try replica.replica.unacknowledgedCount() == 0)
            #expect(try storeDigest(replica.path) == storeDigest(replicas[0].path))
        }
        #expect(try replicas[0].replica.records("Squad").count == total)
        let throughFirst = try await logDots(through: first, limit: 7)
        #expect(throughFirst.count == total)
        #expect(Set(throughFirst).count == total)
        #expect(try await logDots(through: second, limit: 5) == throughFirst)

        // Kill the first instance (as a crash would) while a large push is under way, restart it.
        let pusher = replicas[0]
        for number in 0..<300 {
            let squad = Squad()
            squad.name = "late squad \(number)"
            pusher.context.insert(squad)
            try pusher.context.save()
        }
        let client = pusher.client
        let pushing = Task { try? await client.push() }
        try await Task.sleep(for: .milliseconds(60))
        first.stop(signal: SIGKILL)
        _ = await pushing.value
        try first.start(port: first.port)
        _ = try await pusher.client.sync()
        #expect(try pusher.replica.unacknowledgedCount() == 0)
        let reader = replicas[3]
        _ = try await reader.client.sync()
        #expect(try reader.replica.records("Squad").count == total + 300)
        #expect(try storeDigest(reader.path) == storeDigest(pusher.path))
        let after = try await logDots(through: second, limit: 50)
        #expect(after.count == total + 300 && Set(after).count == after.count)
    }
}

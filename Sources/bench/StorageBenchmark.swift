import Foundation
import LocalStore
import SyncKit

/// syncd's storages compared through real `syncd` processes on 127.0.0.1: SQLite files (one
/// instance) and a shared PostgreSQL database (one and three instances), with one and with 16
/// datasets.
///
/// Each dataset has four writer replicas with their saves pending (one new person per save, so
/// one change set each; 1,600 change sets per configuration in all). Timed: every writer pushes
/// at once, writers spread over the instances (push rate); then one new replica per dataset pulls
/// the whole log at once, readers spread over the instances (pull rate, merging included).
struct StorageBenchmark {
    /// The PostgreSQL database every PostgreSQL configuration uses (datasets get fresh names).
    let databaseURL: String?
    let repeats: Int

    static let totalChangeSets = 1_600
    static let writersPerDataset = 4

    struct Configuration {
        var storage: String
        var instances: Int
        var datasets: Int
    }

    func run() throws {
        print("")
        print("storage: syncd push and pull rates, \(grouped(StorageBenchmark.totalChangeSets)) change sets per configuration, \(StorageBenchmark.writersPerDataset) writers per dataset")
        var configurations = [Configuration(storage: "sqlite", instances: 1, datasets: 1), Configuration(storage: "sqlite", instances: 1, datasets: 16)]
        if databaseURL != nil {
            for instances in [1, 3] {
                for datasets in [1, 16] { configurations.append(Configuration(storage: "postgresql", instances: instances, datasets: datasets)) }
            }
        } else {
            print("  (no PostgreSQL: pass --database URL or set OBJECTSYNC_POSTGRES_URL; scripts/postgres.sh start prints one)")
        }
        print("  storage     instances  datasets  push change sets/s  pull change sets/s")
        for configuration in configurations {
            var pushRates: [Double] = [], pullRates: [Double] = []
            for _ in 0..<repeats {
                let (push, pull) = try measure(configuration)
                pushRates.append(push)
                pullRates.append(pull)
            }
            let columns = [(configuration.storage, -10), (String(configuration.instances), 9), (String(configuration.datasets), 8),
                           (grouped(Int(pushRates.max()!)), 19), (grouped(Int(pullRates.max()!)), 19)]
            print("  " + columns.map { text, width in
                let padding = String(repeating: " ", count: max(0, abs(width) - text.count))
                return width < 0 ? text + padding : padding + text
            }.joined(separator: "  "))
        }
    }

    /// One run of `configuration`: the push rate and the pull rate, change sets per second.
    private func measure(_ configuration: Configuration) throws -> (push: Double, pull: Double) {
        let database = configuration.storage == "postgresql" ? databaseURL : nil
        let servers = try (0..<configuration.instances).map { _ in try SyncdProcess.start(databaseURL: database) }
        defer { servers.forEach { $0.stop() } }
        let directory = servers[0].dataDirectory
        let run = UUID().uuidString.prefix(8).lowercased()
        let savesPerWriter = StorageBenchmark.totalChangeSets / configuration.datasets / StorageBenchmark.writersPerDataset
        var writers: [SyncClient] = [], readers: [(SyncClient, SyncReplica)] = []
        for datasetIndex in 0..<configuration.datasets {
            let dataset = "storage-\(run)-\(datasetIndex)"
            let token = try servers[0].addToken(dataset: dataset)
            func client(_ name: String, server: SyncdProcess) throws -> (SyncClient, SyncReplica, ObjectStore) {
                let store = try ObjectStore(path: directory.appendingPathComponent("\(dataset)-\(name).sqlite").path, entities: benchEntities)
                let replica = try SyncReplica(store: store)
                return (SyncClient(replica: replica, configuration: SyncClient.Configuration(serverURL: server.url, dataset: dataset, token: token)),
                        replica, store)
            }
            for writerIndex in 0..<StorageBenchmark.writersPerDataset {
                let server = servers[(datasetIndex * StorageBenchmark.writersPerDataset + writerIndex) % servers.count]
                let (writer, _, store) = try client("writer\(writerIndex)", server: server)
                let context = try store.makeContext()
                for number in 0..<savesPerWriter {
                    let person = Person()
                    person.name = "writer \(writerIndex) person \(number)"
                    context.insert(person)
                    try context.save()
                }
                writers.append(writer)
            }
            let (reader, replica, _) = try client("reader", server: servers[datasetIndex % servers.count])
            readers.append((reader, replica))
        }
        // Schemas registered before timing: the first push of each dataset would otherwise time it.
        let firstWriters = stride(from: 0, to: writers.count, by: StorageBenchmark.writersPerDataset).map { writers[$0] }
        try blocking { try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in firstWriters { group.addTask { _ = try await writer.registerSchema() } }
            try await group.waitForAll()
        } }
        let total = savesPerWriter * writers.count
        let allWriters = writers
        let pushSeconds = try measureSeconds {
            try blocking { try await withThrowingTaskGroup(of: Int.self) { group in
                for writer in allWriters { group.addTask { try await writer.push().pushed } }
                let pushed = try await group.reduce(0, +)
                guard pushed == total else { throw BenchmarkFailure("pushed \(pushed) of \(total) change sets") }
            } }
        }
        let readerClients = readers.map(\.0)
        let pullSeconds = try measureSeconds {
            try blocking { try await withThrowingTaskGroup(of: Int.self) { group in
                for reader in readerClients { group.addTask { try await reader.pull().pulled } }
                let pulled = try await group.reduce(0, +)
                guard pulled == total else { throw BenchmarkFailure("pulled \(pulled) of \(total) change sets") }
            } }
        }
        return (Double(total) / pushSeconds, Double(total) / pullSeconds)
    }
}

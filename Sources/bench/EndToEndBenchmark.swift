import Foundation
import LocalStore
import SyncKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// End to end through a real `syncd` child process on 127.0.0.1 (the release binary next to
/// this one: `swift build -c release --product syncd`).
///
/// Replica A creates `objects` people and syncs; replica B pulls them (not timed). A then commits
/// `changes` attribute sets (`changes / objects` saves); timed: `SyncClient.push()` of A, then
/// `SyncClient.pull()` of B until caught up, merging every page.
struct EndToEndBenchmark {
    let objects: Int
    let changes: Int
    let repeats: Int

    /// The end-to-end rate, best run, as a summary figure.
    func run() throws -> GoalFigure {
        let saves = max(1, changes / objects)
        print("")
        print("end to end: syncd on 127.0.0.1; A pushes \(saves) saves x \(grouped(objects)) attribute sets, B pulls and merges")
        var rates: [Double] = []
        for run in 0..<repeats {
            let server = try SyncdProcess.start()
            defer { server.stop() }
            let dataset = "bench\(run)"
            let token = try server.addToken(dataset: dataset)
            let directory = server.dataDirectory
            let storeA = try ObjectStore(path: directory.appendingPathComponent("a.sqlite").path, entities: benchEntities)
            let replicaA = try SyncReplica(store: storeA)
            let replicaB = try SyncReplica(store: try ObjectStore(path: directory.appendingPathComponent("b.sqlite").path, entities: benchEntities))
            let configuration = SyncClient.Configuration(serverURL: server.url, dataset: dataset, token: token)
            let clientA = SyncClient(replica: replicaA, configuration: configuration)
            let clientB = SyncClient(replica: replicaB, configuration: configuration)

            let contextA = try storeA.makeContext()
            let people = try MergeWorkload.createPeople(objects, in: contextA, saves: 10)
            _ = try blocking { try await clientA.sync() }
            let first = try blocking { try await clientB.pull() }
            guard first.pulled == 10 else { throw BenchmarkFailure("B pulled \(first.pulled) change sets of A's creates, not 10") }

            try MergeWorkload.commitAttributeChanges(people, saves: saves, in: contextA, round: 1)
            let batch = try replicaA.localChangeSets(status: .pending)
            let count = MergeWorkload.setCount(batch)
            var pushed = SyncReport()
            var pulled = SyncReport()
            let seconds = try measureSeconds {
                pushed = try blocking { try await clientA.push() }
                pulled = try blocking { try await clientB.pull() }
            }
            guard pushed.pushed == batch.count, pulled.pulled == batch.count,
                  try replicaB.records("Person") == replicaA.records("Person") else {
                throw BenchmarkFailure("end to end: pushed \(pushed.pushed), pulled \(pulled.pulled) of \(batch.count) change sets, or B differs from A")
            }
            rates.append(Double(count) / seconds)
            print(String(format: "  run %d: %@ changes in %.3f s (push %d request(s), pull %d page(s)): %@ changes/s",
                         run + 1, grouped(count), seconds, pushed.pushBatches, pulled.pages, grouped(Int(Double(count) / seconds))))
        }
        print("best of \(repeats): \(grouped(Int(rates.max() ?? 0))) changes/s (median \(grouped(Int(median(rates)))))")
        return GoalFigure(name: "end to end push + pull", value: rates.max() ?? 0, goal: 100_000, unit: "changes/s")
    }
}

/// Runs `body` to completion on the concurrency runtime while this thread waits.
func blocking<T: Sendable, E: Error>(_ body: @escaping @Sendable () async throws(E) -> T) throws -> T {
    let outcome = LockedValue<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do {
            let value = try await body()
            outcome.withLock { $0 = .success(value) }
        } catch {
            outcome.withLock { $0 = .failure(error) }
        }
        done.signal()
    }
    done.wait()
    guard let result = outcome.withLock({ $0 }) else { throw BenchmarkFailure("task ended without a result") }
    return try result.get()
}

/// A `syncd serve` child process on 127.0.0.1 with its own data directory, removed on stop.
final class SyncdProcess {
    let process: Process
    let url: URL
    let dataDirectory: URL
    let binary: URL
    /// The PostgreSQL database given with `--database`; `nil`: SQLite files in the data directory.
    let databaseURL: String?

    /// The `syncd` built next to this executable.
    static var binaryURL: URL {
        let own = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        return own.deletingLastPathComponent().appendingPathComponent("syncd")
    }

    private init(process: Process, url: URL, dataDirectory: URL, binary: URL, databaseURL: String?) {
        self.process = process
        self.url = url
        self.dataDirectory = dataDirectory
        self.binary = binary
        self.databaseURL = databaseURL
    }

    /// Starts `syncd serve --port 0` (with `--database databaseURL` when given) and waits (up to
    /// 10 s) for its "listening on" line.
    static func start(databaseURL: String? = nil) throws -> SyncdProcess {
        let binary = binaryURL
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw BenchmarkFailure("no syncd at \(binary.path): build it with `swift build -c release --product syncd`")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("syncd-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // The request log goes to a file: a pipe nobody drains would stall the server.
        let logURL = directory.appendingPathComponent("syncd.log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let log = try FileHandle(forWritingTo: logURL)
        defer { try? log.close() }
        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve", "--data", directory.appendingPathComponent("data").path, "--host", "127.0.0.1", "--port", "0"]
            + (databaseURL.map { ["--database", $0] } ?? [])
        process.standardError = log
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let text = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
            if let range = text.range(of: "syncd listening on ") {
                let line = text[range.upperBound...].prefix { !$0.isNewline }
                if let url = URL(string: String(line)), text[range.upperBound...].contains("\n") {
                    return SyncdProcess(process: process, url: url, dataDirectory: directory, binary: binary, databaseURL: databaseURL)
                }
            }
            if !process.isRunning { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        if process.isRunning { process.terminate() }
        throw BenchmarkFailure("syncd did not start: \((try? String(contentsOf: logURL, encoding: .utf8)) ?? "")")
    }

    /// `syncd token add --dataset NAME`: the new token.
    func addToken(dataset: String) throws -> String {
        let token = try run(["token", "add", "--dataset", dataset])
        guard !token.isEmpty, !token.contains("\n") else {
            throw BenchmarkFailure("syncd token add printed no single token: \(token)")
        }
        return token
    }

    /// Stops the server (SIGTERM, then waits) and removes its data directory.
    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: dataDirectory)
    }
}

/// `bench sync-seed URL DATASET TOKEN` (internal, used by `scripts/bench-http.sh`): registers the
/// benchmark schema with the dataset, pushes one change set (100 places, 10 people) and prints
/// the pull cursor after it, so an HTTP load test can ask for an empty pull.
enum SyncSeed {
    static let subcommand = "sync-seed"

    static func run(arguments: [String]) throws {
        guard arguments.count == 3, let url = URL(string: arguments[0]) else {
            throw BenchmarkFailure("usage: bench \(subcommand) URL DATASET TOKEN")
        }
        let path = temporaryStorePath("seed")
        defer { removeStoreFile(path) }
        let store = try ObjectStore(path: path, entities: benchEntities)
        let replica = try SyncReplica(store: store)
        _ = try MergeWorkload.createPeople(10, in: try store.makeContext())
        let client = SyncClient(replica: replica, configuration: .init(serverURL: url, dataset: arguments[1], token: arguments[2]))
        let report = try blocking { try await client.sync() }
        print(report.cursor)
    }
}

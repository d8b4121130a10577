import Foundation
import LocalStore
import SyncKit

/// One save of `objects` small objects (`Place`s, a name each) end to end through a real
/// `syncd` child process: A saves them in one change set and pushes it (an upload in parts), B
/// pulls it (by reference, in parts) and merges it. Prints the time of each step and the peak
/// resident memory of this process (both clients) and of syncd.
struct LargeChangeSetBenchmark {
    let objects: Int

    func run() throws {
        print("")
        print("large change set: one save of \(grouped(objects)) places, pushed through syncd (upload in parts) and pulled by B (by reference)")
        let server = try SyncdProcess.start()
        defer { server.stop() }
        let token = try server.addToken(dataset: "large")
        let directory = server.dataDirectory
        let storeA = try ObjectStore(path: directory.appendingPathComponent("a.sqlite").path, entities: benchEntities)
        let replicaA = try SyncReplica(store: storeA)
        let replicaB = try SyncReplica(store: try ObjectStore(path: directory.appendingPathComponent("b.sqlite").path, entities: benchEntities))
        let configuration = SyncClient.Configuration(serverURL: server.url, dataset: "large", token: token)
        let clientA = SyncClient(replica: replicaA, configuration: configuration)
        let clientB = SyncClient(replica: replicaB, configuration: configuration)

        let beforeSave = PeakMemory.ofThisProcess()
        // The context (and its objects) is released once saved: what follows is sync's memory.
        let save = try measureSeconds {
            let context = try storeA.makeContext()
            for index in 0..<objects {
                let place = Place()
                place.name = "place \(index)"
                context.insert(place)
            }
            try context.save()
        }
        var pushed = SyncReport()
        let push = try measureSeconds { pushed = try blocking { try await clientA.sync() } }
        let clientAfterPush = PeakMemory.ofThisProcess()
        var pulled = SyncReport()
        let pull = try measureSeconds { pulled = try blocking { try await clientB.pull() } }
        guard pushed.pushed == 1, pulled.pulled == 1, try replicaB.store.makeContext().fetchCount(FetchDescriptor<Place>()) == objects else {
            throw BenchmarkFailure("large change set: pushed \(pushed.pushed), pulled \(pulled.pulled) change sets, or B lacks places")
        }
        let syncd = PeakMemory.ofProcess(server.process.processIdentifier)
        print(String(format: "  save %.1f s, push %.1f s, pull and merge %.1f s (%d pages)", save, push, pull, pulled.pages))
        print("  peak resident memory: client process \(mebibytes(beforeSave)) before the save, \(mebibytes(clientAfterPush)) after the push, "
              + "\(mebibytes(PeakMemory.ofThisProcess())) after the pull; syncd \(mebibytes(syncd))")
    }
}

/// Peak resident memory (`VmHWM` of `/proc/<pid>/status`), in bytes; 0 where there is no `/proc`.
enum PeakMemory {
    static func ofThisProcess() -> Int { read("/proc/self/status") }

    static func ofProcess(_ id: Int32) -> Int { read("/proc/\(id)/status") }

    private static func read(_ path: String) -> Int {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kibibytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kibibytes * 1024
    }
}

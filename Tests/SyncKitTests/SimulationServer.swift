import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport

/// Two syncd dataset engines beside a simulation's replicas, fed the same pushes now and then:
/// one compacts its log below the vector every replica has seen at random points, the other
/// never does. Pulls from before the compaction point must be answered only for pullers that
/// have what was compacted. After the full exchange the compacted store, and a store made from a
/// snapshot it wrote mid-run plus the log's tail, must equal the other's: compaction changes no
/// outcome. (The servers, not the replicas, are the reference: a server merges `.custom`
/// attributes by the last writer, CONTRACT.md §7.)
///
/// It draws from a generator of its own, so the replicas' run replays as without it.
struct SimulationServer {
    private var random: SeededGenerator
    private let file = TemporaryStoreFile(prefix: "sim-server", in: .memoryBackedIfAvailable), wholeFile = TemporaryStoreFile(prefix: "sim-server-whole", in: .memoryBackedIfAvailable)
    private let snapshotFile = TemporaryStoreFile(prefix: "sim-server-snapshot", in: .memoryBackedIfAvailable)
    /// The engine that compacts, and the one that never does.
    let engine: SQLiteDatasetEngine, whole: SQLiteDatasetEngine
    private var snapshot: LogPosition?
    /// How many compactions removed entries, how many pulls from before the compaction point
    /// were answered, and how many compacted entries were folded into the log's floor.
    private(set) var compactions = 0, answeredPullsBeforeCompactionPoint = 0, entriesFolded = 0
    /// How many runs' mid-run snapshots were brought up to date from the log's tail (the others
    /// found the log compacted past them and started again from a new snapshot).
    private(set) var snapshotsFollowedByTheirTail = 0

    init(seed: UInt64, replicas: [TestReplica]) throws {
        random = SeededGenerator(seed: seed ^ 0x5EED_C0A1_E5CE)
        let schema = try ObjectStore.inMemory(entities: simulationEntities).schemaDocument
        engine = try SQLiteDatasetEngine.create(at: file.path, schema: schema)
        whole = try SQLiteDatasetEngine.create(at: wholeFile.path, schema: schema)
        // Every replica registers its key, so that any of them may relay the others' change sets.
        for replica in replicas {
            for server in [engine, whole] { _ = try server.apply([], pushedBy: try replica.replica.credentials()) }
        }
    }

    /// One step beside a round of the simulation: maybe a push, a compaction, a pull from the start, a snapshot.
    mutating func step(_ replicas: [TestReplica]) throws -> String? {
        if random.chance(0.3) { try push(from: replicas[Int.random(in: 0..<replicas.count, using: &random)]) }
        if random.chance(0.15) {
            let stable = try replicas.dropFirst().reduce(try replicas[0].replica.versionVector()) { minimum, replica in
                let vector = try replica.replica.versionVector()
                return VersionVector(minimum.entries.reduce(into: [:]) { $0[$1.key] = min($1.value, vector[$1.key]) })
            }
            let report = try engine.compactLog(stable: stable)
            if report.entriesRemoved > 0 { compactions += 1 }
            entriesFolded += report.entriesFolded
        }
        if random.chance(0.2) {
            let puller = replicas[Int.random(in: 0..<replicas.count, using: &random)]
            if let problem = try checkPullFromStart(by: puller) { return problem }
        }
        if random.chance(0.2) { try recordPull(by: replicas[Int.random(in: 0..<replicas.count, using: &random)]) }
        if snapshot == nil && random.chance(0.1) { snapshot = try engine.writeSnapshot(to: snapshotFile.path) }
        return nil
    }

    private func push(from replica: TestReplica) throws {
        let missing = try replica.replica.changeSets(missingFrom: engine.versionVector())
        for server in [engine, whole] { _ = try server.apply(missing, pushedBy: try replica.replica.credentials()) }
    }

    /// Tells the compacting server that `replica` pulled up to the longest log prefix it holds,
    /// so that compactions fold what every replica pulled past into the log's floor.
    private func recordPull(by replica: TestReplica) throws {
        let vector = try replica.replica.versionVector()
        let log = try whole.readLog(after: 0, limit: 1_000_000, excluding: nil).changeSets
        let held = log.firstIndex { !vector.covers($0.dot) } ?? log.count
        try engine.recordPull(by: replica.replica.replicaID, after: Int64(held), unpushed: .none, forgotten: try replica.replica.forgottenBelow())
    }

    /// A pull from cursor 0 is either refused as compacted or answered; answered, the puller must
    /// hold every compacted change set, and the page must be what the log holds after the point.
    private mutating func checkPullFromStart(by puller: TestReplica) throws -> String? {
        let page: ChangeSetLogPage
        do {
            page = try engine.readLog(after: 0, limit: 100_000, excluding: puller.replica.replicaID)
        } catch DatasetEngineError.historyCompacted {
            // Refusing is always safe: the puller starts again from a snapshot.
            return nil
        }
        let compacted = try engine.replica.withConnection { connection in
            try connection.rows("SELECT replica, seq FROM _server_log_compacted").map { row -> Dot in
                guard let dot = Dot(replica: row[0], seq: row[1]) else {
                    throw SyncError(.notSyncable, "a _server_log_compacted row is damaged: \(row)")
                }
                return dot
            }
        }
        let floor = try engine.replica.withConnection { try ServerCompactedLogTable.floor(on: $0) }
        guard !compacted.isEmpty || floor != nil else { return nil }
        answeredPullsBeforeCompactionPoint += 1
        let vector = try puller.replica.versionVector()
        if let missing = compacted.first(where: { !vector.covers($0) }) ?? floor?.firstUnknown(to: nil, known: vector) {
            return "server: a pull from 0 by \(puller.replica.replicaID) skipped the compacted change set \(missing), which it lacks"
        }
        // Applying the page must be possible: nothing it depends on was skipped.
        var applied = vector
        var remaining = page.changeSets.filter { !vector.covers($0.dot) }
        while let next = remaining.firstIndex(where: { SyncReplica.isApplicable($0, to: applied) }) {
            applied[remaining[next].dot.replica] = remaining[next].dot.seq
            remaining.remove(at: next)
        }
        if let stuck = remaining.first {
            return "server: a pull from 0 by \(puller.replica.replicaID) hands out \(stuck.dot), which needs change sets it skipped"
        }
        return nil
    }

    /// After the full exchange: every replica pushes; the compacted server's store, and the
    /// snapshot plus the tail, must equal the other server's.
    mutating func finish(_ replicas: [TestReplica]) throws -> String? {
        for replica in replicas { try push(from: replica) }
        let stable = try replicas[0].replica.versionVector()
        if try engine.versionVector() != stable { return "server: vector \(try engine.versionVector()) after every push, replicas have \(stable)" }
        if random.chance(0.5) { _ = try engine.compactLog(stable: stable) }
        let want = try storeDigest(whole.path)
        if try storeDigest(engine.path) != want {
            return "compacted server " + Simulation.difference(want, try storeDigest(engine.path), between: 0, and: 1)
        }
        guard let snapshot else { return nil }
        try SyncReplica.adoptSnapshot(at: snapshotFile.path)
        // Opened with its stored schema, as the servers are: `.custom` merges by the last writer there too.
        let client = try SyncReplica(store: try ObjectStore(existingAt: snapshotFile.path))
        var result = snapshotFile
        do {
            let tail = try engine.readLog(after: snapshot.cursor, digest: snapshot.digest, limit: 1_000_000, excluding: client.replicaID)
            _ = try client.apply(tail.changeSets)
            snapshotsFollowedByTheirTail += 1
        } catch DatasetEngineError.historyCompacted {
            // The log was compacted past the snapshot since: the client starts again from a new one.
            result = TemporaryStoreFile(prefix: "sim-server-snapshot-again", in: .memoryBackedIfAvailable)
            _ = try engine.writeSnapshot(to: result.path)
        }
        if try storeDigest(result.path) != want {
            return "server snapshot plus tail " + Simulation.difference(want, try storeDigest(result.path), between: 0, and: 1)
        }
        return nil
    }
}

import Foundation
import SyncKit

/// `bench compaction`: how long history compaction takes on a large store.
///
/// A store applies `changeSets` change sets of another replica, 1,000 per batch (each creates a
/// `Place`, names it and creates three `Person`s living there; every tenth also deletes the place
/// of the one before, which nullifies its residents' `place`), then compacts
/// below all of them, and again, finding nothing more to drop: the call a client makes after each
/// pull, also when the stable vector did not move. Compaction has no hand-written equivalent to
/// set beside it, so the figures are times, with what the first compaction dropped.
struct CompactionBenchmark {
    let changeSets: Int
    let repeats: Int

    func run() throws {
        print("")
        print("compaction: \(grouped(changeSets)) change sets of another replica (each creating a place and three residents linked to it, every tenth deleting a place), compacted below all of them")
        var fills: [Double] = []
        var first: [Double] = []
        var again: [Double] = []
        var dropped = SyncReplica.HistoryCompaction(stable: VersionVector())
        for _ in 0..<repeats {
            let path = temporaryStorePath("compaction")
            defer { removeStoreFile(path) }
            let replica = try SyncReplica(store: try ObjectStore(path: path, entities: benchEntities),
                                          wallClock: FakeWallClock(start: 1_700_003_600_000).next)
            fills.append(try measureSeconds { try fill(replica) })
            let stable = try replica.versionVector()
            first.append(try measureSeconds { dropped = try replica.compactHistory(stable: stable) })
            again.append(try measureSeconds { try replica.compactHistory(stable: stable) })
            guard dropped.changeSets == changeSets, dropped.tombstones == changeSets / 10 else {
                throw BenchmarkFailure("compaction dropped \(dropped.changeSets) change sets and \(dropped.tombstones) tombstones, not \(changeSets) and \(changeSets / 10)")
            }
        }
        print("best of \(repeats) run(s)")
        print("  applying the change sets: \(milliseconds(fills.min() ?? 0)) (median \(milliseconds(median(fills))))")
        print("  first compaction: \(milliseconds(first.min() ?? 0)) (median \(milliseconds(median(first)))), dropping \(grouped(dropped.changeSets)) change sets, \(grouped(dropped.tombstones)) tombstones, \(grouped(Int(dropped.bytes))) bytes")
        print("  again, nothing to drop: \(milliseconds(again.min() ?? 0)) (median \(milliseconds(median(again))))")
    }

    /// Applies the change sets of another replica to `replica`, 1,000 per batch.
    private func fill(_ replica: SyncReplica) throws {
        let author = UUID()
        var previous: UUID?
        var batch: [ChangeSet] = []
        for seq in 1...UInt64(changeSets) {
            let id = UUID()
            var operations: [SyncKit.Operation] = [.create(entity: "Place", id: id), .set(entity: "Place", id: id, attribute: "name", values: [.text("place \(seq)")])]
            for _ in 0..<3 {
                let resident = UUID()
                operations += [.create(entity: "Person", id: resident), .link(entity: "Person", id: resident, relationship: "place", target: id)]
            }
            if seq % 10 == 0, let previous { operations.append(.delete(entity: "Place", id: previous, root: previous)) }
            previous = id
            batch.append(ChangeSet(dot: Dot(replica: author, seq: seq), hlc: HLC(rawValue: (1_700_000_000_000 + seq) << 16),
                                   vector: VersionVector([author: seq]), operations: operations))
            if batch.count == 1_000 {
                _ = try replica.apply(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { _ = try replica.apply(batch) }
    }

    private func milliseconds(_ seconds: Double) -> String {
        String(format: "%.1f ms", seconds * 1000)
    }
}

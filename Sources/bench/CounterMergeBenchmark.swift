import Foundation
import LocalStore
import SyncKit

/// An object with one counter, for the counter merge: every write to it is an `increment`.
@Entity final class Reaction {
    var label: String = ""
    @Attribute(merge: .counter) var likes: Int = 0
}

extension SyncBenchmark {
    /// merge, counters: replica A has `mergeObjects` reactions, synced to B; A then commits
    /// `mergeChanges / mergeObjects` saves, each adding 1 to every reaction's likes, while B
    /// added 1 to every one concurrently; B applies A's change sets in one batch. "Changes" are
    /// `increment` operations; every one adds up with B's own.
    func counterMerge() throws -> Double {
        let objects = SyncBenchmark.mergeObjects
        let saves = max(1, SyncBenchmark.mergeChanges / objects)
        print("")
        print("merge, counters: \(grouped(objects)) reactions synced A -> B, then A commits \(saves) saves x \(grouped(objects)) increments and B one save x \(grouped(objects)); B applies A's in one batch")
        var rates: [Double] = []
        var changes = 0
        for _ in 0..<repeats {
            let pathA = temporaryStorePath("counter-a"), pathB = temporaryStorePath("counter-b")
            defer {
                removeStoreFile(pathA)
                removeStoreFile(pathB)
            }
            let storeA = try ObjectStore(path: pathA, entities: [Reaction.self])
            let replicaA = try SyncReplica(store: storeA, wallClock: FakeWallClock(start: 1_700_000_000_000).next)
            let contextA = try storeA.makeContext()
            for index in 0..<objects {
                let reaction = Reaction()
                reaction.label = "reaction \(index)"
                contextA.insert(reaction)
            }
            try contextA.save()
            let initial = try replicaA.changeSets(missingFrom: VersionVector())
            let vectorAfterCreate = try replicaA.versionVector()
            let reactions = try contextA.fetchAll(Reaction.self)
            for _ in 0..<saves {
                for reaction in reactions { reaction.likes += 1 }
                try contextA.save()
            }
            let batch = try replicaA.changeSets(missingFrom: vectorAfterCreate)
            changes = batch.reduce(0) { $0 + $1.operations.count { if case .increment = $0 { true } else { false } } }

            let storeB = try ObjectStore(path: pathB, entities: [Reaction.self])
            let replicaB = try SyncReplica(store: storeB, wallClock: FakeWallClock(start: 1_700_003_600_000).next)
            _ = try replicaB.apply(initial)
            let contextB = try storeB.makeContext()
            for reaction in try contextB.fetchAll(Reaction.self) { reaction.likes += 1 }
            try contextB.save()
            var result: SyncReplica.MergeResult?
            let seconds = try measureSeconds { result = try replicaB.apply(batch) }
            let totals = try storeB.makeContext().fetchAll(Reaction.self).map(\.likes)
            guard result?.applied.count == batch.count, totals.count == objects, totals.allSatisfy({ $0 == saves + 1 }) else {
                throw BenchmarkFailure("after the counter merge B's likes are not \(saves + 1) everywhere: \(Set(totals).sorted().prefix(5))")
            }
            rates.append(Double(changes) / seconds)
        }
        print("best of \(repeats) run(s), \(grouped(changes)) increments per batch")
        print("  counters: \(grouped(Int(rates.max() ?? 0))) changes/s (median \(grouped(Int(median(rates))))), each adding up with a concurrent increment")
        return rates.max() ?? 0
    }
}

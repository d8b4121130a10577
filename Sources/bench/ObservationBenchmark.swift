import Foundation
import LocalStore
import Observation
import SyncKit

/// `bench observe`: what one Swift Observation observer costs the writes it watches.
///
/// Each workload runs with no observer and with one: a live query of every `Person` on the
/// writing (or merging) store, its `results` read inside `withObservationTracking`. The observer
/// makes every commit describe what it changed (a `StoreChange`) and the query check whether
/// that touches `Person`, mark itself stale and call the observer.
///
/// - insert: the store benchmark's insert (`rows` people and their places, one save).
/// - merge: the sync benchmark's applied merge (10,000 people synced A -> B, then 10 saves x
///   10,000 attribute sets on A, applied by B in one batch).
///
/// Runs alternate between the two variants; each variant's best run counts. Overhead =
/// observed seconds / plain seconds - 1; the goal is at most 10%.
struct ObservationBenchmark {
    let rows: Int
    let repeats: Int

    func run() throws {
        print("== observe: one observer (a live query of Person, observed) vs none, \(ProcessInfo.processInfo.activeProcessorCount) cores ==")
        let insert = try self.insert()
        let merge = try self.merge()
        print("best of \(repeats) run(s); overhead = observed seconds / plain seconds - 1 (goal <= 10%)")
        print(pad("workload", to: 10, right: false) + pad("size", to: 18, right: true) + pad("plain s", to: 10, right: true)
              + pad("observed s", to: 12, right: true) + pad("overhead", to: 10, right: true) + pad("observer fired", to: 16, right: true))
        for variant in [insert, merge] {
            print(pad(variant.workload, to: 10, right: false) + pad(variant.size, to: 18, right: true)
                  + pad(String(format: "%.3f", variant.plain.min() ?? 0), to: 10, right: true)
                  + pad(String(format: "%.3f", variant.observed.min() ?? 0), to: 12, right: true)
                  + pad(String(format: "%+.1f%%", variant.overhead * 100), to: 10, right: true)
                  + pad(variant.observerFired ? "yes" : "NO", to: 16, right: true))
        }
    }

    /// The timings of one workload with and without the observer.
    private struct Timings {
        let workload: String
        let size: String
        var plain: [Double] = []
        var observed: [Double] = []
        /// Whether the observer was called in every observed run, as it must be.
        var observerFired = true

        var overhead: Double { (observed.min() ?? 0) / (plain.min() ?? .infinity) - 1 }
    }

    private func insert() throws -> Timings {
        let places = BenchData.places()
        let people = BenchData.people(count: rows)
        return try timeBothWays(workload: "insert", size: "\(grouped(rows)) people") { observed in
            try onFreshStore("observe-insert") { path in
                let store = try ObjectStore(path: path, entities: benchEntities)
                let context = try store.makeContext()
                let observer = observed ? try ObservedPeople(context: context) : nil
                let seconds = try measureSeconds { try StoreBenchmark.insert(people, places, into: context) }
                return (seconds, try observer?.confirm(count: rows) ?? true)
            }
        }
    }

    private func merge() throws -> Timings {
        let objects = SyncBenchmark.mergeObjects
        return try onFreshStore("observe-merge-a") { pathA in
            let source = try MergeWorkload.prepareBatch(at: pathA, objects: objects, saves: max(1, SyncBenchmark.mergeChanges / objects))
            let size = "\(grouped(MergeWorkload.setCount(source.batch))) changes"
            return try timeBothWays(workload: "merge", size: size) { observed in
                try onFreshStore("observe-merge-b") { pathB in
                    let storeB = try ObjectStore(path: pathB, entities: benchEntities)
                    let replicaB = try SyncReplica(store: storeB, wallClock: FakeWallClock(start: 1_700_003_600_000).next)
                    _ = try replicaB.apply(source.initial)
                    let observer = observed ? try ObservedPeople(context: try storeB.makeContext()) : nil
                    let seconds = try measureSeconds { _ = try replicaB.apply(source.batch) }
                    return (seconds, try observer?.confirm(count: objects) ?? true)
                }
            }
        }
    }

    /// Runs `run` `repeats` times without and with the observer, alternating. `run(observed)`
    /// returns the seconds measured and whether the observer (if any) was called.
    private func timeBothWays(
        workload: String, size: String, _ run: (_ observed: Bool) throws -> (seconds: Double, observerFired: Bool)
    ) throws -> Timings {
        var timings = Timings(workload: workload, size: size)
        for _ in 0..<repeats {
            timings.plain.append(try run(false).seconds)
            let observed = try run(true)
            timings.observed.append(observed.seconds)
            timings.observerFired = timings.observerFired && observed.observerFired
        }
        return timings
    }

    private func onFreshStore<T>(_ label: String, _ body: (String) throws -> T) throws -> T {
        let path = temporaryStorePath(label)
        defer { removeStoreFile(path) }
        return try body(path)
    }
}

/// The one observer: a live query of every person, its results read under observation.
private final class ObservedPeople {
    let query: LiveQuery<Person>
    let fired = LockedValue(false)

    init(context: ObjectContext) throws {
        query = try context.liveQuery(FetchDescriptor<Person>())
        withObservationTracking { _ = query.results } onChange: { [fired] in fired.withLock { $0 = true } }
    }

    /// Whether the observer was called and the query now holds `count` people (read outside the timing).
    func confirm(count: Int) throws -> Bool {
        let wasCalled = fired.withLock { $0 }
        guard query.results.count == count, query.lastError == nil else {
            throw BenchmarkFailure("the live query holds \(query.results.count) people, not \(count): \(String(describing: query.lastError))")
        }
        return wasCalled
    }
}

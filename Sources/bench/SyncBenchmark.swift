import Foundation
import LocalStore
import SyncKit

/// `bench sync`: what syncing costs, in one process, then end to end through a real `syncd`.
///
/// - insert + capture: the store benchmark's insert (`rows` people, 8 attributes and a to-one,
///   one save) with a ``SyncReplica`` attached, so the save also records its change set; against
///   the same raw C API insert, runs alternating.
/// - merge: replica A has `objects` people, already synced to B; A then commits `changes`
///   attribute sets (`changes / objects` saves, each setting one attribute of every person);
///   B applies all of A's new change sets in one `apply` batch. "Changes" are `set` operations.
/// - merge, all stale: the same, but B first wrote newer values (later wall clock, so a larger
///   HLC) of every attribute A changes: every incoming write loses (and is journaled).
/// - merge, counters: every change is an `increment` of a counter (see ``counterMerge()``).
/// - merge, creations: B applying A's first change sets, which create the people (a create, 8
///   sets and a link each) and their places: what a replica's first sync of a dataset merges.
/// - end to end: see ``EndToEndBenchmark``.
struct SyncBenchmark {
    let rows: Int
    let repeats: Int
    /// The one part to run (one of ``parts``), or nil for all.
    var only: String? = nil

    /// The parts `--only` can name.
    static let parts = ["capture", "merge", "end-to-end"]

    /// People replica A creates for the merge workloads.
    static let mergeObjects = 10_000
    /// Attribute sets A commits after the first sync.
    static let mergeChanges = 100_000

    func run() throws {
        print("== sync: change capture, merge and end to end, \(ProcessInfo.processInfo.activeProcessorCount) cores ==")
        var figures: [GoalFigure] = []
        if only == nil || only == "capture" {
            let insert = try insertWithCapture()
            ResultTable.print([insert], repeats: repeats)
            figures.append(GoalFigure(name: "insert + capture vs raw C", value: insert.ratio, goal: 0.35, unit: "x"))
        }
        if only == nil || only == "merge" {
            let merge = try self.merge()
            figures.append(GoalFigure(name: "merge: changes applied", value: merge.applied, goal: 500_000, unit: "changes/s"))
            figures.append(GoalFigure(name: "merge: changes stale", value: merge.stale, goal: 500_000, unit: "changes/s"))
            figures.append(GoalFigure(name: "merge: counter increments", value: try counterMerge(), goal: 500_000, unit: "changes/s"))
        }
        if only == nil || only == "end-to-end" {
            figures.append(try EndToEndBenchmark(objects: SyncBenchmark.mergeObjects, changes: SyncBenchmark.mergeChanges, repeats: repeats).run())
        }
        print("")
        GoalFigure.print(figures, repeats: repeats)
        print("HTTP load (wrk, 1,000 idle keep-alive connections, syncd memory): scripts/bench-http.sh")
    }

    // MARK: Insert with change capture

    private func insertWithCapture() throws -> ComparisonResult {
        let places = BenchData.places()
        let people = BenchData.people(count: rows)
        var result = ComparisonResult(workload: "insert+cap", rows: rows)
        for _ in 0..<repeats {
            result.localStore.append(try onFreshStore("capture") { path in
                let store = try ObjectStore(path: path, entities: benchEntities)
                let replica = try SyncReplica(store: store)
                let context = try store.makeContext()
                let seconds = try measureSeconds { try StoreBenchmark.insert(people, places, into: context) }
                // The save must have been recorded: one change set holding every create.
                let recorded = try replica.localChangeSets(status: .pending)
                let creates = recorded.reduce(0) { $0 + $1.operations.count { if case .create = $0 { true } else { false } } }
                guard recorded.count == 1, creates == rows + places.count else {
                    throw BenchmarkFailure("the capture recorded \(recorded.count) change set(s) with \(creates) creates, not 1 with \(rows + places.count)")
                }
                return seconds
            })
            result.raw.append(try onFreshStore("capture-raw") { path in
                _ = try ObjectStore(path: path, entities: benchEntities)
                let database = try RawDatabase(path: path)
                return try measureSeconds { try database.insert(people: people, places: places) }
            })
        }
        return result
    }

    // MARK: Merge

    /// Changes per second (best run) of the two merge workloads.
    private func merge() throws -> (applied: Double, stale: Double) {
        let objects = SyncBenchmark.mergeObjects
        let saves = max(1, SyncBenchmark.mergeChanges / objects)
        print("")
        print("merge: \(grouped(objects)) people synced A -> B, then A commits \(saves) saves x \(grouped(objects)) attribute sets; B applies them in one batch")
        var applied: [Double] = []
        var stale: [Double] = []
        var creations: [Double] = []
        var changes = 0
        var creationOperations = 0
        for _ in 0..<repeats {
            try onFreshStore("merge-a") { pathA in
                let (replicaA, initial, batch) = try MergeWorkload.prepareBatch(at: pathA, objects: objects, saves: saves)
                changes = MergeWorkload.setCount(batch)

                // Applied: every incoming write wins.
                let appliedSeconds = try onFreshStore("merge-b") { pathB -> Double in
                    let replicaB = try SyncReplica(store: try ObjectStore(path: pathB, entities: benchEntities),
                                                   wallClock: FakeWallClock(start: 1_700_003_600_000).next)
                    creationOperations = initial.reduce(0) { $0 + $1.operations.count }
                    creations.append(Double(creationOperations) / (try measureSeconds { _ = try replicaB.apply(initial) }))
                    var result: SyncReplica.MergeResult?
                    let seconds = try measureSeconds { result = try replicaB.apply(batch) }
                    guard result?.applied.count == batch.count, try replicaB.records("Person") == replicaA.records("Person") else {
                        throw BenchmarkFailure("after the merge B's people differ from A's")
                    }
                    return seconds
                }
                applied.append(Double(changes) / appliedSeconds)

                // Stale: B wrote every attribute A changes, later, before A's batch arrives.
                let staleSeconds = try onFreshStore("merge-b-stale") { pathB -> Double in
                    let storeB = try ObjectStore(path: pathB, entities: benchEntities)
                    let replicaB = try SyncReplica(store: storeB, wallClock: FakeWallClock(start: 1_700_003_600_000).next)
                    _ = try replicaB.apply(initial)
                    let contextB = try storeB.makeContext()
                    try MergeWorkload.commitAttributeChanges(try contextB.fetchAll(Person.self), saves: MergeWorkload.attributeCount, in: contextB, round: 2)
                    let before = try replicaB.records("Person")
                    let journalBefore = try replicaB.lastConflictNumber()
                    var result: SyncReplica.MergeResult?
                    let seconds = try measureSeconds { result = try replicaB.apply(batch) }
                    let after = try replicaB.records("Person")
                    guard result?.applied.count == batch.count, after == before else {
                        let differing = zip(before, after).first { $0 != $1 }
                        throw BenchmarkFailure("stale changes altered B's people (\(after.count) of \(before.count)), e.g. \(String(describing: differing))")
                    }
                    let journaled = try replicaB.conflictCount(after: journalBefore)
                    guard journaled == changes else {
                        throw BenchmarkFailure("\(journaled) of \(changes) stale changes were journaled as conflicts")
                    }
                    return seconds
                }
                stale.append(Double(changes) / staleSeconds)
            }
        }
        print("best of \(repeats) run(s), \(grouped(changes)) changes per batch")
        print("  applied: \(grouped(Int(applied.max() ?? 0))) changes/s (median \(grouped(Int(median(applied)))))")
        print("  stale:   \(grouped(Int(stale.max() ?? 0))) changes/s (median \(grouped(Int(median(stale))))), every one journaled as a conflict")
        print("  creations: \(grouped(Int(creations.max() ?? 0))) operations/s (median \(grouped(Int(median(creations))))), "
              + "B merging A's first \(grouped(creationOperations)) operations (each person's create, 8 sets and link; the places) in one batch")
        return (applied.max() ?? 0, stale.max() ?? 0)
    }

    private func onFreshStore<T>(_ label: String, _ body: (String) throws -> T) throws -> T {
        let path = temporaryStorePath(label)
        defer { removeStoreFile(path) }
        return try body(path)
    }
}

/// The data steps the merge and end-to-end workloads share.
enum MergeWorkload {
    /// Replica A on a new store at `path` with `objects` people, the change sets creating them
    /// (`initial`), and the change sets of `saves` later saves each setting one attribute of
    /// every person (`batch`). A's clock runs an hour behind the merging replicas', so their own
    /// writes win every conflict.
    static func prepareBatch(at path: String, objects: Int, saves: Int) throws -> (replica: SyncReplica, initial: [ChangeSet], batch: [ChangeSet]) {
        let store = try ObjectStore(path: path, entities: benchEntities)
        let replica = try SyncReplica(store: store, wallClock: FakeWallClock(start: 1_700_000_000_000).next)
        let context = try store.makeContext()
        let people = try createPeople(objects, in: context)
        let initial = try replica.changeSets(missingFrom: VersionVector())
        let vectorAfterCreate = try replica.versionVector()
        try commitAttributeChanges(people, saves: saves, in: context, round: 1)
        return (replica, initial, try replica.changeSets(missingFrom: vectorAfterCreate))
    }

    /// The attributes the change rounds cycle through.
    static let attributeCount = 8

    /// Creates `count` people with all attributes set (and 100 places) in `saves` saves.
    static func createPeople(_ count: Int, in context: ObjectContext, saves: Int = 1) throws -> [Person] {
        let places = StoreBenchmark.insertPlaces(BenchData.places(), into: context)
        let records = BenchData.people(count: count)
        let chunk = max(1, (count + saves - 1) / saves)
        for start in stride(from: 0, to: count, by: chunk) {
            for record in records[start..<min(count, start + chunk)] { StoreBenchmark.insertPerson(record, places: places, into: context) }
            try context.save()
        }
        return try context.fetchAll(Person.self)
    }

    /// `saves` saves; save `k` sets attribute `k % 8` of every person to a new (different) value.
    static func commitAttributeChanges(_ people: [Person], saves: Int, in context: ObjectContext, round: Int) throws {
        let moods = Mood.allCases
        for save in 0..<saves {
            let tag = round * 1_000 + save
            for (index, person) in people.enumerated() {
                let value = tag * 1_000_000 + index
                switch save % attributeCount {
                case 0: person.name = "Person \(value)"
                case 1: person.email = "person\(value)@example.org"
                case 2: person.age = value
                case 3: person.score = Double(value) * 0.5
                case 4: person.born = Date(timeIntervalSince1970: 700_000_000 + Double(value))
                // Always a real change: an unchanged value records no write (and wins nothing).
                case 5: person.isActive.toggle()
                case 6: person.mood = moods[((moods.firstIndex(of: person.mood) ?? 0) + 1) % moods.count]
                default: person.token = UUID()
                }
            }
            try context.save()
        }
    }

    /// The `set` operations in `changeSets`.
    static func setCount(_ changeSets: [ChangeSet]) -> Int {
        changeSets.reduce(0) { $0 + $1.operations.count { if case .set = $0 { true } else { false } } }
    }
}

/// A wall clock that starts at a fixed time and advances one millisecond per reading.
final class FakeWallClock: Sendable {
    private let readings = Counter()
    private let start: UInt64

    init(start: UInt64) { self.start = start }

    var next: @Sendable () -> UInt64 { { [self] in start + readings.increment() } }
}

/// A thread-safe counter.
final class Counter: Sendable {
    private let value = LockedValue<UInt64>(0)

    func increment() -> UInt64 { value.withLock { $0 += 1; return $0 } }
}

/// A value behind a lock, for the few shared values of the benchmarks.
final class LockedValue<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// One figure of the summary with its goal.
struct GoalFigure {
    let name: String
    let value: Double
    let goal: Double
    let unit: String

    var isMet: Bool { value >= goal }

    static func print(_ figures: [GoalFigure], repeats: Int) {
        Swift.print("sync summary (best of \(repeats) run(s)):")
        Swift.print(pad("figure", to: 30, right: false) + pad("measured", to: 22, right: true) + pad("goal", to: 22, right: true) + "  met")
        for figure in figures {
            Swift.print(pad(figure.name, to: 30, right: false) + pad(format(figure.value, figure.unit), to: 22, right: true)
                        + pad(">= " + format(figure.goal, figure.unit), to: 22, right: true) + (figure.isMet ? "  yes" : "  NO"))
        }
    }

    private static func format(_ value: Double, _ unit: String) -> String {
        unit == "x" ? String(format: "%.2fx", value) : grouped(Int(value.rounded())) + " " + unit
    }
}

import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import Synchronization
import TestSupport
import Testing

/// Replicas make random edits on a schema with every relationship shape and delete rule, then
/// exchange change sets in random orders, batches, duplicates and partitions. After a full
/// exchange every replica must hold the identical graph, and the graph must be whole.
///
/// Every third seed runs one replica on an older version of the schema, upgraded before the final
/// comparison (CONTRACT.md §8). Every seed runs twice, the second time with replicas compacting
/// their history below the stable vector at random moments and after the first full exchange,
/// and both runs must end with the same graphs and journals (CONTRACT.md "History compaction").
/// CI runs 500 seeds. `SIMULATION_SEEDS=5000` runs more; `SIMULATION_FIRST_SEED=5001` starts
/// further on (so several processes can share a long run); `SIMULATION_SEED=42` replays one.
@Suite struct SimulationTests {
    static var seeds: [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let one = environment["SIMULATION_SEED"].flatMap(UInt64.init) { return [one] }
        let count = environment["SIMULATION_SEEDS"].flatMap(UInt64.init) ?? 500
        let first = environment["SIMULATION_FIRST_SEED"].flatMap(UInt64.init) ?? 1
        return Array(first..<(first + count))
    }

    /// What the runs of some seeds found: problems, and the resolutions they exercised.
    struct Tally: Sendable {
        var failures: [String] = []
        var resolutions: [ConflictEntry.Kind: Int] = [:]
        var selfInverseResolutions = 0
        var selfInverseBounds: [ConflictEntry.Kind: Int] = [:]
        var olderAppRuns = 0
        var olderAppRunsThatKept = 0
        /// Compactions of the simulated server's log that removed entries, and pulls from before its compaction point it answered.
        var serverCompactions = 0, serverPullsAcrossCompaction = 0, serverSnapshotTails = 0
        /// Compacted entries the simulated server folded into its log's floor.
        var serverEntriesFolded = 0
        /// What the compactions of the compacting runs dropped, summed.
        var compaction = CompactionTally()

        /// Runs the seeds `nextSeed` hands out until it has none left, stopping after five failures.
        static func running(_ nextSeed: () -> UInt64?) -> Tally {
            var tally = Tally()
            while let seed = nextSeed() {
                do {
                    var simulation = try Simulation(seed: seed, mixedVersions: true)
                    if let problem = try simulation.run() { tally.failures.append("seed \(seed): \(problem)") }
                    tally.serverCompactions += simulation.serverCompactions
                    tally.serverPullsAcrossCompaction += simulation.serverPullsAcrossCompaction
                    tally.serverSnapshotTails += simulation.serverSnapshotTails
                    tally.serverEntriesFolded += simulation.serverEntriesFolded
                    // The same run with compactions at random moments must end exactly as this one.
                    var compacting = try Simulation(seed: seed, mixedVersions: true, compacting: true)
                    if let problem = try compacting.run() {
                        tally.failures.append("seed \(seed): with compaction, \(problem)")
                    } else if let difference = try compacting.outcomeDifference(from: simulation) {
                        tally.failures.append("seed \(seed): compaction changed an outcome: \(difference)")
                    }
                    tally.compaction.add(compacting.compaction)
                    if simulation.olderIndex != nil {
                        tally.olderAppRuns += 1
                        if simulation.keptByOlderReplica > 0 { tally.olderAppRunsThatKept += 1 }
                    }
                    for replica in simulation.replicas {
                        for entry in try replica.replica.conflicts() {
                            tally.resolutions[entry.kind, default: 0] += 1
                            if entry.entity == "Peer" { tally.selfInverseResolutions += 1 }
                            if entry.entity == "Pal" { tally.selfInverseBounds[entry.kind, default: 0] += 1 }
                        }
                    }
                } catch {
                    tally.failures.append("seed \(seed): threw \(error)")
                }
                if tally.failures.count >= 5 { break }
            }
            return tally
        }

        mutating func add(_ other: Tally) {
            failures += other.failures
            resolutions.merge(other.resolutions, uniquingKeysWith: +)
            selfInverseResolutions += other.selfInverseResolutions
            selfInverseBounds.merge(other.selfInverseBounds, uniquingKeysWith: +)
            olderAppRuns += other.olderAppRuns
            olderAppRunsThatKept += other.olderAppRunsThatKept
            serverCompactions += other.serverCompactions
            serverPullsAcrossCompaction += other.serverPullsAcrossCompaction
            serverSnapshotTails += other.serverSnapshotTails
            serverEntriesFolded += other.serverEntriesFolded
            compaction.add(other.compaction)
        }
    }

    @Test func replicasConvergeForEverySeed() throws {
        // Seeds are independent: two threads share them, so the run takes both cores when it can
        // (threads of their own, not the concurrency pool's, which other tests wait on). Each
        // thread takes the next seed when it is done with one: seeds differ in length, and halves
        // fixed in advance would leave one thread finishing alone.
        let seeds = SimulationTests.seeds
        let nextIndex = Mutex(0)
        let parts = Mutex<[Tally]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            let part = Tally.running {
                nextIndex.withLock { index in
                    defer { index += 1 }
                    return index < seeds.count ? seeds[index] : nil
                }
            }
            parts.withLock { $0.append(part) }
        }
        var tally = Tally()
        for part in parts.withLock({ $0 }) { tally.add(part) }
        let failures = tally.failures.sorted()
        let (resolutions, selfInverseResolutions, selfInverseBounds) = (tally.resolutions, tally.selfInverseResolutions, tally.selfInverseBounds)
        let (olderAppRuns, olderAppRunsThatKept) = (tally.olderAppRuns, tally.olderAppRunsThatKept)
        for failure in failures {
            Issue.record("\(failure)\nreplay with SIMULATION_SEED=\(failure.split(separator: ":")[0].dropFirst(5)) swift test --filter SimulationTests")
        }
        #expect(failures.isEmpty)
        // The runs must actually exercise the resolution rules, not only conflict-free exchanges.
        if SimulationTests.seeds.count >= 100 {
            let kinds: [ConflictEntry.Kind] = [.attribute, .updateVersusDelete, .toOne, .move, .referenceDropped, .cascadedDelete, .voidedDelete,
                                               .uniqueMerged, .aboveMaxCount, .belowMinCount, .counterSaturated]
            for kind in kinds {
                #expect(resolutions[kind, default: 0] > 0, "no \(kind.rawValue) resolution in \(SimulationTests.seeds.count) seeds: \(resolutions)")
            }
            #expect(selfInverseResolutions > 0, "no resolution on the self-inverse relationships in \(SimulationTests.seeds.count) seeds")
            for kind in [ConflictEntry.Kind.aboveMaxCount, .belowMinCount] {
                #expect(selfInverseBounds[kind, default: 0] > 0, "no \(kind.rawValue) on the bounded self-inverse Pal.pals in \(SimulationTests.seeds.count) seeds")
            }
            // Older apps must actually have kept what they did not know, in most of their runs.
            #expect(olderAppRunsThatKept * 2 > olderAppRuns, "\(olderAppRunsThatKept) of \(olderAppRuns) runs with an older app kept change sets")
            #expect(tally.serverCompactions > 0 && tally.serverPullsAcrossCompaction > 0 && tally.serverSnapshotTails > 0 && tally.serverEntriesFolded > 0,
                    "\(tally.serverCompactions) server compactions, \(tally.serverPullsAcrossCompaction) pulls answered across a compaction point, \(tally.serverSnapshotTails) snapshots followed by their tail, \(tally.serverEntriesFolded) entries folded into the floor")
            // Compactions must actually drop every kind they drop, not only run.
            for kind in CompactionTally.kinds {
                #expect(tally.compaction.rows[kind.name, default: 0] > 0, "no \(kind.name) dropped in \(SimulationTests.seeds.count) seeds: \(tally.compaction)")
            }
        }
        print("simulation: \(tally.compaction)")
        print("simulation: \(SimulationTests.seeds.count) seeds (\(olderAppRuns) with an older app, \(olderAppRunsThatKept) of them keeping change sets), resolutions \(resolutions.sorted { $0.key.rawValue < $1.key.rawValue }), \(selfInverseResolutions) on Peer, bounds on Pal \(selfInverseBounds.sorted { $0.key.rawValue < $1.key.rawValue })")
    }
}

/// One seeded run.
struct Simulation {
    let seed: UInt64
    var random: SeededGenerator
    let replicas: [TestReplica]
    let clocks: [FakeClock]
    /// The replica on ``olderSchema()`` (an older version of the app), if the run has one.
    let olderIndex: Int?
    /// How many change sets the older replica kept for the newer schema before its upgrade.
    private(set) var keptByOlderReplica = 0
    /// What the simulated server did (``SimulationServer``).
    private(set) var serverCompactions = 0, serverPullsAcrossCompaction = 0, serverSnapshotTails = 0, serverEntriesFolded = 0
    /// Whether replicas compact their history at random moments (decided by a generator of their
    /// own, so the run's edits and exchanges are those of the run without compaction).
    let compacting: Bool
    private var compactionRandom: SeededGenerator
    /// What the compactions dropped.
    private(set) var compaction = CompactionTally()

    /// With `mixedVersions`, every third seed runs its last replica on ``olderSchema()``: it edits
    /// through `SyncReplica.edit` and is upgraded to the full schema before the final comparison.
    /// Which seeds do is decided without drawing from the generator, so the others replay as
    /// without it.
    init(seed: UInt64, mixedVersions: Bool = false, compacting: Bool = false) throws {
        self.seed = seed
        random = SeededGenerator(seed: seed)
        self.compacting = compacting
        compactionRandom = SeededGenerator(seed: ~seed)
        let count = Int.random(in: 2...6, using: &random)
        let olderIndex = mixedVersions && seed % 3 == 0 ? count - 1 : nil
        var clocks: [FakeClock] = []
        var replicas: [TestReplica] = []
        for index in 0..<count {
            let clock = FakeClock()
            // Skewed clocks make HLC ties and reversals likely.
            clock.set(1_700_000_000_000 + UInt64.random(in: 0...3, using: &random))
            clocks.append(clock)
            let name = "sim\(seed)-\(index)"
            replicas.append(index == olderIndex
                ? try TestReplica(clock: clock, name: name, replicaID: random.uuid(), schema: try Simulation.olderSchema(), in: .memoryBackedIfAvailable)
                : try TestReplica(clock: clock, name: name, replicaID: random.uuid(), entities: simulationEntities, in: .memoryBackedIfAvailable))
        }
        self.clocks = clocks
        self.replicas = replicas
        self.olderIndex = olderIndex
    }

    /// The simulation's schema as an older version of the app had it: without `Tally` (an
    /// entity), without `Member.labels`/`Label.members` (a relationship), with `Member.note` not
    /// yet optional and without the mood `away` (an enum case); `Team` was `Crew` (which makes
    /// the one-to-one `Crew.leader`/`Member.leads` recorded from the other side) and its `score`
    /// was `points`.
    static func olderSchema() throws -> SchemaDocument {
        var document = try ObjectStore.inMemory(entities: simulationEntities).schemaDocument
        document.entities.removeAll { $0.name == "Tally" }
        for index in document.entities.indices {
            if document.entities[index].name == "Team" {
                document.entities[index].name = "Crew"
                document.entities[index].originalName = nil
                for attribute in document.entities[index].attributes.indices where document.entities[index].attributes[attribute].name == "score" {
                    document.entities[index].attributes[attribute].name = "points"
                    document.entities[index].attributes[attribute].originalName = nil
                }
            }
            for relationship in document.entities[index].relationships.indices where document.entities[index].relationships[relationship].target == "Team" {
                document.entities[index].relationships[relationship].target = "Crew"
            }
            let entity = document.entities[index].name
            document.entities[index].relationships.removeAll { (entity, $0.name) == ("Member", "labels") || (entity, $0.name) == ("Label", "members") }
            for attribute in document.entities[index].attributes.indices {
                switch (entity, document.entities[index].attributes[attribute].name) {
                case ("Member", "note"):
                    document.entities[index].attributes[attribute].optional = false
                    document.entities[index].attributes[attribute].swiftType = "String"
                    document.entities[index].attributes[attribute].columns[0].nullable = false
                    document.entities[index].attributes[attribute].defaultValues = [.text("")]
                case ("Peer", "mood"):
                    document.entities[index].attributes[attribute].rawValues = [.text("calm"), .text("busy")]
                default:
                    continue
                }
            }
        }
        document.versionHash = SchemaDocument.hash(of: document.entities)
        return document
    }

    /// Runs the scenario; returns a description of the first problem, or `nil` when all is well.
    mutating func run() throws -> String? {
        try seedSharedGraph()
        var server = try SimulationServer(seed: seed, replicas: replicas)
        if let problem = try playRounds(Int.random(in: 10...30, using: &random), server: &server) { return problem }
        try exchangeFully()
        // Everything is stable now: compactions drop most of the history, and the rounds after
        // them merge on top of what is left.
        if compacting {
            for index in replicas.indices where index != olderIndex { try compact(replicas[index].replica, server: server) }
        }
        if let problem = try playRounds(Int.random(in: 5...12, using: &random), server: &server) { return problem }
        try exchangeFully()
        let vectors = try replicas.map { try $0.replica.versionVector() }
        if Set(vectors).count != 1 { return "version vectors differ after full exchange: \(vectors)" }
        if let problem = try server.finish(replicas) { return problem }
        (serverCompactions, serverPullsAcrossCompaction, serverSnapshotTails, serverEntriesFolded) =
            (server.compactions, server.answeredPullsBeforeCompactionPoint, server.snapshotsFollowedByTheirTail, server.entriesFolded)
        let digests = try replicas.map { try $0.digest() }
        for index in 1..<digests.count where digests[index] != digests[0] && index != olderIndex {
            return Simulation.difference(digests[0], digests[index], between: 0, and: index)
        }
        if let olderIndex {
            // The older app is upgraded: its store must equal the others.
            keptByOlderReplica = try replicas[olderIndex].replica.keptChangeSetCount()
            let upgraded = try SyncReplica(store: try ObjectStore(path: replicas[olderIndex].path, entities: simulationEntities),
                                           wallClock: { 0 }, newReplicaID: UUID())
            if try upgraded.keptChangeSetCount() != 0 { return "the upgraded replica \(olderIndex) still keeps change sets" }
            let expected = try storeDigest(replicas[0].path, columnsByName: true), actual = try storeDigest(replicas[olderIndex].path, columnsByName: true)
            if actual != expected { return "upgraded " + Simulation.difference(expected, actual, between: 0, and: olderIndex) }
        }
        for (index, replica) in replicas.enumerated() {
            if index != olderIndex, let problem = try boundsProblem(replica) { return "replica \(index): \(problem)" }
            let problems = try replica.integrityProblems()
            if !problems.isEmpty { return "replica \(index) integrity: \(problems)" }
        }
        return nil
    }

    /// Random edits and exchanges between random replicas, with partitions; in a compacting run
    /// a replica sometimes compacts after a round.
    /// The simulated server takes its step (``SimulationServer``) before each round; returns what
    /// it found wrong, if anything.
    mutating func playRounds(_ rounds: Int, server: inout SimulationServer) throws -> String? {
        var partitioned: Set<Int> = []
        for _ in 0..<rounds {
            if let problem = try server.step(replicas) { return problem }
            if random.chance(0.15) {
                partitioned = Set((0..<replicas.count).filter { _ in random.chance(0.3) })
            }
            if random.chance(0.6) {
                let index = Int.random(in: 0..<replicas.count, using: &random)
                if index == olderIndex { try editOnOlderSchema(replicas[index]) } else { try edit(replicas[index]) }
            } else {
                let from = Int.random(in: 0..<replicas.count, using: &random)
                let to = Int.random(in: 0..<replicas.count, using: &random)
                if from != to && !(partitioned.contains(from) || partitioned.contains(to)) {
                    try exchange(from: replicas[from], to: replicas[to])
                }
            }
            if compacting && compactionRandom.chance(0.3) {
                let candidates = replicas.indices.filter { $0 != olderIndex }
                try compact(replicas[candidates[Int.random(in: 0..<candidates.count, using: &compactionRandom)]].replica, server: server)
            }
        }
        return nil
    }

    /// Exchanges between every pair until every vector is equal.
    mutating func exchangeFully() throws {
        for _ in 0..<replicas.count + 1 {
            for to in replicas.indices {
                for from in replicas.indices where from != to { try exchange(from: replicas[from], to: replicas[to]) }
            }
        }
    }

    /// A causally stable vector, by syncd's rule (CONTRACT.md §5.1): what every replica, the
    /// simulated server included, has applied, lowered to the vector of every change set not yet
    /// everywhere, on any replica (pushed or not, in a real deployment). Change sets every replica
    /// holds lower nothing, however concurrent.
    func stableVector(server: SimulationServer) throws -> VersionVector {
        let vectors = try replicas.map { try $0.replica.versionVector() } + [try server.engine.versionVector()]
        let everywhere = vectors.dropFirst().reduce(vectors[0]) { SyncReplica.meet($0, $1) }
        var stable = everywhere
        for replica in replicas {
            for changeSet in try replica.replica.changeSets(missingFrom: everywhere) {
                stable = SyncReplica.meet(stable, changeSet.vector)
            }
        }
        return stable
    }

    /// `replica` has its change sets at or below the stable vector acknowledged, as a server
    /// would, and compacts. (Never the older app's: its upgrade merges its whole history again.)
    mutating func compact(_ replica: SyncReplica, server: SimulationServer) throws {
        let stable = try stableVector(server: server)
        try replica.mark(try replica.localChangeSets(status: .pending).map(\.dot).filter { stable.covers($0) }, as: .acknowledged)
        // An older app edits objects whose delete it could not apply (it knows their entity under
        // another name): deleted objects keep their last values while it is around.
        compaction.add(try replica.compactHistory(stable: stable, droppingDeletedObjects: olderIndex == nil))
    }

    /// How this run's outcome (every replica's graph and journal) differs from `other`'s, `nil` when it does not.
    func outcomeDifference(from other: Simulation) throws -> String? {
        for index in replicas.indices {
            let digest = try replicas[index].digest(), otherDigest = try other.replicas[index].digest()
            if digest != otherDigest { return "replica \(index): " + Simulation.difference(otherDigest, digest, between: index, and: index) }
            let journal = try replicas[index].replica.conflicts(), otherJournal = try other.replicas[index].replica.conflicts()
            if journal != otherJournal { return "replica \(index) journals \(journal.count) entries, \(otherJournal.count) without compaction: \(journal) vs \(otherJournal)" }
        }
        return nil
    }

    /// How two digests differ, line by line.
    static func difference(_ first: String, _ other: String, between firstIndex: Int, and otherIndex: Int) -> String {
        let firstLines = Set(first.split(separator: "\n")), otherLines = Set(other.split(separator: "\n"))
        return "replica \(otherIndex) differs from replica \(firstIndex):\n only in \(firstIndex): \(firstLines.subtracting(otherLines).sorted())\n only in \(otherIndex): \(otherLines.subtracting(firstLines).sorted())"
    }

    /// A small graph every replica starts from, so concurrent edits meet on shared objects.
    mutating func seedSharedGraph() throws {
        let context = replicas[0].context
        let teams = (0..<2).map { index -> Team in
            let team = Team()
                team._$entityState.objectID = random.uuid()
            team.name = "team\(index)"
            context.insert(team)
            return team
        }
        let members = (0..<4).map { index -> Member in
            let member = Member()
                member._$entityState.objectID = random.uuid()
            member.name = "member\(index)"
            member.team = teams[index % 2]
            return member
        }
        members[1].manager = members[0]
        teams[0].leader = members[0]
        for index in 0..<2 {
            let label = Label()
                label._$entityState.objectID = random.uuid()
            label.text = "label\(index)"
            members[index].addToLabels(label)
        }
        var peers: [Peer] = []
        for index in 0..<4 { peers.append(insertPeer(named: "peer\(index)", into: context)) }
        peers[0].partner = peers[1]
        peers[2].twin = peers[3]
        peers[0].addToFriends(peers[2])
        peers[3].addToSponsors(peers[1])
        seedBoundedGraph(into: context)
        for index in 0..<2 { insertTally(named: "tally\(index)", into: context) }
        try context.save()
        for index in replicas.indices.dropFirst() { try exchange(from: replicas[0], to: replicas[index]) }
    }

    /// A new `Peer` with a seeded identifier, inserted into `context`.
    mutating func insertPeer(named name: String, into context: ObjectContext) -> Peer {
        let peer = Peer()
        peer._$entityState.objectID = random.uuid()
        peer.name = name
        context.insert(peer)
        return peer
    }

    /// A new `Tally` (merge-policy attributes) with a seeded identifier, inserted into `context`.
    mutating func insertTally(named name: String, into context: ObjectContext) {
        let tally = Tally()
        tally._$entityState.objectID = random.uuid()
        tally.name = name
        context.insert(tally)
    }

    /// Sends what `to` lacks from `from` in random batches, sometimes repeating one.
    mutating func exchange(from: TestReplica, to: TestReplica) throws {
        let missing = try from.replica.changeSets(missingFrom: to.replica.versionVector())
        guard !missing.isEmpty else { return }
        var start = 0
        var previous: [ChangeSet] = []
        while start < missing.count {
            let size = Int.random(in: 1...max(1, missing.count - start), using: &random)
            var batch = Array(missing[start..<start + size])
            batch.shuffle(using: &random)
            if random.chance(0.2) { batch += previous }
            // Through the wire format, as a real exchange would go.
            let encoded = try ChangeSetCoding.encode(batch, base: try to.replica.versionVector())
            let decoded = try ChangeSetCoding.decode(encoded).changeSets
            if random.chance(0.05) { try expectRefusedWhole(decoded, withMisTypedMoodBy: to) }
            _ = try to.replica.apply(decoded)
            previous = batch
            start += size
        }
        if to.hasContext { try to.context.refresh() }
    }

    /// `batch` with one `set` of a mood of the wrong type (an integer where a case's text raw value
    /// belongs) appended to its last change set is refused with `schema_mismatch`, and `replica`
    /// keeps its version vector.
    func expectRefusedWhole(_ batch: [ChangeSet], withMisTypedMoodBy replica: TestReplica) throws {
        var forged = batch
        forged[forged.count - 1].operations.append(.set(entity: "Peer", id: UUID(), attribute: "mood", values: [.integer(7)]))
        let before = try replica.replica.versionVector()
        let error = try #require(throws: SyncError.self) { try replica.replica.apply(forged) }
        #expect(error.code == .schemaMismatch && error.message.contains("Peer.mood"), "\(error)")
        #expect(try replica.replica.versionVector() == before)
    }

    /// A few random edits by the older app (``olderSchema()``), without Swift types, committed as
    /// one change set (none if a delete rule refuses it).
    mutating func editOnOlderSchema(_ replica: TestReplica) throws {
        let teams = try replica.replica.records("Crew").map(\.id)
        let members = try replica.replica.records("Member").map(\.id)
        let peers = try replica.replica.records("Peer").map(\.id)
        var deleted: Set<UUID> = []
        func pick(_ ids: [UUID]) -> UUID? {
            let live = ids.filter { !deleted.contains($0) }
            return live.isEmpty ? nil : live[Int.random(in: 0..<live.count, using: &random)]
        }
        let edits = Int.random(in: 1...4, using: &random)
        do {
            try replica.replica.edit { editor in
                for _ in 0..<edits {
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0:
                        try editor.insert("Crew", id: random.uuid(), values: ["name": .text("ot\(Int.random(in: 0..<100, using: &random))")])
                    case 1:
                        try editor.insert("Member", id: random.uuid(), values: ["name": .text("om\(Int.random(in: 0..<100, using: &random))")])
                    case 2:
                        if let team = pick(teams) { try editor.update("Crew", id: team, values: ["points": .integer(Int64.random(in: 0..<10, using: &random))]) }
                    case 3:
                        if let member = pick(members) {
                            try editor.update("Member", id: member, values: ["level": .integer(Int64.random(in: 0..<10, using: &random)),
                                                                             "note": .text("o\(Int.random(in: 0..<10, using: &random))")])
                        }
                    case 4:
                        if let member = pick(members), let team = pick(teams) { try editor.link("Member", id: member, relationship: "team", target: team) }
                    case 5:
                        if let member = pick(members), let manager = pick(members), member != manager {
                            try editor.link("Member", id: member, relationship: "manager", target: manager)
                        }
                    case 6:
                        if let member = pick(members) {
                            deleted.insert(member)
                            try editor.delete("Member", id: member)
                        }
                    case 7:
                        if let team = pick(teams) {
                            deleted.insert(team)
                            try editor.delete("Crew", id: team)
                        }
                    case 8:
                        // Recorded from the crew's side under the older names, from the member's under the newer.
                        if let team = pick(teams), let member = pick(members) { try editor.link("Crew", id: team, relationship: "leader", target: member) }
                    default:
                        if let peer = pick(peers) { try editor.update("Peer", id: peer, values: ["mood": .text(random.chance(0.5) ? "calm" : "busy")]) }
                    }
                }
            }
        } catch let error as StoreError where [.deleteDenied, .countViolation, .objectNotFound].contains(error.code) {
            // Refused as a context's save would be: the commit is rolled back whole.
        }
    }

    /// A few random edits on one replica, then a save (rolled back if a delete rule refuses it).
    mutating func edit(_ replica: TestReplica) throws {
        let context = replica.context
        let teams = try context.fetchAll(Team.self)
        let members = try context.fetchAll(Member.self)
        let labels = try context.fetchAll(Label.self)
        let peers = try context.fetchAll(Peer.self)
        let tallies = try context.fetchAll(Tally.self)
        func pick<T>(_ objects: [T]) -> T? { objects.isEmpty ? nil : objects[Int.random(in: 0..<objects.count, using: &random)] }
        let edits = Int.random(in: 1...4, using: &random)
        for _ in 0..<edits {
            switch Int.random(in: 0..<33, using: &random) {
            case 0:
                let team = Team()
                team._$entityState.objectID = random.uuid()
                team.name = "t\(Int.random(in: 0..<100, using: &random))"
                context.insert(team)
            case 1, 2:
                let member = Member()
                member._$entityState.objectID = random.uuid()
                member.name = "m\(Int.random(in: 0..<100, using: &random))"
                context.insert(member)
                if let team = pick(teams), random.chance(0.7) { member.team = team }
            case 3:
                let label = Label()
                label._$entityState.objectID = random.uuid()
                label.text = "l\(Int.random(in: 0..<100, using: &random))"
                context.insert(label)
            case 4:
                pick(teams)?.score = Int.random(in: 0..<10, using: &random)
            case 5:
                if let member = pick(members) {
                    member.level = Int.random(in: 0..<10, using: &random)
                    member.note = random.chance(0.3) ? nil : "n\(Int.random(in: 0..<10, using: &random))"
                }
            case 6:
                pick(members)?.team = random.chance(0.2) ? nil : pick(teams)
            case 7:
                if let team = pick(teams), let member = pick(team.members) {
                    team.insertIntoMembers(member, at: Int.random(in: 0...team.members.count, using: &random))
                }
            case 8:
                pick(teams)?.leader = random.chance(0.2) ? nil : pick(members)
            case 9:
                if let member = pick(members) {
                    let manager = pick(members)
                    member.manager = manager === member ? nil : manager
                }
            case 10:
                if let member = pick(members), let label = pick(labels) { member.addToLabels(label) }
            case 11:
                if let member = pick(members), let label = pick(Array(member.labels).sorted { $0.objectID.uuidString < $1.objectID.uuidString }) {
                    member.removeFromLabels(label)
                }
            case 12:
                if let team = pick(teams) { context.delete(team) }
            case 13, 14:
                if let member = pick(members) { context.delete(member) }
            case 15:
                if let label = pick(labels) { context.delete(label) }
            case 16:
                let peer = insertPeer(named: "p\(Int.random(in: 0..<100, using: &random))", into: context)
                // Tags from a small set, so that replicas create the same one concurrently.
                if random.chance(0.5) { peer.tag = "tag\(Int.random(in: 0..<4, using: &random))" }
                if let other = pick(peers), random.chance(0.5) { peer.addToFriends(other) }
                if let mood = pick(PeerMood.allCases), let other = pick(peers) { other.mood = mood }
            case 17, 18:
                // Self-inverse to-one, from either end; sometimes onto itself.
                pick(peers)?.partner = random.chance(0.2) ? nil : pick(peers)
            case 19 where random.chance(0.2):
                // Retagging after a merge leaves the merge as it is.
                pick(peers)?.tag = random.chance(0.5) ? nil : "tag\(Int.random(in: 0..<8, using: &random))"
            case 19:
                pick(peers)?.twin = random.chance(0.3) ? nil : pick(peers)
            case 20:
                if let peer = pick(peers), let other = pick(peers) {
                    if random.chance(0.5) { peer.addToFriends(other) } else { peer.removeFromFriends(other) }
                }
            case 21:
                if let peer = pick(peers), let other = pick(peers) {
                    if random.chance(0.6) { peer.addToSponsors(other) } else { peer.removeFromSponsors(other) }
                }
            case 24, 25, 26:
                try editBoundedRelationship(in: context)
            case 27:
                insertTally(named: "y\(Int.random(in: 0..<100, using: &random))", into: context)
            case 28, 29:
                // Large steps on an Int16 counter: concurrent ones saturate it.
                if let tally = pick(tallies) {
                    tally.hits = Int16(clamping: Int(tally.hits) + Int.random(in: -30_000...30_000, using: &random))
                }
            case 30:
                if let tally = pick(tallies) {
                    tally.peak = Int.random(in: 0..<50, using: &random)
                    tally.low = Int.random(in: 0..<50, using: &random)
                }
            case 31:
                pick(tallies)?.marks.tags.append("k\(Int.random(in: 0..<20, using: &random))")
            case 32:
                if let tally = pick(tallies), random.chance(0.5) { context.delete(tally) }
            default:
                if let peer = pick(peers) { context.delete(peer) }
            }
        }
        do {
            try context.save()
        } catch let error as StoreError where [.deleteDenied, .uniqueViolation, .countViolation].contains(error.code) {
            context.rollback()
        }
    }
}

/// What compactions dropped, summed over runs.
struct CompactionTally: Sendable, CustomStringConvertible {
    /// The kinds of rows a compaction drops, as the report counts them.
    static let kinds: [(name: String, rows: @Sendable (SyncReplica.HistoryCompaction) -> Int)] = [
        ("change sets", \.changeSets), ("change sets keeping their stamps", \.changeSetStampsKept), ("tombstones", \.tombstones),
        ("field stamps", \.fieldStamps), ("positions", \.positions), ("removed edges", \.removedEdges),
        ("forgotten objects", \.forgottenObjects), ("edges of forgotten objects", \.forgottenEdges),
    ]
    var runs = 0
    var rows: [String: Int] = [:]
    var bytes: Int64 = 0

    mutating func add(_ report: SyncReplica.HistoryCompaction) {
        runs += 1
        bytes += report.bytes
        for kind in CompactionTally.kinds { rows[kind.name, default: 0] += kind.rows(report) }
    }

    mutating func add(_ other: CompactionTally) {
        runs += other.runs
        bytes += other.bytes
        rows.merge(other.rows, uniquingKeysWith: +)
    }

    var description: String {
        "\(runs) compactions dropped " + CompactionTally.kinds.map { "\(rows[$0.name, default: 0]) \($0.name)" }.joined(separator: ", ") + ", \(bytes) bytes"
    }
}

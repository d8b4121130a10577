import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import Testing
import TestSupport

/// A change set merged a slice of operations at a time (`SyncReplica.apply(slices:)`) leaves the
/// store, the journal, the stored history and the version vector exactly as merging it whole does.
@Suite struct SliceMergeTests {
    static let sliceSizes = [1, 2, 7]

    /// Random histories from the simulation's generator: every change set one replica lacks is
    /// merged whole into one copy of it and in slices of 1, 2 and 7 operations into others, one
    /// change set per transaction; the copies must stay identical, table by table.
    @Test func slicedMergesEqualWholeMergesForRandomHistories() throws {
        let seeds = ProcessInfo.processInfo.environment["SLICE_SEEDS"].flatMap(UInt64.init) ?? 60
        var tally = SliceTally()
        for seed in 0..<seeds {
            var simulation = try Simulation(seed: seed)
            try simulation.seedSharedGraph()
            var server = try SimulationServer(seed: seed, replicas: simulation.replicas)
            _ = try simulation.playRounds(Int.random(in: 8...20, using: &simulation.random), server: &server)
            let target = simulation.replicas[0]
            let copies = try SliceCopies(of: target, count: 1 + SliceMergeTests.sliceSizes.count)
            for source in simulation.replicas.dropFirst() {
                let missing = try source.replica.changeSets(missingFrom: copies.replicas[0].versionVector())
                for changeSet in missing.sorted(by: { $0.stamp < $1.stamp }) {
                    guard SyncReplica.isApplicable(changeSet, to: try copies.replicas[0].versionVector()) else { continue }
                    tally.add(changeSet)
                    let whole = try copies.replicas[0].apply([changeSet])
                    for (index, size) in SliceMergeTests.sliceSizes.enumerated() {
                        let sliced = try copies.replicas[index + 1].apply(slices: ChangeSetInSlices(changeSet, operationsPerSlice: size))
                        #expect(sliced == whole, "seed \(seed), change set \(changeSet.dot), slices of \(size)")
                    }
                }
            }
            try copies.expectIdentical("seed \(seed)")
        }
        // The histories must hold what crosses slices, or the comparison proves little.
        #expect(tally.multiOperation > 50 && tally.withDeletes > 5 && tally.withUnlinks > 5 && tally.withPositions > 5, "\(tally)")
    }

    // MARK: What crosses slices

    /// Objects created in one slice and linked, ordered and set in later ones (slices of one
    /// operation put every operation in a slice of its own).
    @Test func linksToObjectsCreatedInOtherSlices() throws {
        let (author, receiver) = try SliceScenario.pair()
        let team = Team(), first = Member(), second = Member()
        team.name = "Blue"
        first.name = "Ada"
        second.name = "Grace"
        author.context.insert(team)
        team.members = [first, second]
        team.leader = second
        first.manager = second
        try author.context.save()
        try SliceScenario.expectSlicedEqualsWhole(author.lastChangeSet(), onto: receiver)
    }

    /// The change set's operations in another order: a link whose target is created only in the
    /// last slice ends as it does when the change set is merged whole.
    @Test func linkBeforeTheCreateOfItsTarget() throws {
        let (author, receiver) = try SliceScenario.pair()
        let team = Team(), member = Member()
        author.context.insert(team)
        team.members = [member]
        try author.context.save()
        var changeSet = try author.lastChangeSet()
        let creates = changeSet.operations.filter { if case .create = $0 { true } else { false } }
        changeSet.operations = changeSet.operations.filter { if case .create = $0 { false } else { true } } + creates
        try SliceScenario.expectSlicedEqualsWhole(changeSet, onto: receiver)
    }

    /// A cascading delete against a concurrent addition to what it deletes: the delete rules are
    /// judged once, after the last slice.
    @Test func cascadingDeleteAgainstConcurrentAddition() throws {
        let (author, receiver) = try SliceScenario.pair()
        let team = Team(), member = Member()
        author.context.insert(team)
        team.members = [member]
        try author.context.save()
        try receiver.pull(from: author)
        let receiverTeam = try #require(try receiver.context.fetch(FetchDescriptor<Team>()).first)
        let added = Member()
        added.name = "concurrent"
        receiverTeam.members.append(added)
        try receiver.context.save()
        author.context.delete(team)
        try author.context.save()
        try SliceScenario.expectSlicedEqualsWhole(author.lastChangeSet(), onto: receiver)
    }

    /// A delete whose nullified edges are unlinks carrying its root, each in a slice of its own.
    @Test func unlinksCausedByADeleteInAnotherSlice() throws {
        let (author, receiver) = try SliceScenario.pair()
        let member = Member(), label = Label(), other = Label()
        author.context.insert(member)
        member.labels = [label, other]
        try author.context.save()
        try receiver.pull(from: author)
        author.context.delete(member)
        try author.context.save()
        var changeSet = try author.lastChangeSet()
        #expect(changeSet.operations.contains { if case .unlink = $0 { true } else { false } })
        // The delete last: the unlinks before it must still name its root.
        let deletes = changeSet.operations.filter { if case .delete = $0 { true } else { false } }
        changeSet.operations = changeSet.operations.filter { if case .delete = $0 { false } else { true } } + deletes
        try SliceScenario.expectSlicedEqualsWhole(changeSet, onto: receiver)
    }

    /// Ordered positions written in several slices against concurrent insertions.
    @Test func orderedPositionsAcrossSlices() throws {
        let (author, receiver) = try SliceScenario.pair()
        let team = Team()
        author.context.insert(team)
        team.members = [Member(), Member()]
        try author.context.save()
        try receiver.pull(from: author)
        let receiverTeam = try #require(try receiver.context.fetch(FetchDescriptor<Team>()).first)
        receiverTeam.members.insert(Member(), at: 1)
        try receiver.context.save()
        team.members = [Member(), team.members[1], Member(), team.members[0], Member()]
        try author.context.save()
        try SliceScenario.expectSlicedEqualsWhole(author.lastChangeSet(), onto: receiver)
    }

    /// Concurrent creations with one unique tag merge after the last slice, as for a whole change set.
    @Test func uniqueCollisionsJudgedOnEverySlice() throws {
        let (author, receiver) = try SliceScenario.pair()
        let mine = Peer()
        mine.tag = "shared"
        receiver.context.insert(mine)
        try receiver.context.save()
        let theirs = Peer(), friend = Peer()
        theirs.name = "theirs"
        author.context.insert(theirs)
        theirs.friends = [friend]
        theirs.tag = "shared"
        try author.context.save()
        try SliceScenario.expectSlicedEqualsWhole(author.lastChangeSet(), onto: receiver)
    }

    /// A counter set at its creation in one slice and its merge policies in others; concurrent
    /// attribute writes journal the same entries.
    @Test func countersPoliciesAndJournalAcrossSlices() throws {
        let (author, receiver) = try SliceScenario.pair()
        let tally = Tally()
        tally.name = "t"
        tally.hits = 3
        author.context.insert(tally)
        try author.context.save()
        try receiver.pull(from: author)
        let receiverTally = try #require(try receiver.context.fetch(FetchDescriptor<Tally>()).first)
        receiverTally.name = "receiver"
        receiverTally.peak = 9
        receiverTally.hits += 2
        try receiver.context.save()
        tally.name = "author"
        tally.peak = 4
        tally.low = 1
        tally.hits += 5
        let fresh = Tally()
        fresh.hits = 7
        author.context.insert(fresh)
        try author.context.save()
        let journaled = try SliceScenario.expectSlicedEqualsWhole(author.lastChangeSet(), onto: receiver)
        #expect(journaled > 0, "the scenario must journal something")
    }

    // MARK: One change set, one record

    /// The change set is recorded once: merged again it is already applied, with other contents
    /// it is refused, and a value the schema refuses in its last slice leaves the store as it was.
    @Test func recordedOnceAndAllOrNothing() throws {
        let (author, receiver) = try SliceScenario.pair()
        let team = Team()
        author.context.insert(team)
        team.members = [Member(), Member(), Member()]
        try author.context.save()
        let changeSet = try author.lastChangeSet()

        var bad = changeSet
        bad.operations.append(.set(entity: "Member", id: team.members[0].id, attribute: "level", values: [.text("high")]))
        let before = try sliceStoreDigest(receiver.path)
        #expect(throws: SyncError.self) { try receiver.replica.apply(slices: ChangeSetInSlices(bad, operationsPerSlice: 2)) }
        #expect(try sliceStoreDigest(receiver.path) == before)

        let first = try receiver.replica.apply(slices: ChangeSetInSlices(changeSet, operationsPerSlice: 2))
        #expect(first.applied == [changeSet.dot])
        #expect(try receiver.replica.versionVector()[changeSet.dot.replica] == changeSet.dot.seq)
        let again = try receiver.replica.apply(slices: ChangeSetInSlices(changeSet, operationsPerSlice: 3))
        #expect(again.alreadyApplied == [changeSet.dot] && again.applied.isEmpty)
        var altered = changeSet
        altered.operations.removeLast()
        #expect(throws: SyncError.self) { try receiver.replica.apply(slices: ChangeSetInSlices(altered, operationsPerSlice: 2)) }
        // Stored as a whole merge stores it: a peer gets the change set back intact.
        #expect(try receiver.replica.changeSets(missingFrom: VersionVector()).contains(changeSet))
    }
}

/// Copies of one replica's store, each opened as a replica of its own.
struct SliceCopies {
    let directory: TemporaryDirectory
    let replicas: [SyncReplica]
    let paths: [String]

    init(of original: TestReplica, count: Int) throws {
        directory = try TemporaryDirectory(prefix: "slices")
        var replicas: [SyncReplica] = [], paths: [String] = []
        let source = try SQLiteConnection(path: original.path)
        for index in 0..<count {
            let path = directory.path + "/copy\(index).sqlite"
            try source.run("VACUUM INTO ?", [.text(path)])
            let store = try ObjectStore(path: path, entities: simulationEntities)
            replicas.append(try SyncReplica(store: store, wallClock: { 1_800_000_000_000 }))
            paths.append(path)
        }
        self.replicas = replicas
        self.paths = paths
    }

    /// Every copy holds what the first one holds, in every table (the sync tables included).
    func expectIdentical(_ context: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = try sliceStoreDigest(paths[0])
        for (index, path) in paths.enumerated().dropFirst() {
            let actual = try sliceStoreDigest(path)
            if actual != expected {
                let difference = Simulation.difference(expected, actual, between: 0, and: index)
                Issue.record("\(context): \(difference)", sourceLocation: sourceLocation)
            }
        }
    }
}

/// Every row of every table of the store at `path`, the sync tables and the journal included, sorted.
func sliceStoreDigest(_ path: String) throws -> String {
    let connection = try SQLiteConnection(path: path)
    var lines: [String] = []
    for table in try connection.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' ORDER BY name") {
        guard case .text(let name) = table[0] else { continue }
        for row in try connection.rows("SELECT * FROM \"\(name)\"") {
            lines.append(name + ": " + row.map(\.description).joined(separator: " | "))
        }
    }
    return lines.sorted().joined(separator: "\n")
}

/// Two replicas of the simulation's schema, and the check of one change set merged whole and in slices.
enum SliceScenario {
    static func pair() throws -> (TestReplica, TestReplica) {
        let clock = FakeClock()
        return (try TestReplica(clock: clock, name: "slice-author", entities: simulationEntities),
                try TestReplica(clock: clock, name: "slice-receiver", entities: simulationEntities))
    }

    /// `changeSet` merged into copies of `receiver`: whole, and in slices of 1, 2 and 7
    /// operations; every copy ends identical, and every merge answers the same (or fails alike).
    /// Returns how many journal entries the whole merge left.
    @discardableResult
    static func expectSlicedEqualsWhole(_ changeSet: ChangeSet, onto receiver: TestReplica,
                                        sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        #expect(changeSet.operations.count > 2, "a change set of several operations", sourceLocation: sourceLocation)
        let copies = try SliceCopies(of: receiver, count: 1 + SliceMergeTests.sliceSizes.count)
        let whole = Result { try copies.replicas[0].apply([changeSet]) }
        for (index, size) in SliceMergeTests.sliceSizes.enumerated() {
            let sliced = Result { try copies.replicas[index + 1].apply(slices: ChangeSetInSlices(changeSet, operationsPerSlice: size)) }
            switch (whole, sliced) {
            case (.success(let expected), .success(let actual)):
                #expect(actual == expected, "slices of \(size)", sourceLocation: sourceLocation)
            case (.failure(let expected as SyncError), .failure(let actual as SyncError)):
                #expect(actual.code == expected.code, "slices of \(size): \(actual) vs \(expected)", sourceLocation: sourceLocation)
            default:
                Issue.record("slices of \(size): \(sliced) vs whole \(whole)", sourceLocation: sourceLocation)
            }
        }
        try copies.expectIdentical("change set \(changeSet.dot)", sourceLocation: sourceLocation)
        return try copies.replicas[0].conflictCount()
    }
}

/// What the random histories held, so that the test can tell it compared something.
struct SliceTally: CustomStringConvertible {
    var changeSets = 0, multiOperation = 0, withDeletes = 0, withUnlinks = 0, withPositions = 0

    mutating func add(_ changeSet: ChangeSet) {
        changeSets += 1
        if changeSet.operations.count > SliceMergeTests.sliceSizes.max()! { multiOperation += 1 }
        if changeSet.operations.contains(where: { if case .delete = $0 { true } else { false } }) { withDeletes += 1 }
        if changeSet.operations.contains(where: { if case .unlink = $0 { true } else { false } }) { withUnlinks += 1 }
        if changeSet.operations.contains(where: { if case .position = $0 { true } else { false } }) { withPositions += 1 }
    }

    var description: String {
        "\(changeSets) change sets: \(multiOperation) of more than 7 operations, \(withDeletes) with deletes, \(withUnlinks) with unlinks, \(withPositions) with positions"
    }
}

extension TestReplica {
    /// The change set of this replica's last save.
    func lastChangeSet() throws -> ChangeSet {
        let own = try replica.localChangeSets(status: .pending).filter { $0.dot.replica == replica.replicaID }
        return try #require(own.max { $0.dot.seq < $1.dot.seq })
    }
}

import Foundation
@testable import SyncEngine
import SyncKit
import Testing

// Support for the resolution-table tests: two replicas with their own clocks (so a test
// decides whose concurrent write is later), a third one that only observes, and the two
// exchange orders every rule must be indifferent to.

/// A self-referencing cascade, to see a cascaded delete's own cascades follow.
@Entity final class Folder {
    var title: String = ""
    @Relationship(inverse: "parent", deleteRule: .cascade) var children: Set<Folder> = []
    @Relationship(inverse: "children", deleteRule: .nullify) var parent: Folder?
}

/// In which order the two concurrent sides reach each other (and the observer).
enum ExchangeOrder: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// A's change sets travel first: B pulls from A, then A pulls from B.
    case aThenB
    /// B's change sets travel first: A pulls from B, then B pulls from A.
    case bThenA

    var testDescription: String { rawValue }
}

/// Replicas A and B, which make concurrent changes, and C, which receives them one side at a time.
final class ReplicaTrio {
    static let base: UInt64 = 1_700_000_000_000
    let clockA = FakeClock()
    let clockB = FakeClock()
    let a: TestReplica
    let b: TestReplica
    let c: TestReplica

    init(entities: [any PersistentEntity.Type] = syncEntities) throws {
        a = try TestReplica(clock: clockA, name: "a", entities: entities)
        b = try TestReplica(clock: clockB, name: "b", entities: entities)
        c = try TestReplica(clock: FakeClock(), name: "c", entities: entities)
    }

    /// Everyone takes A's state: the common base the concurrent edits start from.
    func shareBase() throws {
        try b.pull(from: a)
        try c.pull(from: a)
    }

    /// Sets the wall clocks for the concurrent edits: the side named `later` stamps larger HLCs.
    /// Both are far ahead of anything the base used, so these readings are the HLCs.
    func make(later: Side) {
        clockA.set(ReplicaTrio.base + (later == .a ? 20_000 : 10_000))
        clockB.set(ReplicaTrio.base + (later == .b ? 20_000 : 10_000))
    }

    /// Both clocks read the same: the HLCs tie and the replica ID decides.
    func makeClocksTie() {
        clockA.set(ReplicaTrio.base + 30_000)
        clockB.set(ReplicaTrio.base + 30_000)
    }

    enum Side: String, Sendable, CustomTestStringConvertible {
        case a, b
        var testDescription: String { "\(rawValue) later" }
    }

    /// Which side wins a tie on HLC: the larger replica ID.
    var tieWinner: Side { a.replica.replicaID.uuidString > b.replica.replicaID.uuidString ? .a : .b }

    /// The last change set each side committed (the concurrent ones, once made).
    func lastDot(_ side: Side) throws -> Dot {
        let replica = side == .a ? a : b
        return Dot(replica: replica.replica.replicaID, seq: try replica.replica.versionVector()[replica.replica.replicaID])
    }

    /// Exchanges the concurrent change sets in `order`; C gets each side's in a separate batch, in the same order.
    func exchange(_ order: ExchangeOrder) throws {
        switch order {
        case .aThenB:
            try c.pull(from: a)
            try c.pull(from: b)
            try b.pull(from: a)
            try a.pull(from: b)
        case .bThenA:
            try c.pull(from: b)
            try c.pull(from: a)
            try a.pull(from: b)
            try b.pull(from: a)
        }
    }

    /// All three show the same graph, whole, with the same version vector.
    func expectConverged(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let digest = try a.digest()
        #expect(try b.digest() == digest, "A and B differ", sourceLocation: sourceLocation)
        #expect(try c.digest() == digest, "A and the observer C differ", sourceLocation: sourceLocation)
        for (name, replica) in [("A", a), ("B", b), ("C", c)] {
            #expect(try replica.integrityProblems() == [], "integrity of \(name)", sourceLocation: sourceLocation)
        }
        #expect(try a.replica.versionVector() == b.replica.versionVector(), sourceLocation: sourceLocation)
        #expect(try a.replica.versionVector() == c.replica.versionVector(), sourceLocation: sourceLocation)
    }

    var both: [(name: String, replica: TestReplica)] { [("A", a), ("B", b)] }
}

extension TestReplica {
    /// Saves a team named each of `names`, one save (one change set) each.
    func saveTeams(_ names: String...) throws {
        for name in names {
            let team = Team()
            team.name = name
            context.insert(team)
            try context.save()
        }
    }

    /// The object in this replica's main context (after a pull it reflects the merge).
    func object<T: PersistentEntity>(_ type: T.Type, _ id: UUID, sourceLocation: SourceLocation = #_sourceLocation) throws -> T {
        try #require(try context.object(type, id: id), "\(type) \(id) is missing", sourceLocation: sourceLocation)
    }

    /// Whether the store holds the object (a fresh context's view).
    func exists<T: PersistentEntity>(_ type: T.Type, _ id: UUID) throws -> Bool {
        try fetch(type, id) != nil
    }

    /// Journal entries of one kind.
    func journal(_ kind: ConflictEntry.Kind) throws -> [ConflictEntry] {
        try replica.conflicts().filter { $0.kind == kind }
    }
}

/// The journal's value for a string or an object reference.
func journalJSON(_ text: String) -> ConflictEntry.Value { .string(text) }
func journalJSON(_ id: UUID) -> ConflictEntry.Value { .string(id.uuidString) }

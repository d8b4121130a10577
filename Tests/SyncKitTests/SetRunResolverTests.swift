import Foundation
@testable import SyncEngine
import Testing

/// A whole run of set-only change sets judged at once (`SetRunResolver`), without a store: the
/// run's stamps, vectors and writes grouped by object in, each object's winners and journal
/// entries out. The same runs through real merges are in `SetRunTests.swift`.
@Suite struct SetRunResolverTests {
    typealias Resolver = LastWriterWinsResolver
    /// The replicas a, b, c and their stamps, as the single-object tests name them.
    typealias Fixture = LastWriterWinsResolverTests

    static let (a, b, c) = (Fixture.a, Fixture.b, Fixture.c)

    static func stamp(_ hlc: UInt64, _ replica: UUID, _ seq: UInt64) -> Stamp { Fixture.stamp(hlc, replica, seq) }

    /// The run: b:1 (HLC 30, saw a:2) sets X.name and Y.name; c:1 (HLC 25, saw only a:1, so
    /// concurrent with a:2 and b:1) sets X.name and X.age; b:2 (HLC 40) sets Y.name again.
    static let stamps = [stamp(30, b, 1), stamp(25, c, 1), stamp(40, b, 2)]
    static let vectors = [VersionVector([a: 2, b: 1]), VersionVector([a: 1, c: 1]), VersionVector([a: 2, b: 2])]
    static let writes = SetRunResolver.Writes(
        first: [0, 3, 5],
        changeSets: [0, 1, 1, /* Y */ 0, 2],
        attributeSlots: [0, 0, 1, /* Y */ 0, 0],
        attributeNames: ["name", "age"])

    /// X: created at HLC 10 (a:1), its `name` last written at HLC 20 (a:2). Y: created at HLC 10, never written since.
    static func objects() -> [Resolver.Object] {
        var stamps = FieldStamps()
        stamps["name"] = stamp(20, a, 2)
        return [Resolver.Object(creation: stamp(10, a, 1), storedStamps: stamps),
                Resolver.Object(creation: stamp(10, a, 1), storedStamps: FieldStamps())]
    }

    @Test func eachObjectsWritesAreJudgedAcrossTheRunInChangeSetOrder() {
        let outcomes = SetRunResolver(keepsJournal: true).resolve(Self.writes, stamps: Self.stamps, vectors: Self.vectors, objects: Self.objects())
        #expect(outcomes.count == 2)
        // X: b:1's name wins over a:2's, which it saw; c:1's name loses to b:1's (journaled: it
        // had not seen it); c:1's age wins over the creation, which it saw.
        #expect(outcomes[0] == Resolver.Outcome(winners: [0, 2], entries: [
            Resolver.Entry(write: 1, reason: .concurrentWrites,
                           winner: Resolver.Side(value: .written(0), stamp: Self.stamps[0]),
                           loser: Resolver.Side(value: .written(1), stamp: Self.stamps[1])),
        ]))
        // Y: b:1 then b:2, each having seen what came before.
        #expect(outcomes[1] == Resolver.Outcome(winners: [0, 1], entries: []))
    }

    @Test func theRunGivesWhatJudgingEachObjectOnItsOwnGives() {
        let objects = Self.objects()
        let outcomes = SetRunResolver(keepsJournal: true).resolve(Self.writes, stamps: Self.stamps, vectors: Self.vectors, objects: objects)
        for slot in objects.indices {
            let own = Self.writes.writes(of: slot).map { write in
                let changeSet = Int(Self.writes.changeSets[write])
                return Resolver.Write(stamp: Self.stamps[changeSet], vector: Self.vectors[changeSet],
                                      attribute: Self.writes.attributeNames[Int(Self.writes.attributeSlots[write])])
            }
            #expect(outcomes[slot] == Resolver(keepsJournal: true).judge(own, on: objects[slot]), "object \(slot)")
        }
    }

    @Test func anObjectsOutcomeDoesNotDependOnTheOtherObjectsOfTheRun() {
        // The same run with Y's writes first.
        let swapped = SetRunResolver.Writes(first: [0, 2, 5], changeSets: [0, 2, /* X */ 0, 1, 1],
                                            attributeSlots: [0, 0, /* X */ 0, 0, 1], attributeNames: ["name", "age"])
        let objects = Self.objects()
        let inOrder = SetRunResolver(keepsJournal: true).resolve(Self.writes, stamps: Self.stamps, vectors: Self.vectors, objects: objects)
        let reversed = SetRunResolver(keepsJournal: true).resolve(swapped, stamps: Self.stamps, vectors: Self.vectors, objects: objects.reversed())
        #expect(reversed == inOrder.reversed())
    }

    @Test func writesToAnObjectDeletedConcurrentlyEachLoseToTheDeleteTheyHadNotSeen() {
        // Y was deleted by c:1 (HLC 25), in force on this replica: b:1 and b:2 had not seen it.
        var objects = Self.objects()
        objects[1].deletes = [(Dot(replica: Self.c, seq: 1), Self.stamps[1])]
        let outcomes = SetRunResolver(keepsJournal: true).resolve(Self.writes, stamps: Self.stamps, vectors: Self.vectors, objects: objects)
        #expect(outcomes[1].winners == [0, 1])
        #expect(outcomes[1].entries == [0, 1].map { write in
            Resolver.Entry(write: write, reason: .deletedConcurrently, winner: Resolver.Side(value: .none, stamp: Self.stamps[1]),
                           loser: Resolver.Side(value: .written(write), stamp: Self.stamps[write == 0 ? 0 : 2]))
        })
        // X is untouched by Y's delete.
        #expect(outcomes[0].entries.map(\.reason) == [.concurrentWrites])
    }

    @Test func withoutAJournalTheSameWritesWinAndNothingIsJournaled() {
        let journaled = SetRunResolver(keepsJournal: true).resolve(Self.writes, stamps: Self.stamps, vectors: Self.vectors, objects: Self.objects())
        let silent = SetRunResolver(keepsJournal: false).resolve(Self.writes, stamps: Self.stamps, vectors: Self.vectors, objects: Self.objects())
        #expect(silent.map(\.winners) == journaled.map(\.winners))
        #expect(silent.allSatisfy { $0.entries.isEmpty })
    }
}

import Foundation
@testable import SyncEngine
import Testing

/// The last-writer-wins rule on its own (`LastWriterWinsResolver`), without a store: stamps and
/// vectors in, winners and journal entries out. The same rule through real merges, in both
/// exchange orders, is in `ResolutionTableAttributeTests.swift` and `SetRunTests.swift`.
@Suite struct LastWriterWinsResolverTests {
    typealias Resolver = LastWriterWinsResolver

    static let a = UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!
    static let b = UUID(uuidString: "00000000-0000-0000-0000-00000000000B")!
    static let c = UUID(uuidString: "00000000-0000-0000-0000-00000000000C")!

    static func stamp(_ hlc: UInt64, _ replica: UUID, _ seq: UInt64) -> Stamp {
        Stamp(hlc: HLC(rawValue: hlc), replica: replica, seq: seq)
    }

    /// An object `a` created at HLC 10 (a:1), whose `name` `a` last wrote at HLC 20 (a:2).
    static func object() -> Resolver.Object {
        var stamps = FieldStamps()
        stamps["name"] = stamp(20, a, 2)
        return Resolver.Object(creation: stamp(10, a, 1), storedStamps: stamps)
    }

    static func write(_ stamp: Stamp, saw vector: [UUID: UInt64], _ attribute: String = "name") -> Resolver.Write {
        Resolver.Write(stamp: stamp, vector: VersionVector(vector), attribute: attribute)
    }

    @Test func aLaterWriteThatSawTheLastOneWinsWithoutAnEntry() {
        let outcome = Resolver(keepsJournal: true).judge([Self.write(Self.stamp(30, Self.b, 1), saw: [Self.a: 2, Self.b: 1])], on: Self.object())
        #expect(outcome == Resolver.Outcome(winners: [0], entries: []))
    }

    @Test func aConcurrentWriteWithTheLargerStampWinsAndJournalsWhatTheAttributeHeld() {
        let incoming = Self.stamp(30, Self.b, 1)
        let outcome = Resolver(keepsJournal: true).judge([Self.write(incoming, saw: [Self.a: 1, Self.b: 1])], on: Self.object())
        #expect(outcome.winners == [0])
        #expect(outcome.entries == [Resolver.Entry(write: 0, reason: .concurrentWrites,
                                                   winner: Resolver.Side(value: .written(0), stamp: incoming),
                                                   loser: Resolver.Side(value: .held, stamp: Self.stamp(20, Self.a, 2)))])
    }

    @Test func aWriteWithTheSmallerStampLosesAndIsJournaled() {
        let incoming = Self.stamp(15, Self.b, 1)
        let outcome = Resolver(keepsJournal: true).judge([Self.write(incoming, saw: [Self.a: 1, Self.b: 1])], on: Self.object())
        #expect(outcome.winners.isEmpty)
        #expect(outcome.entries == [Resolver.Entry(write: 0, reason: .concurrentWrites,
                                                   winner: Resolver.Side(value: .held, stamp: Self.stamp(20, Self.a, 2)),
                                                   loser: Resolver.Side(value: .written(0), stamp: incoming))])
    }

    @Test func equalHLCsAreDecidedByTheReplicaIdentifier() {
        // HLC 20 on both sides: b's identifier sorts after a's, so b's write wins; c's would too.
        let fromB = Resolver(keepsJournal: true).judge([Self.write(Self.stamp(20, Self.b, 1), saw: [Self.b: 1])], on: Self.object())
        #expect(fromB.winners == [0])
        var byC = Self.object()
        byC.storedStamps["name"] = Self.stamp(20, Self.c, 4)
        let againstC = Resolver(keepsJournal: true).judge([Self.write(Self.stamp(20, Self.b, 1), saw: [Self.b: 1])], on: byC)
        #expect(againstC.winners.isEmpty && againstC.entries.map(\.reason) == [.concurrentWrites])
    }

    @Test func anAttributeNothingWroteHasTheCreationsStampAndPendingStampsComeFirst() {
        var object = Self.object()
        // Older than the stored write, younger than the creation: wins `score`, loses `name`.
        let outcome = Resolver(keepsJournal: false).judge(
            [Self.write(Self.stamp(15, Self.b, 1), saw: [Self.b: 1], "score"), Self.write(Self.stamp(15, Self.b, 1), saw: [Self.b: 1])], on: object)
        #expect(outcome == Resolver.Outcome(winners: [0], entries: []))
        // A write won earlier in the batch, not stored yet, is the one to beat.
        object.pendingStamps["name"] = Self.stamp(40, Self.c, 1)
        let later = Resolver(keepsJournal: true).judge([Self.write(Self.stamp(30, Self.b, 2), saw: [Self.a: 2, Self.b: 2])], on: object)
        #expect(later.winners.isEmpty)
        #expect(later.entries.first?.winner == Resolver.Side(value: .held, stamp: Self.stamp(40, Self.c, 1)))
    }

    @Test func writesOfOneRunAreJudgedInOrderAgainstEachOther() {
        // b's write wins over a's stored one; c's, concurrent with b's and older, loses to it; a
        // third write that saw both wins over b's without an entry.
        let fromB = Self.stamp(30, Self.b, 1), fromC = Self.stamp(25, Self.c, 1), last = Self.stamp(50, Self.a, 3)
        let outcome = Resolver(keepsJournal: true).judge(
            [Self.write(fromB, saw: [Self.a: 2, Self.b: 1]), Self.write(fromC, saw: [Self.a: 2, Self.c: 1]),
             Self.write(last, saw: [Self.a: 3, Self.b: 1, Self.c: 1])], on: Self.object())
        #expect(outcome.winners == [0, 2])
        #expect(outcome.entries == [Resolver.Entry(write: 1, reason: .concurrentWrites,
                                                   winner: Resolver.Side(value: .written(0), stamp: fromB),
                                                   loser: Resolver.Side(value: .written(1), stamp: fromC))])
    }

    @Test func aWriteLosesToEachDeleteItHadNotSeenOnceAndStillCountsForTheStamp() {
        var object = Self.object()
        let deleteByC = Self.stamp(35, Self.c, 1), deleteByA = Self.stamp(22, Self.a, 3)
        // Two roots of c's change set, and one of a's that the write had seen.
        object.deletes = [(deleteByC.dot, deleteByC), (deleteByC.dot, deleteByC), (deleteByA.dot, deleteByA)]
        let incoming = Self.stamp(30, Self.b, 1)
        let outcome = Resolver(keepsJournal: true).judge([Self.write(incoming, saw: [Self.a: 3, Self.b: 1])], on: object)
        #expect(outcome.winners == [0])
        #expect(outcome.entries == [Resolver.Entry(write: 0, reason: .deletedConcurrently,
                                                   winner: Resolver.Side(value: .none, stamp: deleteByC),
                                                   loser: Resolver.Side(value: .written(0), stamp: incoming))])
    }

    @Test func aWriteToAMergedDuplicateIsJournaledBeforeItsAttributeEntry() {
        var object = Self.object()
        object.survivor = Self.c
        let incoming = Self.stamp(15, Self.b, 1)
        let outcome = Resolver(keepsJournal: true).judge([Self.write(incoming, saw: [Self.b: 1])], on: object)
        #expect(outcome.entries.map(\.reason) == [.mergedDuplicate, .concurrentWrites])
        #expect(outcome.entries.first?.winner == Resolver.Side(value: .survivor(Self.c), stamp: incoming))
    }

    @Test func withoutAJournalTheWinnersAreTheSameAndNoEntryIsMade() {
        var object = Self.object()
        object.survivor = Self.c
        object.deletes = [(Self.stamp(35, Self.c, 1).dot, Self.stamp(35, Self.c, 1))]
        let writes = [Self.write(Self.stamp(30, Self.b, 1), saw: [Self.b: 1]), Self.write(Self.stamp(25, Self.c, 2), saw: [Self.c: 2]),
                      Self.write(Self.stamp(31, Self.c, 3), saw: [Self.c: 3], "score")]
        let journaled = Resolver(keepsJournal: true).judge(writes, on: object)
        let unjournaled = Resolver(keepsJournal: false).judge(writes, on: object)
        #expect(journaled.winners == [0, 2] && unjournaled.winners == [0, 2])
        #expect(!journaled.entries.isEmpty && unjournaled.entries.isEmpty)
    }
}

import Foundation
@testable import SyncEngine
import SQLiteDatabase
import SyncKit
import TestSupport
import Testing

/// Change sets that only set last-writer-wins attributes are held and resolved object by object
/// (`MergeEngine+SetRuns.swift`); every other change set is resolved operation by operation.
/// Both must give the same rows and the same journal, entry for entry and number for number.
@Suite struct SetRunTests {
    /// Two replicas edit overlapping members concurrently, several saves each, every save also
    /// creating a label. Applied as they are, no change set is a run of sets (each creates); with
    /// the labels taken out, every one is. The members' rows and journal must not tell them apart.
    @Test(arguments: [1, 2, 7] as [UInt64])
    func runsOfSetsResolveAsChangeSetOrderDoes(seed: UInt64) throws {
        let clock = FakeClock()
        let a = try TestReplica(clock: clock, name: "a"), b = try TestReplica(clock: clock, name: "b")
        let operationByOperation = try TestReplica(clock: clock, name: "operations")
        let objectByObject = try TestReplica(clock: clock, name: "objects")
        var ids: [UUID] = []
        for index in 0..<40 {
            let member = Member()
            member.name = "member \(index)"
            a.context.insert(member)
            ids.append(member.objectID)
        }
        try a.context.save()
        for replica in [b, operationByOperation, objectByObject] { _ = try replica.pull(from: a) }
        let base = try operationByOperation.replica.versionVector()

        var random = SeededGenerator(seed: seed)
        for round in 0..<6 {
            for (replica, tag) in [(a, "a"), (b, "b")] {
                let label = Label()
                label.text = "\(tag) \(round)"
                replica.context.insert(label)
                // Objects in a different order in every change set, some written twice.
                for id in ids.shuffled(using: &random).prefix(25) {
                    let member = try replica.object(Member.self, id)
                    member.level = round * 100 + Int.random(in: 0..<100, using: &random)
                    if Bool.random(using: &random) { member.note = "\(tag) \(round)" }
                    if Int.random(in: 0..<4, using: &random) == 0 { member.name = "\(tag) \(round) \(member.level)" }
                }
                try replica.context.save()
            }
        }
        let fromA = try a.replica.changeSets(missingFrom: base), fromB = try b.replica.changeSets(missingFrom: base)
        // Alternating replicas: the run's writes and journal entries change cause at every change set.
        var batch: [ChangeSet] = []
        for index in 0..<max(fromA.count, fromB.count) {
            if index < fromA.count { batch.append(fromA[index]) }
            if index < fromB.count { batch.append(fromB[index]) }
        }
        let withoutLabels = batch.map { changeSet in
            var setsOnly = changeSet
            setsOnly.operations.removeAll { operation in
                switch operation {
                case .create(let entity, _), .set(let entity, _, _, _): entity == "Label"
                default: false
                }
            }
            return setsOnly
        }
        #expect(try objectByObject.replica.validate(batch).runsOfSets.isEmpty, "a change set that creates is not a run of sets")
        #expect(try objectByObject.replica.validate(withoutLabels).runsOfSets == Set(withoutLabels.map(\.dot)),
                "without the labels every change set is a run of sets")

        _ = try operationByOperation.replica.apply(batch)
        _ = try objectByObject.replica.apply(withoutLabels)

        #expect(try objectByObject.replica.records("Member") == operationByOperation.replica.records("Member"))
        let expected = try operationByOperation.replica.conflicts()
        let journaled = try objectByObject.replica.conflicts()
        #expect(expected.count > 20, "the edits were meant to conflict: \(expected.count) entries")
        #expect(Set(expected.map(\.cause)).count > 4, "entries were meant to have many causes")
        #expect(journaled.count == expected.count)
        // The first entry that differs, rather than two journals of hundreds of entries.
        let difference = zip(journaled, expected).first { $0 != $1 }
        #expect(difference == nil, "journaled \(String(describing: difference?.0)), change set order journals \(String(describing: difference?.1))")
    }

    /// A run is resolved before anything reads the store through the engine: a change set that
    /// is not a run of sets, coming after one, finds the run's writes.
    @Test func aChangeSetAfterARunSeesItsWrites() throws {
        let clock = FakeClock()
        let a = try TestReplica(clock: clock, name: "a"), b = try TestReplica(clock: clock, name: "b")
        let member = Member()
        member.name = "before"
        a.context.insert(member)
        try a.context.save()
        _ = try b.pull(from: a)
        let base = try b.replica.versionVector()
        try a.object(Member.self, member.objectID).name = "set by a run"
        try a.context.save()
        let team = Team()
        team.name = "team"
        a.context.insert(team)
        try a.object(Member.self, member.objectID).team = team
        try a.context.save()
        try a.object(Member.self, member.objectID).level = 3
        try a.context.save()

        let batch = try a.replica.changeSets(missingFrom: base)
        #expect(batch.count == 3)
        _ = try b.replica.apply(batch)

        let merged = try #require(try b.fetch(Member.self, member.objectID))
        #expect(merged.name == "set by a run")
        #expect(merged.level == 3)
        #expect(merged.team?.name == "team")
        #expect(try b.replica.records("Member") == a.replica.records("Member"))
        #expect(try b.replica.versionVector() == a.replica.versionVector())
    }

    /// Validation tells the merge which change sets are runs of sets (the engine holds exactly
    /// those and reads their operations as sets): only the change sets of last-writer-wins sets,
    /// not one with a create, a set of a `.max` attribute, a counter's increment or a delete;
    /// a batch's validation and a single change set's (record edits, replays) agree.
    @Test func validationFindsTheRunsOfSetsTheEngineHolds() throws {
        let clock = FakeClock()
        let a = try TestReplica(clock: clock, name: "a", entities: [Tally.self])
        let b = try TestReplica(clock: clock, name: "b", entities: [Tally.self])
        let tally = Tally()
        tally.name = "created"
        a.context.insert(tally)
        try a.context.save()
        let other = Tally()
        a.context.insert(other)
        try a.context.save()
        try a.object(Tally.self, tally.objectID).name = "last writer wins"
        try a.context.save()
        try a.object(Tally.self, tally.objectID).peak = 7
        try a.context.save()
        try a.object(Tally.self, tally.objectID).hits += 2
        try a.context.save()
        try a.object(Tally.self, tally.objectID).name = "again"
        try a.object(Tally.self, other.objectID).name = "and the other"
        try a.context.save()
        a.context.delete(try a.object(Tally.self, other.objectID))
        try a.context.save()

        let batch = try a.replica.changeSets(missingFrom: VersionVector())
        #expect(batch.count == 7)
        let validated = try b.replica.validate(batch)
        #expect(validated.runsOfSets == [batch[2].dot, batch[5].dot], "the two saves of last-writer-wins attributes only")
        // A single change set's validation, as record edits and replays use it, finds the same.
        let validator = ChangeSetValidator(b.replica.schema.document)
        #expect(try batch.filter { try validator.validate($0).onlyLastWriterWinsSets }.map(\.dot) == [batch[2].dot, batch[5].dot])

        _ = try b.replica.apply(batch)
        #expect(try b.replica.records("Tally") == a.replica.records("Tally"))
    }
}

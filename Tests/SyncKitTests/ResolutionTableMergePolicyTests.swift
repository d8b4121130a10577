import Codecs
import Foundation
@testable import SyncEngine
import SyncKit
import Testing

/// One attribute per merge policy, beside a plain one.
@Entity final class Scoreboard {
    var title: String = ""
    @Attribute(.indexed, merge: .max) var best: Int = 0
    @Attribute(merge: .min) var fastest: Double = 1_000
    @Attribute(merge: .counter) var likes: Int = 0
    @Attribute(merge: .counter) var small: Int16 = 0
    @Attribute(storage: .codable, merge: .custom(TagUnion.self)) var tags: TagUnion = TagUnion()
    @Relationship(inverse: "boards", deleteRule: .deny) var keepers: Set<Keeper> = []
}

/// Refuses the delete of a scoreboard it still keeps (delete rule deny on the scoreboard's side).
@Entity final class Keeper {
    var name: String = ""
    @Relationship(inverse: "keepers", deleteRule: .nullify) var boards: Set<Scoreboard> = []
}

/// CONTRACT.md §3.9: attributes with a merge policy, in both exchange orders with observer C.
@Suite struct ResolutionTableMergePolicyTests {
    static let entities: [any PersistentEntity.Type] = syncEntities + [Scoreboard.self, Keeper.self]

    /// A scoreboard all three replicas know: best 5, fastest 100, 10 likes, tags ["base"].
    private func boardTrio() throws -> (ReplicaTrio, UUID) {
        let trio = try ReplicaTrio(entities: Self.entities)
        let board = Scoreboard()
        board.best = 5
        board.fastest = 100
        board.likes = 10
        board.small = 30_000
        board.tags = TagUnion(tags: ["base"])
        trio.a.context.insert(board)
        try trio.a.context.save()
        try trio.shareBase()
        return (trio, board.objectID)
    }

    private func everyone(_ trio: ReplicaTrio) -> [(String, TestReplica)] { [("A", trio.a), ("B", trio.b), ("C", trio.c)] }

    /// Exchanges in `order`, then expects `value` at `keyPath` of the board on A, B and the
    /// observer C, nothing journaled (unless `journalMayHaveEntries`), and identical stores.
    private func exchange<Value: Equatable>(
        _ trio: ReplicaTrio, _ order: ExchangeOrder, expecting keyPath: KeyPath<Scoreboard, Value>, _ value: Value, of id: UUID,
        journalMayHaveEntries: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try trio.exchange(order)
        for (name, replica) in everyone(trio) {
            #expect(try replica.fetch(Scoreboard.self, id)?[keyPath: keyPath] == value, "\(keyPath) on \(name)", sourceLocation: sourceLocation)
            if !journalMayHaveEntries {
                #expect(try replica.replica.conflicts().isEmpty, "no write is lost, nothing is journaled on \(name)", sourceLocation: sourceLocation)
            }
        }
        try trio.expectConverged(sourceLocation: sourceLocation)
    }

    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func maxAndMinKeepTheExtremeWhicheverWriteIsLater(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let (trio, id) = try boardTrio()
        trio.make(later: later)
        let onA = try trio.a.object(Scoreboard.self, id), onB = try trio.b.object(Scoreboard.self, id)
        onA.best = 9
        onA.fastest = 80
        try trio.a.context.save()
        onB.best = 7
        onB.fastest = 50
        try trio.b.context.save()

        try trio.exchange(order)

        for (name, replica) in everyone(trio) {
            let board = try #require(try replica.fetch(Scoreboard.self, id))
            #expect(board.best == 9, "best on \(name)")
            #expect(board.fastest == 50, "fastest on \(name)")
            #expect(try replica.replica.conflicts().isEmpty, "no write is lost, nothing is journaled on \(name)")
        }
        try trio.expectConverged()
    }

    @Test(arguments: ExchangeOrder.allCases)
    func aMaxWriteBelowTheStoredValueKeepsTheStoredValue(order: ExchangeOrder) throws {
        let (trio, id) = try boardTrio()
        trio.make(later: .a)
        let onA = try trio.a.object(Scoreboard.self, id)
        onA.best = 3
        try trio.a.context.save()
        #expect(onA.best == 5, "the saving context shows the stored maximum")
        try trio.b.object(Scoreboard.self, id).best = 4
        try trio.b.context.save()

        try exchange(trio, order, expecting: \.best, 5, of: id)
    }

    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func concurrentIncrementsAddUp(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let (trio, id) = try boardTrio()
        trio.make(later: later)
        try trio.a.object(Scoreboard.self, id).likes += 1
        try trio.a.context.save()
        try trio.b.object(Scoreboard.self, id).likes += 1
        try trio.b.context.save()
        try trio.b.object(Scoreboard.self, id).likes -= 3
        try trio.b.context.save()
        let saved = try trio.b.replica.changeSets(missingFrom: VersionVector()).last?.operations
        #expect(saved == [.increment(entity: "Scoreboard", id: id, attribute: "likes", delta: -3)], "a save records the increment, not the result")

        try exchange(trio, order, expecting: \.likes, 10 + 1 + 1 - 3, of: id)
    }

    @Test(arguments: ExchangeOrder.allCases)
    func anUnsavedIncrementStaysOnTopOfAMergedOne(order: ExchangeOrder) throws {
        let (trio, id) = try boardTrio()
        let onA = try trio.a.object(Scoreboard.self, id)
        onA.likes += 2
        try trio.b.object(Scoreboard.self, id).likes += 1
        try trio.b.context.save()
        try trio.a.pull(from: trio.b)
        #expect(onA.likes == 13, "the unsaved +2 is rebased on the merged 11")
        try trio.a.context.save()

        try exchange(trio, order, expecting: \.likes, 13, of: id)
    }

    @Test(arguments: ExchangeOrder.allCases)
    func aCounterSaturatesAtItsRangeAndCountsOnFromItsExactTotal(order: ExchangeOrder) throws {
        let (trio, id) = try boardTrio()
        try trio.a.object(Scoreboard.self, id).small += 2_000
        try trio.a.context.save()
        try trio.b.object(Scoreboard.self, id).small += 2_000
        try trio.b.context.save()

        try trio.exchange(order)

        for (name, replica) in everyone(trio) {
            #expect(try replica.fetch(Scoreboard.self, id)?.small == Int16.max, "small on \(name): 34000 shows Int16.max")
            let entry = try #require(try replica.journal(.counterSaturated).first, "saturation journaled on \(name)")
            #expect(entry.property == "small")
            #expect(entry.winner?.value == .integer(32767))
            #expect(entry.loser.value == .integer(34000))
        }
        try trio.expectConverged()

        // 34000 - 3000: the exact total counts, not the shown bound.
        try trio.a.context.refresh()
        try trio.a.object(Scoreboard.self, id).small -= 3_000
        try trio.a.context.save()
        #expect(try trio.a.fetch(Scoreboard.self, id)?.small == 31_000, "the saving replica shows the exact total")
        try exchange(trio, order, expecting: \.small, 31_000, of: id, journalMayHaveEntries: true)
    }

    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func aCustomMergeJoinsConcurrentValues(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let (trio, id) = try boardTrio()
        trio.make(later: later)
        try trio.a.object(Scoreboard.self, id).tags.tags.append("from A")
        try trio.a.context.save()
        try trio.b.object(Scoreboard.self, id).tags = TagUnion(tags: ["from B"])
        try trio.b.context.save()
        #expect(try trio.b.fetch(Scoreboard.self, id)?.tags.tags == ["base", "from B"], "a save joins with what the replica held")

        try exchange(trio, order, expecting: \.tags.tags, ["base", "from A", "from B"], of: id)
    }

    @Test(arguments: ExchangeOrder.allCases)
    func anIncrementConcurrentWithADeleteIsJournaledAndRevivesWithAVoidedDelete(order: ExchangeOrder) throws {
        let (trio, id) = try boardTrio()
        try deleteOnAWhileBIncrements(trio, id)
        try trio.b.context.save()

        try trio.exchange(order)

        for (name, replica) in everyone(trio) {
            #expect(try !replica.exists(Scoreboard.self, id), "the delete wins on \(name)")
        }
        for (name, replica) in trio.both {
            #expect(Set(try replica.journal(.updateVersusDelete).compactMap(\.property)) == ["likes", "best"], "journal of \(name)")
        }
        try trio.expectConverged()

        // A keeper added concurrently with a second delete voids it (deny): the object comes
        // back with every increment and maximum recorded while it was deleted.
        let (revived, other) = try boardTrio()
        let onB = try deleteOnAWhileBIncrements(revived, other)
        let keeper = Keeper()
        revived.b.context.insert(keeper)
        keeper.boards.insert(onB)
        try revived.b.context.save()
        try revived.exchange(order)
        for (name, replica) in everyone(revived) {
            let back = try #require(try replica.fetch(Scoreboard.self, other), "revived on \(name)")
            #expect(back.likes == 15, "likes on \(name)")
            #expect(back.best == 50, "best on \(name)")
        }
        try revived.expectConverged()
    }

    /// A deletes the board; B, concurrently and later, adds 5 likes and sets best to 50 (unsaved).
    @discardableResult
    private func deleteOnAWhileBIncrements(_ trio: ReplicaTrio, _ id: UUID) throws -> Scoreboard {
        trio.make(later: .a)
        try trio.a.context.delete(trio.a.object(Scoreboard.self, id))
        try trio.a.context.save()
        let board = try trio.b.object(Scoreboard.self, id)
        board.likes += 5
        board.best = 50
        return board
    }

    /// Every permutation of four change sets (the creation and three concurrent edits from
    /// three replicas), in every split into batches, then everything again as duplicates: the
    /// same values on every fresh replica.
    @Test func everyOrderBatchingAndDuplicateGivesTheSameValues() throws {
        let clock = FakeClock()
        let origin = try TestReplica(clock: clock, name: "origin", entities: Self.entities)
        let board = Scoreboard()
        board.likes = 10
        board.best = 5
        origin.context.insert(board)
        try origin.context.save()
        let id = board.objectID
        var authors: [TestReplica] = []
        for (index, edit) in [(3, 8, "x"), (-1, 6, "y"), (5, 2, "z")].enumerated() {
            let author = try TestReplica(clock: clock, name: "author\(index)", entities: Self.entities)
            try author.pull(from: origin)
            let object = try author.object(Scoreboard.self, id)
            object.likes += Int(edit.0)
            object.best = edit.1
            object.fastest = Double(edit.1)
            object.small += Int16(edit.0)
            object.tags.tags.append(edit.2)
            try author.context.save()
            authors.append(author)
        }
        let creation = try origin.replica.changeSets(missingFrom: VersionVector())
        let edits = try authors.map { try #require(try $0.replica.changeSets(missingFrom: VersionVector()).last) }
        let all = creation + edits
        var expected: String?
        var runs = 0
        for permutation in permutations(Array(all.indices)) {
            for cuts in 0..<(1 << (all.count - 1)) {
                var batches: [[ChangeSet]] = [[]]
                for (position, index) in permutation.enumerated() {
                    if position > 0, cuts & (1 << (position - 1)) != 0 { batches.append([]) }
                    batches[batches.count - 1].append(all[index])
                }
                // A batch holding an edit but not the creation it depends on, before the
                // creation arrived, is refused as a whole (causality): skip such splits.
                let creationBatch = batches.firstIndex { $0.contains { $0.dot == creation[0].dot } }!
                if batches[..<creationBatch].contains(where: { !$0.isEmpty }) { continue }
                let replica = try TestReplica(clock: FakeClock(), name: "fresh", entities: Self.entities)
                for batch in batches { _ = try replica.replica.apply(batch + [batch[0]]) }
                _ = try replica.replica.apply(all.reversed())
                let values = try #require(try replica.fetch(Scoreboard.self, id))
                #expect(values.likes == 17 && values.best == 8 && values.fastest == 2 && values.small == 7, "order \(permutation), cuts \(cuts)")
                #expect(values.tags.tags == ["x", "y", "z"], "order \(permutation), cuts \(cuts)")
                let digest = try replica.digest()
                if let expected { #expect(digest == expected, "order \(permutation), cuts \(cuts)") } else { expected = digest }
                runs += 1
            }
        }
        #expect(runs == 90, "for each of the 6 orders of the edits, the creation in the first batch: 8 + 4 + 2 + 1 splits")
    }

    // MARK: Validation and encoding

    @Test(arguments: ["set of a counter", "increment of a maximum"])
    func policyViolationsAreRefusedWithSchemaMismatch(_ violation: String) throws {
        let (trio, id) = try boardTrio()
        let author = UUID()
        let operation: SyncKit.Operation = violation == "set of a counter"
            ? .set(entity: "Scoreboard", id: id, attribute: "likes", values: [.integer(99)])
            : .increment(entity: "Scoreboard", id: id, attribute: "best", delta: 1)
        let changeSet = ChangeSet(
            dot: Dot(replica: author, seq: 1), hlc: HLC(milliseconds: ReplicaTrio.base + 50_000, counter: 0),
            vector: try trio.c.replica.versionVector().adding(author), operations: [operation])
        let before = try trio.c.digest()
        #expect {
            try trio.c.replica.apply([changeSet])
        } throws: { error in
            guard let error = error as? SyncError, error.code == .schemaMismatch else { return false }
            let attribute = violation == "set of a counter" ? "Scoreboard.likes" : "Scoreboard.best"
            return error.message.contains("change set \(changeSet.dot), operation 0") && error.message.contains(attribute)
                && error.message.contains(id.storageText)
        }
        #expect(try trio.c.digest() == before)
        // The creating change set may set a counter: that is its creation value.
        let created = UUID()
        let creation = ChangeSet(
            dot: Dot(replica: author, seq: 1), hlc: HLC(milliseconds: ReplicaTrio.base + 50_000, counter: 0),
            vector: try trio.c.replica.versionVector().adding(author),
            operations: [.create(entity: "Scoreboard", id: created), .set(entity: "Scoreboard", id: created, attribute: "title", values: [.text("new")]),
                         .set(entity: "Scoreboard", id: created, attribute: "best", values: [.integer(0)]),
                         .set(entity: "Scoreboard", id: created, attribute: "fastest", values: [.real(1)]),
                         .set(entity: "Scoreboard", id: created, attribute: "likes", values: [.integer(7)]),
                         .set(entity: "Scoreboard", id: created, attribute: "small", values: [.integer(0)]),
                         .set(entity: "Scoreboard", id: created, attribute: "tags", values: [.text(#"{"tags":[]}"#)]),
                         .increment(entity: "Scoreboard", id: created, attribute: "likes", delta: 2)])
        _ = try trio.c.replica.apply([creation])
        #expect(try trio.c.fetch(Scoreboard.self, created)?.likes == 9)
    }

    @Test func editsWithoutSwiftTypesRecordIncrementsAndKeepMaxima() throws {
        let (trio, id) = try boardTrio()
        let document = try #require(trio.c.store.schemaDocument.entity(named: "Scoreboard"))
        #expect(document.attributes.map(\.merge) == [nil, .max, .min, .counter, .counter, .custom])
        #expect(document.attribute(named: "tags")?.mergeType == "TagUnion")
        try trio.c.replica.edit { try $0.update("Scoreboard", id: id, values: ["likes": .integer(15), "best": .integer(2)]) }
        try trio.c.replica.edit { try $0.increment("Scoreboard", id: id, attribute: "likes", by: -2) }
        let recorded = try trio.c.replica.changeSets(missingFrom: VersionVector()).suffix(2).map { Set($0.operations) }
        #expect(recorded == [[.increment(entity: "Scoreboard", id: id, attribute: "likes", delta: 5),
                              .set(entity: "Scoreboard", id: id, attribute: "best", values: [.integer(2)])],
                             [.increment(entity: "Scoreboard", id: id, attribute: "likes", delta: -2)]])
        #expect(try trio.c.fetch(Scoreboard.self, id)?.likes == 13)
        #expect(try trio.c.fetch(Scoreboard.self, id)?.best == 5)
        #expect(throws: SyncError.self) { try trio.c.replica.edit { try $0.increment("Scoreboard", id: id, attribute: "best", by: 1) } }
    }

    @Test func anIncrementRoundTripsThroughTheWireAndStoredForms() throws {
        let id = UUID(uuidString: "6F1E0C7A-2B8D-4C3E-9A51-0D2E4F6A8B1C")!
        let operations: [SyncKit.Operation] = [
            .increment(entity: "Post", id: id, attribute: "likes", delta: -3),
            .increment(entity: "Post", id: id, attribute: "likes", delta: Int64.max),
            .increment(entity: "Post", id: id, attribute: "likes", delta: Int64.min),
        ]
        var writer = JSONWriter()
        try writer.writeOperation(operations[0])
        #expect(writer.string == #"{"attribute":"likes","delta":-3,"entity":"Post","id":"6F1E0C7A-2B8D-4C3E-9A51-0D2E4F6A8B1C","op":"increment"}"#)
        let stored = try StoredOperations.encode(operations)
        #expect(try stored.withBytes { try StoredOperations.decode($0) } == operations)
        for operation in operations {
            var json = JSONWriter()
            try json.writeOperation(operation)
            #expect(try JSONReader.read(json.string) { try $0.readOperation() } == operation)
        }
    }

    private func permutations(_ elements: [Int]) -> [[Int]] {
        guard elements.count > 1 else { return [elements] }
        return elements.indices.flatMap { index in
            var rest = elements
            let first = rest.remove(at: index)
            return permutations(rest).map { [first] + $0 }
        }
    }
}

private extension VersionVector {
    /// This vector with `replica`'s first change set added.
    func adding(_ replica: ReplicaID) -> VersionVector {
        var result = self
        result.merge(VersionVector([replica: 1]))
        return result
    }
}

import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import Testing

/// A board shows one card at most (one-to-many, the bound on the to-many side).
@Entity final class TaskBoard {
    var name: String = ""
    @Relationship(inverse: "board", deleteRule: .nullify, maxCount: 1) var cards: Set<TaskCard> = []
}

@Entity final class TaskCard {
    var title: String = ""
    @Relationship(inverse: "cards", deleteRule: .nullify) var board: TaskBoard?
}

/// An ordered one-to-many bounded both ways: a deck holds one or two slides.
@Entity final class Deck {
    var name: String = ""
    @Relationship(inverse: "deck", deleteRule: .nullify, minCount: 1, maxCount: 2) var slides: [Slide] = []
}

@Entity final class Slide {
    var title: String = ""
    @Relationship(inverse: "slides", deleteRule: .nullify) var deck: Deck?
}

/// A many-to-many bounded on both sides: a crate carries two stickers at most, a sticker is on one crate.
@Entity final class Crate {
    var name: String = ""
    @Relationship(inverse: "crates", deleteRule: .nullify, maxCount: 2) var stickers: Set<Sticker> = []
}

@Entity final class Sticker {
    var text: String = ""
    @Relationship(inverse: "stickers", deleteRule: .nullify, maxCount: 1) var crates: Set<Crate> = []
}

/// A self-inverse to-many bounded both ways: a pal has one or two pals, and each edge counts at both ends.
@Entity final class Pal {
    var name: String = ""
    @Relationship(inverse: "pals", deleteRule: .nullify, minCount: 1, maxCount: 2) var pals: Set<Pal> = []
}

/// The entities with bounded relationships, as the count tests and the simulation use them.
let boundedEntities: [any PersistentEntity.Type] = [TaskBoard.self, TaskCard.self, Deck.self, Slide.self, Crate.self, Sticker.self, Pal.self]
let countEntities: [any PersistentEntity.Type] = syncEntities + boundedEntities
/// What the simulation's replicas (and the change-capture check that replays them) hold: every
/// relationship shape, bounded relationships and every merge policy.
let simulationEntities: [any PersistentEntity.Type] = everyShapeEntities + boundedEntities + [Tally.self]

/// The simulation's bounded relationships: a shared graph to start from, random edits, and the
/// bounds every replica must show after a full exchange.
extension Simulation {
    mutating func seedBoundedGraph(into context: ObjectContext) {
        func make<T: PersistentEntity>(_ object: T) -> T {
            object._$entityState.objectID = random.uuid()
            context.insert(object)
            return object
        }
        let board = make(TaskBoard()), deck = make(Deck())
        for _ in 0..<3 { _ = make(TaskCard()) }
        let slides = (0..<3).map { _ in make(Slide()) }
        deck.slides = [slides[0], slides[1]]
        let pals = (0..<5).map { _ in make(Pal()) }
        for (left, right) in [(0, 1), (1, 2), (3, 4)] { pals[left].pals.insert(pals[right]) }
        for _ in 0..<2 { _ = make(Crate()) }
        for _ in 0..<3 { _ = make(Sticker()) }
        board.name = "board"
    }

    /// One random edit of a bounded relationship: some take it beyond its bound or below it, and
    /// the save refuses those (the simulation rolls them back); concurrent ones meet in merges.
    mutating func editBoundedRelationship(in context: ObjectContext) throws {
        func pick<T>(_ objects: [T]) -> T? { objects.isEmpty ? nil : objects[Int.random(in: 0..<objects.count, using: &random)] }
        let cards = try context.fetchAll(TaskCard.self), slides = try context.fetchAll(Slide.self)
        let stickers = try context.fetchAll(Sticker.self)
        switch Int.random(in: 0..<6, using: &random) {
        case 0:
            pick(cards)?.board = random.chance(0.3) ? nil : pick(try context.fetchAll(TaskBoard.self))
        case 1:
            pick(slides)?.deck = random.chance(0.5) ? nil : pick(try context.fetchAll(Deck.self))
        case 2:
            if let sticker = pick(stickers), let crate = pick(try context.fetchAll(Crate.self)) {
                if random.chance(0.6) { sticker.crates.insert(crate) } else { sticker.crates.remove(crate) }
            }
        case 3:
            let pals = try context.fetchAll(Pal.self)
            if let pal = pick(pals), let other = pick(pals), pal !== other {
                if random.chance(0.6) { pal.pals.insert(other) } else { pal.pals.remove(other) }
            }
        case 4:
            let pals = try context.fetchAll(Pal.self)
            if let other = pick(pals), random.chance(0.5) {
                let pal = Pal()
                pal._$entityState.objectID = random.uuid()
                context.insert(pal)
                pal.pals.insert(other)
            } else if let pal = pick(pals) {
                context.delete(pal)
            }
        default:
            if let card = pick(cards), random.chance(0.5) { context.delete(card) } else if let slide = pick(slides) { context.delete(slide) }
        }
    }

    /// Whether a relationship shows more members than its `maxCount` allows.
    func boundsProblem(_ replica: TestReplica) throws -> String? {
        let reader = try replica.store.makeContext()
        for board in try reader.fetchAll(TaskBoard.self) where board.cards.count > 1 { return "board \(board.objectID) shows \(board.cards.count) cards" }
        for deck in try reader.fetchAll(Deck.self) where deck.slides.count > 2 { return "deck \(deck.objectID) shows \(deck.slides.count) slides" }
        for crate in try reader.fetchAll(Crate.self) where crate.stickers.count > 2 { return "crate \(crate.objectID) shows \(crate.stickers.count) stickers" }
        for sticker in try reader.fetchAll(Sticker.self) where sticker.crates.count > 1 { return "sticker \(sticker.objectID) is on \(sticker.crates.count) crates" }
        for pal in try reader.fetchAll(Pal.self) {
            if pal.pals.count > 2 { return "pal \(pal.objectID) shows \(pal.pals.count) pals" }
            if let other = pal.pals.first(where: { !$0.pals.contains(pal) }) { return "pal \(pal.objectID) shows \(other.objectID), which does not show it" }
        }
        return nil
    }
}

/// CONTRACT.md §3.10: `maxCount` and `minCount` after merges.
@Suite struct ResolutionTableCountTests {
    /// Checks that each replica journaled exactly `expected` entries of `kind`, each on `object`'s
    /// `property`, and returns them per replica.
    @discardableResult
    private func expectEntries(
        _ kind: ConflictEntry.Kind, in trio: ReplicaTrio, count expected: Int, entity: String, object: UUID, property: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [[ConflictEntry]] {
        try [("A", trio.a), ("B", trio.b), ("C", trio.c)].map { name, replica in
            let entries = try replica.replica.conflicts()
            #expect(entries.map(\.kind) == Array(repeating: kind, count: expected), "journal of \(name): \(entries)", sourceLocation: sourceLocation)
            for entry in entries {
                #expect(entry.entity == entity && entry.objectID == object && entry.property == property, "\(entry)", sourceLocation: sourceLocation)
            }
            return entries
        }
    }

    /// A board and two cards shared by A, B and C; then A links the first card to the board and B
    /// the second, `later` with the larger HLC. `beforeConcurrentEdits` runs on the shared base.
    private func linkTwoCardsConcurrently(
        _ trio: ReplicaTrio, later: ReplicaTrio.Side, beforeConcurrentEdits: () throws -> Void = {}
    ) throws -> (board: UUID, first: UUID, second: UUID) {
        let board = TaskBoard(), first = TaskCard(), second = TaskCard()
        board.name = "B"; first.title = "first"; second.title = "second"
        for object in [board, first, second] as [any PersistentEntity] { trio.a.context.insert(object) }
        try trio.a.context.save()
        try trio.shareBase()
        try beforeConcurrentEdits()
        trio.make(later: later)
        try trio.a.object(TaskCard.self, first.objectID).board = try trio.a.object(TaskBoard.self, board.objectID)
        try trio.a.context.save()
        try trio.b.object(TaskCard.self, second.objectID).board = try trio.b.object(TaskBoard.self, board.objectID)
        try trio.b.context.save()
        return (board.objectID, first.objectID, second.objectID)
    }

    /// The report's case: two replicas each link a card to a board that shows one at most.
    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func concurrentLinksBeyondMaxCountShowTheEarliestEverywhereAndJournalTheHiddenOne(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let trio = try ReplicaTrio(entities: countEntities)
        let (board, first, second) = try linkTwoCardsConcurrently(trio, later: later)
        let hiddenDot = try trio.lastDot(later)

        try trio.exchange(order)

        let (shown, hidden) = later == .a ? (second, first) : (first, second)
        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try replica.fetch(TaskBoard.self, board)?.cards.map(\.objectID) == [shown], "cards on \(name)")
            #expect(try replica.fetch(TaskCard.self, hidden)?.board == nil, "the hidden card's board on \(name)")
            #expect(try replica.fetch(TaskCard.self, shown)?.board?.objectID == board, "the shown card's board on \(name)")
        }
        for entries in try expectEntries(.aboveMaxCount, in: trio, count: 1, entity: "TaskBoard", object: board, property: "cards") {
            #expect(entries.first?.loser.value == journalJSON(hidden))
            #expect(entries.first?.loser.dot == hiddenDot)
            #expect(entries.first?.winner == nil)
        }
        try trio.expectConverged()

        // Unlinking the shown card frees the place: the hidden card shows, on the unlinking
        // replica at once and everywhere after the exchange, with no new entry.
        try trio.a.object(TaskCard.self, shown).board = nil
        try trio.a.context.save()
        #expect(try trio.a.fetch(TaskBoard.self, board)?.cards.map(\.objectID) == [hidden])
        #expect(try trio.a.object(TaskCard.self, hidden).board?.objectID == board, "the saving context sees the card that shows again")
        try trio.b.pull(from: trio.a)
        try trio.c.pull(from: trio.a)
        #expect(try trio.b.fetch(TaskBoard.self, board)?.cards.map(\.objectID) == [hidden])
        try expectEntries(.aboveMaxCount, in: trio, count: 1, entity: "TaskBoard", object: board, property: "cards")
        try trio.expectConverged()
    }

    /// syncd runs the same merge: pushed the two sides' change sets in either order, its copy of
    /// the dataset shows the same card as the replicas.
    @Test(arguments: ExchangeOrder.allCases)
    func syncdsEngineShowsTheSameCardsAsTheReplicas(order: ExchangeOrder) throws {
        let trio = try ReplicaTrio(entities: countEntities)
        var syncd: SyncdCopy?
        defer { syncd?.remove() }
        let (board, _, second) = try linkTwoCardsConcurrently(trio, later: .a) { syncd = try SyncdCopy(of: trio, name: "count-engine") }
        try syncd?.push(from: order == .aThenB ? [trio.a, trio.b] : [trio.b, trio.a])
        try trio.exchange(order)
        #expect(try syncd?.digest() == trio.a.digest())
        #expect(try trio.a.fetch(TaskBoard.self, board)?.cards.map(\.objectID) == [second])
    }

    /// Ordered one-to-many: each side appends a slide to a deck that holds one of two.
    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func orderedConcurrentAppendsBeyondMaxCountKeepTheEarliestInOrder(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let trio = try ReplicaTrio(entities: countEntities)
        let deck = Deck(), base = Slide(), first = Slide(), second = Slide()
        deck.name = "D"; base.title = "base"; first.title = "first"; second.title = "second"
        deck.slides = [base]
        for object in [deck, base, first, second] as [any PersistentEntity] { trio.a.context.insert(object) }
        try trio.a.context.save()
        try trio.shareBase()

        trio.make(later: later)
        try trio.a.object(Deck.self, deck.objectID).slides.append(try trio.a.object(Slide.self, first.objectID))
        try trio.a.context.save()
        try trio.b.object(Deck.self, deck.objectID).slides.append(try trio.b.object(Slide.self, second.objectID))
        try trio.b.context.save()

        try trio.exchange(order)

        let (shown, hidden) = later == .a ? (second.objectID, first.objectID) : (first.objectID, second.objectID)
        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try replica.fetch(Deck.self, deck.objectID)?.slides.map(\.objectID) == [base.objectID, shown], "slides on \(name)")
            #expect(try replica.fetch(Slide.self, hidden)?.deck == nil, "the hidden slide's deck on \(name)")
        }
        for entries in try expectEntries(.aboveMaxCount, in: trio, count: 1, entity: "Deck", object: deck.objectID, property: "slides") {
            #expect(entries.first?.loser.value == journalJSON(hidden))
        }
        try trio.expectConverged()
    }

    /// Many-to-many bounded on both sides: the owner's bound and the member's bound each keep the earliest links.
    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func manyToManyConcurrentLinksBeyondEitherSidesMaxCountKeepTheEarliest(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let trio = try ReplicaTrio(entities: countEntities)
        let crate = Crate(), other = Crate(), base = Sticker(), added = Sticker(), roaming = Sticker()
        crate.name = "crate"; other.name = "other"
        base.text = "base"; added.text = "added"; roaming.text = "roaming"
        crate.stickers = [base]
        for object in [crate, other, base, added, roaming] as [any PersistentEntity] { trio.a.context.insert(object) }
        try trio.a.context.save()
        try trio.shareBase()

        trio.make(later: later)
        // A fills the crate and puts the roaming sticker on the other crate; B puts the roaming
        // sticker on the crate: the crate gets three stickers, the roaming sticker two crates.
        try trio.a.object(Crate.self, crate.objectID).stickers.insert(try trio.a.object(Sticker.self, added.objectID))
        try trio.a.object(Sticker.self, roaming.objectID).crates.insert(try trio.a.object(Crate.self, other.objectID))
        try trio.a.context.save()
        try trio.b.object(Sticker.self, roaming.objectID).crates.insert(try trio.b.object(Crate.self, crate.objectID))
        try trio.b.context.save()

        try trio.exchange(order)

        // A earlier: the crate keeps base and A's sticker, the roaming sticker A's crate. B earlier:
        // the crate keeps base and the roaming sticker, which stays on it alone.
        let (stickers, roamingCrates): (Set<UUID>, [UUID]) = later == .b
            ? ([base.objectID, added.objectID], [other.objectID])
            : ([base.objectID, roaming.objectID], [crate.objectID])
        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(Set(try #require(try replica.fetch(Crate.self, crate.objectID)).stickers.map(\.objectID)) == stickers, "the crate's stickers on \(name)")
            #expect(try #require(try replica.fetch(Sticker.self, roaming.objectID)).crates.map(\.objectID) == roamingCrates, "the roaming sticker's crates on \(name)")
            #expect(try replica.fetch(Crate.self, other.objectID)?.stickers.map(\.objectID) == (later == .b ? [roaming.objectID] : []), "the other crate on \(name)")
        }
        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            let entries = try replica.replica.conflicts()
            #expect(!entries.isEmpty && entries.allSatisfy { $0.kind == .aboveMaxCount }, "journal of \(name): \(entries)")
        }
        try trio.expectConverged()
    }

    /// Concurrent unlinks leave a deck without slides: the merge keeps that and journals it.
    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func concurrentUnlinksBelowMinCountAreKeptAndJournaled(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let trio = try ReplicaTrio(entities: countEntities)
        let deck = Deck(), first = Slide(), second = Slide()
        deck.name = "D"; first.title = "first"; second.title = "second"
        deck.slides = [first, second]
        for object in [deck, first, second] as [any PersistentEntity] { trio.a.context.insert(object) }
        try trio.a.context.save()
        try trio.shareBase()

        trio.make(later: later)
        try trio.a.object(Slide.self, first.objectID).deck = nil
        try trio.a.context.save()
        try trio.b.object(Slide.self, second.objectID).deck = nil
        try trio.b.context.save()

        try trio.exchange(order)

        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try replica.fetch(Deck.self, deck.objectID)?.slides.isEmpty == true, "slides on \(name)")
        }
        try expectEntries(.belowMinCount, in: trio, count: 1, entity: "Deck", object: deck.objectID, property: "slides")
        try trio.expectConverged()

        // A save that leaves the slides alone goes through; one that changes them must fix them.
        try trio.a.object(Deck.self, deck.objectID).name = "renamed"
        try trio.a.context.save()
        try trio.a.object(Slide.self, first.objectID).deck = try trio.a.object(Deck.self, deck.objectID)
        try trio.a.context.save()
        #expect(try trio.a.fetch(Deck.self, deck.objectID)?.slides.map(\.objectID) == [first.objectID])
    }
}

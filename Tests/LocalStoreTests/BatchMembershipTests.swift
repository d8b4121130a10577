import Foundation
import LocalStore
@testable import LocalStoreCore
import Testing

/// `add(contentsOf:to:)` and `remove(contentsOf:from:)`: many members at once, inverses kept.
@Suite struct BatchMembershipTests {
    typealias Board = IdentifierFixture.Board
    typealias Ticket = IdentifierFixture.Ticket
    typealias Label = IdentifierFixture.Label

    func tickets(_ titles: [String]) -> [Ticket] {
        titles.map { title in
            let ticket = Ticket()
            ticket.title = title
            return ticket
        }
    }

    @Test func orderedMembersAreAppendedInOrderAndLeaveTheirPreviousOwner() throws {
        let store = try ObjectStore.inMemory(entities: IdentifierFixture.entities)
        let context = try store.makeContext()
        let first = Board(), second = Board()
        context.insert(first)
        context.insert(second)
        let batch = tickets(["a", "b", "c"])
        first.add(contentsOf: batch, to: \.tickets)
        #expect(first.tickets.map(\.title) == ["a", "b", "c"])
        #expect(batch.allSatisfy { $0.board === first })
        // Adding again keeps the order; moving to another board updates both sides.
        first.add(contentsOf: batch.reversed(), to: \.tickets)
        #expect(first.tickets.map(\.title) == ["a", "b", "c"])
        second.add(contentsOf: batch.prefix(2), to: \.tickets)
        #expect(first.tickets.map(\.title) == ["c"] && second.tickets.map(\.title) == ["a", "b"])
        #expect(batch[0].board === second && batch[2].board === first)
        try context.save()

        let reader = try store.makeContext()
        let reread = try reader.fetch(FetchDescriptor<Ticket>(sortBy: [SortDescriptor(\.title)]))
        #expect(reread.map { $0.board?.tickets.count } == [2, 2, 1])
        second.remove(contentsOf: [batch[0], batch[2]], from: \.tickets)
        #expect(second.tickets.map(\.title) == ["b"] && batch[0].board == nil && batch[2].board === first)
    }

    @Test func unorderedMembersOfAManyToManyGainAndLoseTheirInverse() throws {
        let board = Board()
        let labels = ["red", "green", "blue"].map { text in
            let label = Label()
            label.text = text
            return label
        }
        board.add(contentsOf: labels, to: \.labels)
        #expect(board.labels.count == 3 && labels.allSatisfy { $0.boards.contains(board) })
        board.remove(contentsOf: labels.dropFirst(), from: \.labels)
        #expect(board.labels.map(\.text) == ["red"])
        #expect(labels[0].boards == [board] && labels[1].boards.isEmpty && labels[2].boards.isEmpty)
    }
}

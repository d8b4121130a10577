import Foundation
import LocalStore
@testable import LocalStoreCore
import TestSupport
import Testing

/// A relationship whose rows the store cannot read: the property does not trap, the error is
/// kept on the context and thrown by `load(_:of:)` and `save()`.
@Suite struct RelationshipLoadFailureTests {
    typealias Ticket = IdentifierFixture.Ticket
    typealias Board = IdentifierFixture.Board
    let file = TemporaryStoreFile()

    func makeStore() throws -> ObjectStore {
        let store = try ObjectStore(path: file.path, entities: IdentifierFixture.entities)
        try IdentifierFixture.saveSprintBoard(in: try store.makeContext())
        return store
    }

    /// Makes the store fail to read `table` (it no longer exists under that name), then undoes it.
    func renameTable(_ table: String, to name: String) throws {
        try SQLiteConnection(path: file.path).execute(#"ALTER TABLE "\#(table)" RENAME TO "\#(name)""#)
    }

    @Test func aToManyThatCannotLoadReadsEmptyKeepsTheErrorAndRefusesToSave() throws {
        let context = try makeStore().makeContext()
        let board = try #require(try context.fetchAll(Board.self).first)
        try renameTable("Ticket", to: "TicketElsewhere")

        #expect(board.tickets.isEmpty)
        let recorded = try #require(context.relationshipLoadError)
        #expect(recorded.entity == "Board" && recorded.relationship == "tickets" && recorded.objectID == board.objectID)
        #expect(recorded.message.contains("cannot load Board.tickets"))
        let thrown = try #require(throws: StoreError.self) { try context.load(\.tickets, of: board) }
        #expect(thrown.relationship == "tickets" && thrown.message.contains("Ticket"))

        board.name = "Renamed"
        let refused = try #require(throws: StoreError.self) { try context.save() }
        #expect(refused.relationship == "tickets" && refused.message.contains("cannot save"))
        context.rollback()
        #expect(context.relationshipLoadError == nil)

        // The relationship stayed unloaded, so it loads once the store can read it again.
        try renameTable("TicketElsewhere", to: "Ticket")
        #expect(try context.load(\.tickets, of: board).map(\.title) == ["login", "logout"])
        #expect(board.tickets.count == 2)
        board.name = "Renamed"
        try context.save()
    }

    @Test func aToOneThatCannotLoadReadsNil() throws {
        let context = try makeStore().makeContext()
        let ticket = try #require(try context.fetchAll(Ticket.self).first)
        try renameTable("Board", to: "BoardElsewhere")
        #expect(ticket.board == nil)
        #expect(context.relationshipLoadError?.relationship == "board")
        try renameTable("BoardElsewhere", to: "Board")
        #expect(try context.load(\.board, of: ticket)?.name == "Sprint")
    }

    @Test func loadingAnAttributeOrAnUnmanagedObjectReturnsTheValue() throws {
        let context = try makeStore().makeContext()
        let loose = Ticket()
        loose.title = "draft"
        #expect(try context.load(\.title, of: loose) == "draft")
        #expect(try context.load(\.board, of: loose) == nil)
        let other = try ObjectStore(path: file.path, entities: IdentifierFixture.entities).makeContext()
        let foreign = try #require(try other.fetchAll(Board.self).first)
        #expect(throws: StoreError.self) { try context.load(\.tickets, of: foreign) }
    }
}

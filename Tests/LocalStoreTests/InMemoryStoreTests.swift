import Foundation
import LocalStore
@testable import LocalStoreCore
import Testing

/// `ObjectStore.inMemory(entities:)`: one database shared by the store's contexts, none on disk,
/// none shared between stores.
@Suite struct InMemoryStoreTests {
    typealias Board = IdentifierFixture.Board
    typealias Ticket = IdentifierFixture.Ticket

    @Test func contextsOfOneStoreShareItsDataAndStoresDoNotShareTheirs() throws {
        let store = try ObjectStore.inMemory(entities: IdentifierFixture.entities)
        #expect(store.path.hasPrefix("file:") && !FileManager.default.fileExists(atPath: store.path))
        let writer = try store.makeContext()
        let board = Board()
        board.name = "Sprint"
        let ticket = Ticket()
        ticket.title = "login"
        ticket.board = board
        writer.insert(board)
        try writer.save()

        let reader = try store.makeContext()
        let fetched = try #require(try reader.fetchAll(Board.self).first)
        #expect(fetched.name == "Sprint" && fetched.tickets.map(\.title) == ["login"])
        #expect(try reader.fetchCount(FetchDescriptor<Ticket>(predicate: #Predicate { $0.board?.name == "Sprint" })) == 1)

        let other = try ObjectStore.inMemory(entities: IdentifierFixture.entities)
        #expect(try other.makeContext().fetchAll(Board.self).isEmpty)
    }

    @Test func theDataLivesAsLongAsTheStore() throws {
        var context: ObjectContext?
        do {
            let store = try ObjectStore.inMemory(entities: IdentifierFixture.entities)
            let board = Board()
            board.name = "kept"
            let writer = try store.makeContext()
            writer.insert(board)
            try writer.save()
            context = try store.makeContext()
        }
        // The context keeps its store, and so the database, alive.
        #expect(try context?.fetchAll(Board.self).map(\.name) == ["kept"])
    }
}

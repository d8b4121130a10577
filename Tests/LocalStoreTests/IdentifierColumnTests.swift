import Foundation
import LocalStore
@testable import LocalStoreCore
import TestSupport
import Testing

/// Entities whose identity is the object ID, or an `id` attribute of their own.
enum IdentifierFixture {
    /// SwiftData style: the app's own `id` attribute, stored and queried like any other.
    @Entity final class Ticket {
        var id: UUID = UUID()
        var title: String = ""
        @Relationship(inverse: "tickets", deleteRule: .nullify) var board: Board?
    }

    @Entity final class Board {
        var name: String = ""
        @Relationship(inverse: "board", deleteRule: .cascade) var tickets: [Ticket] = []
        @Relationship(inverse: "boards", deleteRule: .nullify) var labels: Set<Label> = []
    }

    @Entity final class Label {
        var text: String = ""
        @Relationship(inverse: "labels", deleteRule: .nullify) var boards: Set<Board> = []
    }

    /// An attribute whose column would be the identifier column.
    @Entity final class Clash {
        @Attribute(persistentName: "_Object_ID") var reference: String = ""
    }

    static let entities: [any PersistentEntity.Type] = [Ticket.self, Board.self, Label.self]

    /// Saves the board "Sprint" with the tickets "login" and "logout" and the label "urgent".
    @discardableResult
    static func saveSprintBoard(in context: ObjectContext) throws -> Board {
        let board = Board()
        board.name = "Sprint"
        let label = Label()
        label.text = "urgent"
        board.labels = [label]
        for title in ["login", "logout"] {
            let ticket = Ticket()
            ticket.title = title
            ticket.board = board
        }
        context.insert(board)
        try context.save()
        return board
    }

    /// Entities as stores held them when the identifier column was `id` (none declares an `id`).
    @Entity final class Crew {
        var name: String = ""
        @Relationship(inverse: "crew", deleteRule: .cascade) var sailors: [Sailor] = []
        @Relationship(inverse: "crews", deleteRule: .nullify) var ports: Set<Port> = []
    }

    @Entity final class Sailor {
        var name: String = ""
        @Relationship(inverse: "sailors", deleteRule: .nullify) var crew: Crew?
    }

    @Entity final class Port {
        var name: String = ""
        @Relationship(inverse: "ports", deleteRule: .nullify) var crews: Set<Crew> = []
    }

    static let legacyEntities: [any PersistentEntity.Type] = [Crew.self, Sailor.self, Port.self]
}

@Suite struct IdentifierColumnTests {
    typealias Ticket = IdentifierFixture.Ticket
    typealias Board = IdentifierFixture.Board
    typealias Label = IdentifierFixture.Label
    let file = TemporaryStoreFile()

    func columns(of table: String, at path: String) throws -> [String] {
        try SQLiteConnection(path: path).rows("SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(table)]).map { row in
            if case .text(let name) = row[0] { return name }
            return ""
        }
    }

    /// Saves a board with two tickets and a label; returns the board's object ID and the tickets' `id`s.
    func saveBoard(in store: ObjectStore) throws -> (board: UUID, ticketIDs: [UUID]) {
        let context = try store.makeContext()
        let board = try IdentifierFixture.saveSprintBoard(in: context)
        return (board.objectID, board.tickets.map(\.id))
    }

    @Test func anEntityIsIdentifiableByItsObjectIDUnlessItDeclaresAnID() throws {
        let store = try ObjectStore(path: file.path, entities: IdentifierFixture.entities)
        let (boardID, ticketIDs) = try saveBoard(in: store)
        let context = try store.makeContext()
        let board = try #require(try context.fetchAll(Board.self).first)
        #expect(board.id == boardID && board.id == board.objectID)
        let tickets = board.tickets
        #expect(tickets.map(\.id) == ticketIDs)
        #expect(tickets.allSatisfy { $0.id != $0.objectID })
        func identity<Value: Identifiable>(_ value: Value) -> Value.ID { value.id }
        #expect(identity(tickets[0]) == ticketIDs[0])
        #expect(identity(board) == boardID)
    }

    @Test func anAttributeNamedIDIsStoredFetchedAndQueried() throws {
        let store = try ObjectStore(path: file.path, entities: IdentifierFixture.entities)
        let (_, ticketIDs) = try saveBoard(in: store)
        #expect(try columns(of: "Ticket", at: file.path) == ["_object_id", "id", "title", "board", "board_position"])
        let context = try store.makeContext()
        let wanted = ticketIDs[1]
        let found = try context.fetch(FetchDescriptor<Ticket>(predicate: #Predicate { $0.id == wanted }))
        #expect(found.map(\.title) == ["logout"])
        let sorted = try context.fetch(FetchDescriptor<Ticket>(sortBy: [SortDescriptor(\.id)]))
        #expect(sorted.map(\.id) == ticketIDs.sorted { $0.uuidString < $1.uuidString })
    }

    @Test func aColumnNamedLikeTheIdentifierColumnIsRefusedNamingEntityAndAttribute() throws {
        let error = try #require(throws: StoreError.self) {
            _ = try ObjectStore(path: file.path, entities: [IdentifierFixture.Clash.self])
        }
        #expect(error.code == .invalidSchema)
        #expect(error.entity == "Clash" && error.attribute == "reference")
        #expect(error.message.contains("_Object_ID"))
        #expect(try !FileManager.default.fileExists(atPath: file.path) || columns(of: "Clash", at: file.path).isEmpty)
    }

    @Test func aSchemaDocumentWithSuchAColumnIsRefusedToo() throws {
        let store = try ObjectStore(path: file.path, entities: IdentifierFixture.entities)
        var document = store.schemaDocument
        let ticket = try #require(document.entities.firstIndex { $0.name == "Ticket" })
        let title = try #require(document.entities[ticket].attributes.firstIndex { $0.name == "title" })
        document.entities[ticket].attributes[title].columns[0].name = "_object_id"
        let error = try #require(throws: StoreError.self) { try document.validateColumnNames() }
        #expect(error.entity == "Ticket" && error.attribute == "title")
    }

    /// Gives every entity table the layout stores had when the identifier column was `id`: the
    /// SQL those stores were created with, column for column.
    static func restoreLegacyIdentifierColumns(at path: String, tables: [String]) throws {
        let connection = try SQLiteConnection(path: path)
        for table in tables {
            try connection.execute(#"ALTER TABLE "\#(table)" RENAME COLUMN "_object_id" TO "id""#)
        }
    }

    /// Saves a crew of two sailors with a port; returns the crew's object ID.
    func saveCrew(in store: ObjectStore) throws -> UUID {
        let context = try store.makeContext()
        let crew = IdentifierFixture.Crew()
        crew.name = "Endeavour"
        let port = IdentifierFixture.Port()
        port.name = "Plymouth"
        crew.ports = [port]
        for name in ["Cook", "Banks"] {
            let sailor = IdentifierFixture.Sailor()
            sailor.name = name
            sailor.crew = crew
        }
        context.insert(crew)
        try context.save()
        return crew.objectID
    }

    @Test func aStoreWhoseIdentifierColumnIsIDIsMigratedInPlaceKeepingObjectsAndLinks() throws {
        let crewID = try saveCrew(in: try ObjectStore(path: file.path, entities: IdentifierFixture.legacyEntities))
        try IdentifierColumnTests.restoreLegacyIdentifierColumns(at: file.path, tables: ["Crew", "Sailor", "Port"])
        #expect(try columns(of: "Sailor", at: file.path) == ["id", "name", "crew", "crew_position"])

        let store = try ObjectStore(path: file.path, entities: IdentifierFixture.legacyEntities)
        #expect(try columns(of: "Sailor", at: file.path) == ["_object_id", "name", "crew", "crew_position"])
        #expect(try columns(of: "Port", at: file.path) == ["_object_id", "name"])
        let context = try store.makeContext()
        let crew = try #require(try context.fetchAll(IdentifierFixture.Crew.self).first)
        #expect(crew.objectID == crewID)
        #expect(crew.sailors.map(\.name) == ["Cook", "Banks"])
        #expect(crew.sailors.allSatisfy { $0.crew === crew })
        #expect(crew.ports.map(\.name) == ["Plymouth"])
        #expect(try context.fetchCount(FetchDescriptor<IdentifierFixture.Sailor>(predicate: #Predicate { $0.crew?.name == "Endeavour" })) == 2)
        // Changes save into the renamed tables.
        context.delete(crew)
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<IdentifierFixture.Sailor>()) == 0)
        // Opening it again finds nothing left to rename.
        _ = try ObjectStore(path: file.path, entities: IdentifierFixture.legacyEntities)
        #expect(try columns(of: "Port", at: file.path) == ["_object_id", "name"])
    }

    @Test func aStoreOpenedFromItsRecordedSchemaIsMigratedToo() throws {
        _ = try saveCrew(in: try ObjectStore(path: file.path, entities: IdentifierFixture.legacyEntities))
        try IdentifierColumnTests.restoreLegacyIdentifierColumns(at: file.path, tables: ["Crew", "Sailor", "Port"])
        let tool = try ObjectStore(existingAt: file.path)
        #expect(try columns(of: "Crew", at: tool.path) == ["_object_id", "name"])
        let crew = try #require(tool.schemaDocument.entity(named: "Crew"))
        #expect(try EntityTable(crew).allRows(on: SQLiteConnection(path: file.path)).count == 1)
    }
}

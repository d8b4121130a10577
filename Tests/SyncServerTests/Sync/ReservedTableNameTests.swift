import Foundation
@testable import HTTPServer
import SyncKit
import TestSupport
import Testing

@testable import SyncServer

/// A schema whose tables would take the name of the store's, sync's or the server's own tables,
/// or of another table of the schema, is refused as an invalid schema, naming entity and table.
@Suite struct ReservedTableNameTests {
    /// The board schema with the first entity (Board) stored in `table`.
    static func schema(boardTable table: String) throws -> Data {
        var document = try ClientReplica().store.schemaDocument
        document.entities[0].table = table
        return try rehashed(document)
    }

    @Test(arguments: ["_server_log", "_sync_state", "_SYNC_anything", "_server_x", "sqlite_sequence", "SQLite_stat1", "_localstore_metadata"])
    func aReservedTableNameIs400(_ table: String) throws {
        let server = try ServerFixture()
        let response = server.send(.put, "/v1/datasets/main/schema", body: try ReservedTableNameTests.schema(boardTable: table))
        #expect(response.status == .badRequest, "\(table): \(response.text)")
        #expect(response.errorCode == "invalid_schema")
        #expect(response.errorMessage.contains("Board"), "\(response.errorMessage)")
        #expect(response.errorMessage.contains("'\(table)'"), "\(response.errorMessage)")
        #expect(server.send(.get, "/v1/datasets/main/schema").errorCode == "schema_not_registered")
    }

    @Test(arguments: [("Card", "the entity Card"), ("tag", "the entity Tag"), ("Card_tags", "Card.tags")])
    func aTableOfAnotherEntityOrJoinIs400(_ table: String, _ owner: String) throws {
        let server = try ServerFixture()
        let response = server.send(.put, "/v1/datasets/main/schema", body: try ReservedTableNameTests.schema(boardTable: table))
        #expect(response.status == .badRequest, "\(table): \(response.text)")
        #expect(response.errorCode == "invalid_schema")
        // Table names compare case-insensitively; whichever of the two is named second is refused.
        #expect(response.errorMessage.lowercased().contains("'\(table.lowercased())'"), "\(response.errorMessage)")
        #expect(response.errorMessage.contains(owner), "\(response.errorMessage)")
    }

    @Test func aRegisteredDatasetKeepsItsSchemaWhenAReservedNameIsOffered() throws {
        let server = try ServerFixture()
        try server.registerSchema()
        let response = server.send(.put, "/v1/datasets/main/schema", body: try ReservedTableNameTests.schema(boardTable: "_server_log"))
        #expect(response.status == .badRequest, "\(response.text)")
        #expect(response.errorCode == "invalid_schema")
        #expect(server.send(.get, "/v1/datasets/main/schema").status == .ok)
    }
}

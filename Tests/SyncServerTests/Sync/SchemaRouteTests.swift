import Foundation
import SyncKit
import Testing

@testable import SyncServer

@Suite struct SchemaRouteTests {
    @Test(arguments: ServerStorage.allCases) func schemaIsNotFoundBeforeRegistration(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        let response = server.send(.get, "/v1/datasets/main/schema")
        #expect(response.status == .notFound)
        #expect(response.errorCode == "schema_not_registered")
        #expect(server.pull().errorCode == "schema_not_registered")
        #expect(server.push(Data(#"{"base":{},"changeSets":[]}"#.utf8)).errorCode == "schema_not_registered")
        #expect(server.send(.get, "/v1/datasets/main/snapshot").errorCode == "schema_not_registered")
    }

    @Test func firstRegistrationCreatesTheStoreAndTheSameSchemaIsAcceptedAgain() throws {
        let server = try ServerFixture()
        let schema = try ClientReplica().store.exportSchema()
        let document = try SchemaDocument(jsonData: schema)
        let first = try server.registerSchema(schema)
        #expect(first.json["versionHash"] as? String == document.versionHash)
        #expect(first.json["dataset"] as? String == "main")
        #expect(FileManager.default.fileExists(atPath: server.directory.appendingPathComponent("datasets/main/store.sqlite").path))
        let again = try server.registerSchema(schema)
        #expect(again.json["versionHash"] as? String == document.versionHash)
        let fetched = server.send(.get, "/v1/datasets/main/schema")
        #expect(fetched.status == .ok)
        #expect(try SchemaDocument(jsonData: fetched.body) == document)
    }

    @Test(arguments: ServerStorage.allCases) func additiveChangeMigrates(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        let document = try SchemaDocument(jsonData: try ClientReplica().store.exportSchema())
        try server.registerSchema(try document.jsonData())

        // A new optional attribute on Card, and a new entity (a copy of Tag under another name).
        var changed = try addingCardColor(to: document)
        var label = try #require(changed.entities.first { $0.name == "Tag" })
        label.name = "Sticker"
        label.table = "Sticker"
        label.relationships = []
        changed.entities.append(label)
        let body = try rehashed(changed)
        let response = try server.registerSchema(body)
        let newHash = try SchemaDocument(jsonData: body).versionHash
        #expect(response.json["versionHash"] as? String == newHash)
        #expect(try SchemaDocument(jsonData: server.send(.get, "/v1/datasets/main/schema").body).versionHash == newHash)
    }

    @Test(arguments: ServerStorage.allCases) func versionsListEveryRegisteredSchemaOldestFirst(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        let unregistered = server.send(.get, "/v1/datasets/main/schema/versions")
        #expect(unregistered.status == .notFound && unregistered.errorCode == "schema_not_registered")

        let document = try SchemaDocument(jsonData: try ClientReplica().store.exportSchema())
        let before = Date()
        try server.registerSchema(try document.jsonData())
        try server.registerSchema(try document.jsonData())
        let changed = try rehashed(try addingCardColor(to: document))
        try server.registerSchema(changed)
        let newHash = try SchemaDocument(jsonData: changed).versionHash

        let response = server.send(.get, "/v1/datasets/main/schema/versions")
        #expect(response.status == .ok)
        #expect(response.json["dataset"] as? String == "main")
        #expect(response.json["current"] as? String == newHash)
        let versions = try #require(response.json["versions"] as? [[String: Any]])
        // The same schema registered twice is one version.
        #expect(versions.map { $0["versionHash"] as? String } == [document.versionHash, newHash])
        let oldest = try #require(versions.first?["schema"])
        #expect(try SchemaDocument(jsonData: JSONSerialization.data(withJSONObject: oldest)) == document)
        for version in versions {
            let time = try #require((version["registeredAt"] as? String).flatMap { try? Date($0, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) })
            #expect(time >= before.addingTimeInterval(-1) && time <= Date().addingTimeInterval(1), "registeredAt \(time)")
        }
        // The history is the server's own: a client's snapshot does not carry it.
        let tables = try ServerFixture.tableNames(at: server.snapshotFile())
        #expect(!tables.contains("_server_schema_history"), "\(tables)")
    }

    @Test(arguments: ServerStorage.allCases) func incompatibleChangeIs409NamingTheDifferenceAndChangesNothing(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        let document = try SchemaDocument(jsonData: try ClientReplica().store.exportSchema())
        try server.registerSchema(try document.jsonData())

        var changed = document
        let cardIndex = try #require(changed.entities.firstIndex { $0.name == "Card" })
        let pointsIndex = try #require(changed.entities[cardIndex].attributes.firstIndex { $0.name == "points" })
        changed.entities[cardIndex].attributes[pointsIndex].swiftType = "String"
        changed.entities[cardIndex].attributes[pointsIndex].columns[0].type = .string
        let response = server.send(.put, "/v1/datasets/main/schema", body: try rehashed(changed))
        #expect(response.status == .conflict)
        #expect(response.errorCode == "schema_incompatible")
        #expect(response.errorMessage.contains("Card"), "\(response.errorMessage)")
        #expect(response.errorMessage.contains("points"), "\(response.errorMessage)")
        #expect(try SchemaDocument(jsonData: server.send(.get, "/v1/datasets/main/schema").body).versionHash == document.versionHash)

        // Retyped and missing at once: no version of the app had both schemas in its history.
        var mixed = changed
        mixed.entities.removeAll { $0.name == "Tag" }
        for index in mixed.entities.indices { mixed.entities[index].relationships.removeAll { $0.target == "Tag" } }
        let removal = server.send(.put, "/v1/datasets/main/schema", body: try rehashed(mixed))
        #expect(removal.status == .conflict)
        #expect(removal.errorMessage.contains("points"), "\(removal.errorMessage)")
    }

    /// A schema the dataset's extends additively is an older app's: it is accepted as it is, the
    /// dataset keeps its schema, and the older app's pushes merge (its new objects get the newer
    /// schema's defaults).
    @Test(arguments: ServerStorage.allCases) func anOlderAppsSchemaIsAcceptedAndChangesNothing(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        let client = try ClientReplica()
        let older = try SchemaDocument(jsonData: try client.store.exportSchema())
        var newer = try addingCardColor(to: older)
        let cardIndex = try #require(newer.entities.firstIndex { $0.name == "Card" })
        let colorIndex = try #require(newer.entities[cardIndex].attributes.firstIndex { $0.name == "color" })
        newer.entities[cardIndex].attributes[colorIndex].defaultValues = [.text("plain")]
        let newerBody = try rehashed(newer)
        let newerHash = try SchemaDocument(jsonData: newerBody).versionHash
        #expect(try server.registerSchema(newerBody).json["registration"] as? String == "created")

        let response = try server.registerSchema(try older.jsonData())
        #expect(response.json["registration"] as? String == "older")
        #expect(response.json["versionHash"] as? String == newerHash)
        #expect(try SchemaDocument(jsonData: server.send(.get, "/v1/datasets/main/schema").body).versionHash == newerHash)
        let versions = try #require(server.send(.get, "/v1/datasets/main/schema/versions").json["versions"] as? [[String: Any]])
        #expect(versions.map { $0["versionHash"] as? String } == [newerHash])

        let board = try client.addBoard("Older", cards: 1)
        #expect(server.push(try client.batch(), as: try client.credentials).status == .ok)
        let rows = try ServerFixture.entityRows(at: server.snapshotFile())
        let card = try #require(board.cards.first)
        #expect(rows.contains { $0.contains(card.objectID.uuidString) && $0.contains("'plain'") }, "\(rows)")
    }

    /// A schema that renames (`originalName`) migrates the dataset; an older app's pushes under
    /// the old name land on the new one, and what the log serves is what the app wrote.
    @Test(arguments: ServerStorage.allCases) func aRenameMigratesAndOlderPushesLandOnTheNewName(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        let client = try ClientReplica()
        let older = try SchemaDocument(jsonData: try client.store.exportSchema())
        try server.registerSchema(try older.jsonData())
        let board = try client.addBoard("Renamed", cards: 1)
        #expect(server.push(try client.batch(), as: try client.credentials).status == .ok)

        let response = try server.registerSchema(try renamingCardText(older))
        #expect(response.json["registration"] as? String == "migrated")
        // The older app keeps syncing: its schema is older, its edit of `text` lands on `body`.
        #expect(try server.registerSchema(try older.jsonData()).json["registration"] as? String == "older")
        let card = try #require(board.cards.first)
        let vector = try server.serverVector()
        card.text = "edited under the old name"
        try client.context.save()
        #expect(server.push(try client.batch(missingFrom: vector), as: try client.credentials).status == .ok)

        let rows = try ServerFixture.entityRows(at: server.snapshotFile())
        #expect(rows.contains { $0.hasPrefix("Card: ") && $0.contains("'edited under the old name'") }, "\(rows)")
        let columns = try SQLiteConnection(path: server.snapshotFile()).rows("SELECT name FROM pragma_table_info('Card')").compactMap { row -> String? in
            if case .text(let name) = row[0] { name } else { nil }
        }
        #expect(columns.contains("body") && !columns.contains("text"), "\(columns)")
        #expect(server.pull().text.contains("\"attribute\":\"text\""), "the log serves the change set as written")
    }

    @Test func unreadableOrInconsistentSchemaIs400() throws {
        let server = try ServerFixture()
        for body in ["", "not json", "[]", #"{"entities": 3}"#] {
            let response = server.send(.put, "/v1/datasets/main/schema", body: Data(body.utf8))
            #expect(response.status == .badRequest, "\(body)")
            #expect(response.errorCode == "invalid_schema", "\(body)")
        }
        var document = try SchemaDocument(jsonData: try ClientReplica().store.exportSchema())
        document.versionHash = String(repeating: "0", count: 64)
        let response = server.send(.put, "/v1/datasets/main/schema", body: try document.jsonData())
        #expect(response.errorCode == "invalid_schema")
        #expect(!FileManager.default.fileExists(atPath: server.directory.appendingPathComponent("datasets/main/store.sqlite").path))
    }
}

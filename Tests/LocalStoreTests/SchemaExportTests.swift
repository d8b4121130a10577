import Codecs
import Foundation
import LocalStore
@testable import LocalStoreCore
import TestSupport
import Testing

@Suite struct SchemaExportTests {
    let file = TemporaryStoreFile()

    @Test func exportDescribesEntitiesAttributesRelationshipsAndHash() throws {
        let store = try ObjectStore(path: file.path, entities: [HandPlace.self, HandPerson.self])
        let document = try SchemaDocument(jsonData: try store.exportSchema())
        #expect(document.versionHash.count == 64)
        let person = try #require(document.entity(named: "HandPerson"))
        let nickname = try #require(person.attributes.first { $0.name == "nickname" })
        #expect(nickname.persistentName == "nick")
        #expect(person.attributes.first { $0.name == "email" }?.unique == true)
        #expect(person.attributes.first { $0.name == "mood" }?.storage == .raw)
        #expect(person.attributes.first { $0.name == "prefs" }?.columns.first?.type == .json)
        let place = try #require(document.entity(named: "HandPlace"))
        #expect(place.attributes.first { $0.name == "location" }?.columns.map(\.name) == ["location_latitude", "location_longitude"])
        let relationship = try #require(person.relationships.first)
        #expect(relationship.target == "HandPlace")
        #expect(relationship.inverse == "people")
        #expect(relationship.deleteRule == .nullify)
        #expect(relationship.storage == .foreignKey(column: relationship.name, positionColumn: nil))
        // The same entities always hash the same; the file records the schema it was opened with.
        #expect(try ObjectStore(path: file.path, entities: [HandPlace.self, HandPerson.self]).schemaDocument.versionHash == document.versionHash)
    }

    @Test func protocolExampleSchemaReadsAndWritesBackUnchanged() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Protocol/examples/boards-schema.json")
        let original = try Data(contentsOf: url)
        // Reading checks the versionHash, which covers every relationship's storage encoding.
        let document = try SchemaDocument(jsonData: original)
        let storages = document.entities.flatMap(\.relationships).map(\.storage)
        #expect(storages.contains(.inverseForeignKey(table: "Card", column: "board", positionColumn: "board_position")))
        #expect(storages.contains(.foreignKey(column: "board", positionColumn: "board_position")))
        #expect(storages.contains(.joinTable(table: "Card_tags", ownerColumn: "owner", memberColumn: "member", positionColumn: nil)))
        #expect(storages.filter(\.ownsJoinTable).count == 1)
        let rewritten = try JSONSerialization.jsonObject(with: try document.jsonData()) as? NSDictionary
        #expect(rewritten == (try JSONSerialization.jsonObject(with: original) as? NSDictionary))
    }

    @Test func unknownStorageKindIsRejected() {
        let json = #"{"kind": "sideTable", "table": "T"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(RelationshipStorage.self, from: Data(json.utf8)) }
    }

    @Test func sha256MatchesKnownVectors() {
        #expect(SHA256.hexDigest("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hexDigest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hexDigest(String(repeating: "a", count: 1000)) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }
}

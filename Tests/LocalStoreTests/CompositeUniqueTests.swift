import Foundation
import LocalStore
@testable import LocalStoreCore
import TestSupport
import Testing

@Entity final class Player {
    #Unique<Player>([\.first, \.last], [\.email])
    var first: String = ""
    var last: String = ""
    var email: String? = nil
}

/// `Player` as stored before it declared its keys: the same table and attributes.
final class PlayerWithoutKeys {
    let _$entityState = EntityState()
    init(_$materializing _: MaterializingToken) {}
    init() {}
    var first: String = ""
    var last: String = ""
    var email: String?
}

extension PlayerWithoutKeys: PersistentEntity {
    static let _$entity = EntityDescription(PlayerWithoutKeys.self, name: "Player", properties: [
        .attribute("first", keyPath: \PlayerWithoutKeys.first, get: { $0.first }, set: { $0.first = $1 }),
        .attribute("last", keyPath: \PlayerWithoutKeys.last, get: { $0.last }, set: { $0.last = $1 }),
        .attribute("email", keyPath: \PlayerWithoutKeys.email, get: { $0.email }, set: { $0.email = $1 }),
    ])
}

@Suite struct CompositeUniqueTests {
    let file = TemporaryStoreFile()

    func player(_ first: String, _ last: String, email: String? = nil) -> Player {
        let player = Player()
        player.first = first
        player.last = last
        player.email = email
        return player
    }

    @Test func theKeysReachTheDescriptionAndTheSchemaDocument() throws {
        #expect(Player._$entity.uniquenessConstraints == [["first", "last"], ["email"]])
        let store = try ObjectStore(path: file.path, entities: [Player.self])
        let entity = try #require(store.schemaDocument.entity(named: "Player"))
        #expect(entity.uniquenessConstraints == [["first", "last"], ["email"]])
        #expect(entity.uniqueKeys.map(\.attributeNames) == [["first", "last"], ["email"]])
        let json = String(decoding: try store.exportSchema(), as: UTF8.self)
        #expect(json.contains("uniquenessConstraints"))
    }

    @Test func aSaveRefusesAnObjectSharingEveryValueOfAKeyNamingKeyValuesAndTheOtherObject() throws {
        let store = try ObjectStore(path: file.path, entities: [Player.self])
        let context = try store.makeContext()
        let first = player("Ada", "Lovelace")
        context.insert(first)
        // Sharing part of a key is allowed.
        context.insert(player("Ada", "Byron"))
        try context.save()
        let second = player("Ada", "Lovelace")
        context.insert(second)
        let error = try #require(throws: StoreError.self) { try context.save() }
        #expect(error.code == .uniqueViolation)
        #expect(error.entity == "Player")
        #expect(error.attribute == "first, last")
        #expect(error.objectID == second.objectID)
        #expect(error.message.contains("(first, last)"))
        #expect(error.message.contains("Ada") && error.message.contains("Lovelace"))
        #expect(error.message.contains(first.objectID.storageText))
        second.last = "King"
        try context.save()
        // Changing an existing object into a duplicate is refused too.
        second.last = "Lovelace"
        #expect(throws: StoreError.self) { try context.save() }
    }

    @Test func nilValuesNeverCollide() throws {
        let store = try ObjectStore(path: file.path, entities: [Player.self])
        let context = try store.makeContext()
        context.insert(player("A", "1"))
        context.insert(player("A", "2"))
        try context.save()
        context.insert(player("B", "1", email: "b@example.com"))
        try context.save()
        context.insert(player("B", "2", email: "b@example.com"))
        let error = try #require(throws: StoreError.self) { try context.save() }
        #expect(error.attribute == "email")
    }

    @Test func migrationAddsAndDropsTheKeysIndex() throws {
        func indexes() throws -> [SQLValue] {
            try SQLiteConnection(path: file.path).rows("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Player' AND sql IS NOT NULL").map { $0[0] }
        }
        _ = try ObjectStore(path: file.path, entities: [PlayerWithoutKeys.self])
        #expect(try indexes().isEmpty)
        _ = try ObjectStore(path: file.path, entities: [Player.self])
        #expect(Set(try indexes()) == [.text("Player_first_last_unique"), .text("Player_email_unique")])
        _ = try ObjectStore(path: file.path, entities: [PlayerWithoutKeys.self])
        #expect(try indexes().isEmpty)
    }

    @Test func aKeyNamingARelationshipOrNothingIsRefusedWhenTheStoreOpens() throws {
        let error = try #require(throws: StoreError.self) {
            _ = try ObjectStore(path: file.path, entities: [PlayerWithABadKey.self])
        }
        #expect(error.code == .invalidSchema)
        #expect(error.entity == "Player")
        #expect(error.attribute == "nickname")
        #expect(error.message.contains("#Unique"))
    }
}

/// A hand-written description whose key names an attribute the entity lacks.
final class PlayerWithABadKey {
    let _$entityState = EntityState()
    init(_$materializing _: MaterializingToken) {}
    init() {}
    var first: String = ""
}

extension PlayerWithABadKey: PersistentEntity {
    static let _$entity = EntityDescription(PlayerWithABadKey.self, name: "Player", uniquenessConstraints: [["first", "nickname"]], properties: [
        .attribute("first", keyPath: \PlayerWithABadKey.first, get: { $0.first }, set: { $0.first = $1 }),
    ])
}

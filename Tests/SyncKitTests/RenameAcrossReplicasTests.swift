import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport
import Testing

/// An entity, an attribute and a relationship renamed with `originalName` keep their data across
/// replicas: what an older app writes under the old names lands on the new ones (CONTRACT.md §8).
@Suite struct RenameAcrossReplicasTests {
    @Test func aRenamingSchemaIsAnAdditiveChangeAndTheOlderOneIsOlder() throws {
        let older = try ObjectStore.inMemory(entities: RenameVersion1.entities).schemaDocument
        let newer = try ObjectStore.inMemory(entities: RenameVersion2.entities).schemaDocument
        guard case .additive(let changes) = newer.compatibility(with: older) else {
            Issue.record("\(newer.compatibility(with: older))")
            return
        }
        #expect(changes.contains("entity Card is renamed Tile"), "\(changes)")
        #expect(changes.contains("attribute Card.text is renamed Tile.body"), "\(changes)")
        #expect(changes.contains("relationship Deck.cards is renamed Deck.tiles"), "\(changes)")
        #expect(!changes.contains { $0.hasSuffix("is new") }, "\(changes)")
        // Without `originalName` the same change removes and adds: nothing a migration keeps.
        var unnamed = newer
        unnamed.entities = unnamed.entities.map { entity in
            var entity = entity
            entity.originalName = nil
            return entity
        }
        guard case .incompatible = unnamed.compatibility(with: older) else {
            Issue.record("\(unnamed.compatibility(with: older))")
            return
        }
    }

    @Test(arguments: [true, false])
    func anOlderAppsEditsLandOnTheRenamedPropertiesAndTheUpgradedStoreEqualsTheNewer(olderFirst: Bool) throws {
        let clock = FakeClock()
        let older = try TestReplica(clock: clock, name: "rename-v1", entities: RenameVersion1.entities)
        let newer = try TestReplica(clock: clock, name: "rename-v2", entities: RenameVersion2.entities)
        let deck = RenameVersion1.Deck()
        deck.title = "Spring"
        let card = RenameVersion1.Card()
        card.text = "first"
        card.points = 1
        deck.addToCards(card)
        card.cover = deck
        older.context.insert(deck)
        try older.context.save()

        // The newer app reads the older one's objects under the new names.
        try newer.pull(from: older)
        let tile = try #require(try newer.context.object(RenameVersion2.Tile.self, id: card.objectID))
        #expect(tile.body == "first" && tile.points == 1)
        #expect(tile.deck?.objectID == deck.objectID && tile.cover?.objectID == deck.objectID)
        #expect(try newer.fetch(RenameVersion2.Deck.self, deck.objectID)?.tiles.map(\.objectID) == [card.objectID])

        // Concurrently: the newer app edits the renamed attribute first, the older one after it,
        // and drops the cover (an unlink recorded from the side that no longer records the edge).
        tile.body = "from the newer app"
        tile.points = 5
        try newer.context.save()
        card.text = "from the older app"
        card.cover = nil
        try older.context.save()

        try older.exchange(with: newer, pullingFirst: olderFirst)
        let merged = try #require(try newer.fetch(RenameVersion2.Tile.self, card.objectID))
        #expect(merged.body == "from the older app", "the later write wins, under its new name")
        #expect(merged.points == 5 && merged.cover == nil)
        #expect(try older.fetch(RenameVersion1.Card.self, card.objectID)?.text == "from the older app")
        #expect(try older.replica.keptChangeSetCount() == 1, "the newer app's change set names Tile")

        // Upgraded, the older app's store holds what the newer one holds.
        let upgraded = try SyncReplica(store: try ObjectStore(path: older.path, entities: RenameVersion2.entities),
                                       wallClock: { clock.read() }, newReplicaID: UUID())
        #expect(try upgraded.keptChangeSetCount() == 0)
        let upgradedDigest = try storeDigest(older.path, columnsByName: true), newerDigest = try storeDigest(newer.path, columnsByName: true)
        #expect(upgradedDigest == newerDigest, "\(upgradedDigest)\n---\n\(newerDigest)")
    }

    /// The newer app records the one-to-one from `Deck.front`, the side the older app does not
    /// record from: the older app applies the link from its own side (`Card.cover`), and unlinks it
    /// the same way.
    @Test(arguments: [true, false])
    func aNewerAppsOneToOneLinkReachesAnOlderAppFromItsSide(olderFirst: Bool) throws {
        let clock = FakeClock()
        let older = try TestReplica(clock: clock, name: "front-v1", entities: RenameVersion1.entities)
        let newer = try TestReplica(clock: clock, name: "front-v2", entities: RenameVersion2.entities)
        let deck = RenameVersion1.Deck(), card = RenameVersion1.Card()
        deck.title = "Summer"
        card.text = "face"
        older.context.insert(deck)
        older.context.insert(card)
        try older.context.save()
        try newer.pull(from: older)

        let tile = try #require(try newer.context.object(RenameVersion2.Tile.self, id: card.objectID))
        try #require(try newer.context.object(RenameVersion2.Deck.self, id: deck.objectID)).front = tile
        try newer.context.save()
        #expect(try newer.replica.changeSets(missingFrom: older.replica.versionVector()).flatMap(\.operations).contains {
            if case .link(entity: "Deck", _, relationship: "front", _) = $0 { true } else { false }
        })
        try older.exchange(with: newer, pullingFirst: olderFirst)
        #expect(try older.fetch(RenameVersion1.Card.self, card.objectID)?.cover?.objectID == deck.objectID)
        #expect(try older.replica.keptChangeSetCount() == 0, "nothing of it is unknown")

        try #require(try newer.context.object(RenameVersion2.Deck.self, id: deck.objectID)).front = nil
        try newer.context.save()
        try older.exchange(with: newer, pullingFirst: olderFirst)
        #expect(try older.fetch(RenameVersion1.Card.self, card.objectID)?.cover == nil)
        _ = try SyncReplica(store: try ObjectStore(path: older.path, entities: RenameVersion2.entities), wallClock: { clock.read() }, newReplicaID: UUID())
        #expect(try storeDigest(older.path, columnsByName: true) == storeDigest(newer.path, columnsByName: true))
    }

    /// A server's store migrates to the renaming schema and translates what older apps push.
    @Test func aServerMigratesToTheRenamesAndTranslatesOlderPushes() throws {
        let older = try TestReplica(name: "rename-server-v1", entities: RenameVersion1.entities)
        let newer = try TestReplica(name: "rename-server-v2", entities: RenameVersion2.entities)
        let directory = try TemporaryDirectory(prefix: "rename-server")
        let path = directory.path + "/store.sqlite"
        let card = RenameVersion1.Card()
        card.text = "pushed before"
        older.context.insert(card)
        try older.context.save()
        var engine = try SQLiteDatasetEngine.create(at: path, schema: older.store.schemaDocument)
        _ = try engine.apply(try engine.validate(try older.replica.changeSets(missingFrom: VersionVector())), pushedBy: try older.replica.credentials())

        engine = try SQLiteDatasetEngine.create(at: path, schema: newer.store.schemaDocument)
        card.text = "pushed after"
        try older.context.save()
        _ = try engine.apply(try engine.validate(try older.replica.changeSets(missingFrom: engine.versionVector())), pushedBy: try older.replica.credentials())
        #expect(try storeDigest(path).contains("'pushed after'"))
        // What the server serves is what the older app wrote; the newer one translates it.
        _ = try newer.replica.apply(try engine.readLog(after: 0, limit: 10, excluding: nil).changeSets)
        #expect(try newer.fetch(RenameVersion2.Tile.self, card.objectID)?.body == "pushed after")
        #expect(try storeDigest(path, columnsByName: true) == storeDigest(newer.path, columnsByName: true))
    }
}

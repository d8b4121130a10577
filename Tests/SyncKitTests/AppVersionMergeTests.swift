import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport
import Testing

/// A replica on an older version of the app syncs with one on a newer version: it applies what
/// its schema knows, keeps the rest, and once the app is upgraded its store holds everything the
/// newer replica holds (CONTRACT.md §8).
@Suite struct AppVersionMergeTests {
    /// What the two replicas do concurrently, after sharing one board with one card.
    struct Scenario {
        let clock = FakeClock()
        let older: TestReplica
        let newer: TestReplica
        let board: UUID
        let card: UUID
        let olderCard: UUID
        let label: UUID

        init() throws {
            older = try TestReplica(clock: clock, name: "v1", entities: AppVersion1.entities)
            newer = try TestReplica(clock: clock, name: "v2", entities: AppVersion2.entities)
            let board = AppVersion1.Board()
            board.title = "Plans"
            board.note = "first"
            let card = AppVersion1.Card()
            card.text = "write"
            board.addToCards(card)
            older.context.insert(board)
            try older.context.save()
            self.board = board.objectID
            self.card = card.objectID
            try newer.pull(from: older)

            // The newer app writes what only it knows, and something both know.
            let newerBoard = try #require(try newer.context.object(AppVersion2.Board.self, id: board.objectID))
            let newerCard = try #require(try newer.context.object(AppVersion2.Card.self, id: card.objectID))
            newerCard.text = "write more"
            newerCard.priority = 7
            newerCard.isDone = true
            newerBoard.note = nil
            let label = AppVersion2.Label()
            label.name = "urgent"
            newerBoard.addToLabels(label)
            try newer.context.save()
            self.label = label.objectID

            // Concurrently, the older app edits what it knows and creates a card.
            let olderCard = try #require(try older.context.object(AppVersion1.Card.self, id: card.objectID))
            olderCard.points = 5
            let added = AppVersion1.Card()
            added.text = "review"
            try #require(try older.context.object(AppVersion1.Board.self, id: board.objectID)).addToCards(added)
            try older.context.save()
            self.olderCard = added.objectID
        }

        /// Exchanges both ways, in the given order.
        func exchange(olderFirst: Bool) throws {
            try older.exchange(with: newer, pullingFirst: olderFirst)
        }
    }

    @Test(arguments: [true, false])
    func anOlderReplicaAppliesWhatItKnowsAndKeepsTheRest(olderFirst: Bool) throws {
        let scenario = try Scenario()
        try scenario.exchange(olderFirst: olderFirst)
        let older = scenario.older, newer = scenario.newer

        // The older replica has the newer one's edit of what it knows, merged with its own.
        let olderCard = try #require(try older.fetch(AppVersion1.Card.self, scenario.card))
        #expect(olderCard.text == "write more")
        #expect(olderCard.points == 5)
        // A note set to nil needs the newer schema: the older replica keeps its last value.
        #expect(try older.fetch(AppVersion1.Board.self, scenario.board)?.note == "first")
        #expect(try older.replica.keptChangeSetCount() == 1)

        // The newer replica has the older one's edits, and its defaults on the card it created.
        let newerCard = try #require(try newer.fetch(AppVersion2.Card.self, scenario.card))
        #expect(newerCard.points == 5 && newerCard.priority == 7 && newerCard.isDone)
        let created = try #require(try newer.fetch(AppVersion2.Card.self, scenario.olderCard))
        #expect(created.text == "review" && created.priority == 3 && !created.isDone)
        #expect(try newer.fetch(AppVersion2.Board.self, scenario.board)?.labels.map(\.name) == ["urgent"])
        #expect(try newer.replica.keptChangeSetCount() == 0)

        // The older replica relays the newer one's change set whole.
        let relay = try TestReplica(clock: scenario.clock, name: "relay", entities: AppVersion2.entities)
        try relay.pull(from: older)
        #expect(try relay.digest() == newer.digest())
    }

    @Test(arguments: [true, false])
    func anUpgradedStoreHoldsEverythingTheNewerReplicaWrote(olderFirst: Bool) throws {
        let scenario = try Scenario()
        try scenario.exchange(olderFirst: olderFirst)
        let journalBefore = try scenario.older.replica.conflicts()
        let vector = try scenario.older.replica.versionVector()
        let outbox = try scenario.older.replica.unacknowledgedCount()

        // The app is upgraded: its store file opens with the newer model.
        let store = try ObjectStore(path: scenario.older.path, entities: AppVersion2.entities)
        let clock = scenario.clock
        let upgraded = try SyncReplica(store: store, wallClock: { clock.read() }, newReplicaID: UUID())
        #expect(upgraded.replicaID == scenario.older.replica.replicaID)
        #expect(try upgraded.keptChangeSetCount() == 0)
        let upgradedDigest = try TestReplica.digest(of: scenario.older.path, columnsByName: true)
        let newerDigest = try TestReplica.digest(of: scenario.newer.path, columnsByName: true)
        #expect(upgradedDigest == newerDigest, "\(upgradedDigest)\n---\n\(newerDigest)")
        #expect(try upgraded.versionVector() == vector)
        #expect(try upgraded.unacknowledgedCount() == outbox)
        #expect(try upgraded.conflicts() == journalBefore)
        let context = try store.makeContext()
        let board = try #require(try context.object(AppVersion2.Board.self, id: scenario.board))
        #expect(board.note == nil && board.labels.map(\.name) == ["urgent"])

        // It goes on syncing: its next edit reaches the newer replica.
        let card = try #require(try context.object(AppVersion2.Card.self, id: scenario.card))
        card.priority = 9
        try context.save()
        let missing = try upgraded.changeSets(missingFrom: scenario.newer.replica.versionVector())
        _ = try scenario.newer.replica.apply(missing)
        #expect(try scenario.newer.fetch(AppVersion2.Card.self, scenario.card)?.priority == 9)
        #expect(try TestReplica.digest(of: scenario.older.path, columnsByName: true) == TestReplica.digest(of: scenario.newer.path, columnsByName: true))
    }

    /// A file a newer app made (a server's snapshot) opened by an older app: the older schema's
    /// migration drops what it lacks from the rows, the history keeps it, and the upgraded store
    /// holds it again.
    @Test func aNewerAppsFileOpenedByAnOlderOneKeepsWhatItLacks() throws {
        let scenario = try Scenario()
        try scenario.exchange(olderFirst: true)
        // A note the older schema can hold (it refuses to open a file whose rows hold nil there).
        try #require(try scenario.newer.context.object(AppVersion2.Board.self, id: scenario.board)).note = "second"
        try scenario.newer.context.save()
        let copy = TemporaryStoreFile(prefix: "newer-snapshot")
        try SQLiteConnection(path: scenario.newer.path).execute("VACUUM INTO '\(copy.path)'")
        try SyncReplica.adoptSnapshot(at: copy.path)

        let olderStore = try ObjectStore(path: copy.path, entities: AppVersion1.entities)
        let older = try SyncReplica(store: olderStore)
        #expect(try older.keptChangeSetCount() >= 1)
        let context = try olderStore.makeContext()
        #expect(try context.object(AppVersion1.Card.self, id: scenario.card)?.text == "write more")
        #expect(try context.object(AppVersion1.Board.self, id: scenario.board)?.note == "second")

        let upgraded = try SyncReplica(store: try ObjectStore(path: copy.path, entities: AppVersion2.entities))
        #expect(try upgraded.keptChangeSetCount() == 0)
        #expect(try storeDigest(copy.path, columnsByName: true) == storeDigest(scenario.newer.path, columnsByName: true))
    }

    /// Only values a newer schema could have written are kept: a value of the wrong type is
    /// still refused, naming the change set, and changes nothing.
    @Test func aValueOfTheWrongTypeIsRefusedNotKept() throws {
        let scenario = try Scenario()
        let before = try scenario.older.digest()
        let wrong = ChangeSet(
            dot: Dot(replica: UUID(), seq: 1), hlc: try scenario.older.replica.latestHLC(), vector: try scenario.older.replica.versionVector(),
            operations: [.set(entity: "Card", id: scenario.card, attribute: "points", values: [.text("five")])])
        let error = try #require(throws: SyncError.self) { try scenario.older.replica.apply([wrong]) }
        #expect(error.code == .schemaMismatch)
        #expect(error.message.contains("Card.points"), "\(error.message)")
        #expect(try scenario.older.digest() == before)
        #expect(try scenario.older.replica.keptChangeSetCount() == 0)
    }

    /// A server's schema is the newest registered: what it does not know is refused, not kept.
    @Test func aServerRefusesWhatItsSchemaDoesNotKnow() throws {
        let scenario = try Scenario()
        let directory = try TemporaryDirectory(prefix: "app-version-server")
        let engine = try SQLiteDatasetEngine.create(at: directory.path + "/store.sqlite", schema: scenario.older.store.schemaDocument)
        let batch = try scenario.newer.replica.changeSets(missingFrom: VersionVector())
        let error = try #require(throws: SyncError.self) { try engine.apply(try engine.validate(batch), pushedBy: nil) }
        #expect(error.code == .schemaMismatch)
        #expect(error.message.contains("Board.note") && error.message.contains("not optional"), "\(error)")
    }
}

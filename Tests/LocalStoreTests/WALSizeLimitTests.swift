import Foundation
import LocalStore
@testable import LocalStoreCore
@testable import SQLiteDatabase
import TestSupport
import Testing

/// A store's WAL file goes back to ``ObjectStore/walSizeLimit`` after a checkpoint, however large
/// one transaction made it.
@Suite struct WALSizeLimitTests {
    typealias Board = IdentifierFixture.Board

    static func walBytes(of path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber).intValue
    }

    @Test func aLargeSaveLeavesNoLargeWALBehind() throws {
        let file = TemporaryStoreFile(prefix: "wal-limit")
        let store = try ObjectStore(path: file.path, entities: IdentifierFixture.entities)
        let context = try store.makeContext()
        let name = String(repeating: "x", count: 400)
        for index in 0..<20_000 {
            let board = Board()
            board.name = "\(index) \(name)"
            context.insert(board)
        }
        try context.save()
        // The save's pages all went through the WAL: far more than the limit.
        let afterImport = try Self.walBytes(of: file.path)
        #expect(afterImport > 4 * ObjectStore.walSizeLimit, "\(afterImport)")

        // The store's background checkpointer copies them into the file; the next write starts
        // the WAL over and cuts it back.
        store.waitForCheckpoints()
        let board = Board()
        board.name = "after"
        context.insert(board)
        try context.save()
        let afterNextSave = try Self.walBytes(of: file.path)
        #expect(afterNextSave <= ObjectStore.walSizeLimit, "\(afterNextSave)")
        #expect(try context.fetchCount(FetchDescriptor<Board>()) == 20_001)
    }
}

/// The connections of a store file leave the WAL's checkpoints to the store's checkpointer; an
/// in-memory store has no WAL and no checkpointer.
@Suite struct StoreCheckpointerTests {
    @Test func everyConnectionOfAStoreFileUsesTheStoresCheckpointer() throws {
        let file = TemporaryStoreFile(prefix: "store-checkpointer")
        let store = try ObjectStore(path: file.path, entities: IdentifierFixture.entities)
        let first = try store.openConnection(), second = try store.openConnection()
        let checkpointer = try #require(first.walCommitObserver)
        #expect(second.walCommitObserver === checkpointer)
        #expect(checkpointer.path == file.path)
    }

    @Test func anInMemoryStoreHasNoCheckpointer() throws {
        let store = try ObjectStore.inMemory(entities: IdentifierFixture.entities)
        #expect(try store.openConnection().walCommitObserver == nil)
    }
}

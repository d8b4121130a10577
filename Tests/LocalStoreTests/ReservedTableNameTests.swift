import Foundation
import LocalStore
@testable import LocalStoreCore
import TestSupport
import Testing

/// An entity whose table name SQLite reserves.
@Entity final class sqlite_Note {
    var title: String = ""
}

/// An entity whose table is named like the join table of `Shelf.items` / `ShelfItem.shelves`.
@Entity final class Shelf_items {
    var label: String = ""
}

@Entity final class Shelf {
    @Relationship(inverse: "shelves", deleteRule: .nullify) var items: Set<ShelfItem> = []
}

@Entity final class ShelfItem {
    @Relationship(inverse: "items", deleteRule: .nullify) var shelves: Set<Shelf> = []
}

/// Stores refuse schemas whose tables would take a reserved name or another table's name,
/// before touching the file.
@Suite struct ReservedTableNameTests {
    let file = TemporaryStoreFile()

    @Test func anEntityWithAReservedTableNameIsRefused() throws {
        let error = try #require(throws: StoreError.self) { try ObjectStore(path: file.path, entities: [sqlite_Note.self]) }
        #expect(error.code == .invalidSchema)
        #expect(error.entity == "sqlite_Note")
        #expect(error.message.contains("'sqlite_Note'"), "\(error.message)")
        #expect(error.message.contains("reserved"), "\(error.message)")
        #expect(!FileManager.default.fileExists(atPath: file.path), "the file is not created")
    }

    @Test func anEntityTableCollidingWithAJoinTableIsRefused() throws {
        let error = try #require(throws: StoreError.self) {
            try ObjectStore(path: file.path, entities: [Shelf.self, ShelfItem.self, Shelf_items.self])
        }
        #expect(error.code == .invalidSchema)
        #expect(error.entity == "Shelf")
        #expect(error.relationship == "items")
        #expect(error.message.contains("'Shelf_items'") && error.message.contains("the entity Shelf_items"), "\(error.message)")
        // Both sides of the many-to-many share their join table: that alone is fine.
        _ = try ObjectStore(path: file.path, entities: [Shelf.self, ShelfItem.self])
    }

    @Test(arguments: ["_sync_state", "_Server_log", "_localstore_metadata", "sqlite_master"])
    func aSchemaDocumentWithAReservedTableIsRefused(_ table: String) throws {
        var document = try ObjectStore(path: file.path, entities: [Shelf.self, ShelfItem.self]).schemaDocument
        document.entities[1].table = table
        let other = TemporaryStoreFile()
        let error = try #require(throws: StoreError.self) { try ObjectStore(path: other.path, schema: document) }
        #expect(error.code == .invalidSchema)
        #expect(error.entity == "ShelfItem")
        #expect(error.message.contains("'\(table)'"), "\(error.message)")
        #expect(throws: StoreError.self) { try document.validateTableNames() }
    }
}

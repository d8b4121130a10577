import Foundation
import LocalStore
@testable import LocalStoreCore
import TestSupport
import Testing

@Suite struct MigrationTests {
    let file = TemporaryStoreFile()

    func columns(_ store: ObjectStore) throws -> [String] {
        try store.makeContext().connection.rows("SELECT name FROM pragma_table_info('Gadget') ORDER BY cid").map { row in
            if case .text(let name) = row[0] { return name }
            return ""
        }
    }

    @Test func renamesAddsWithDefaultsAndDropsColumns() throws {
        do {
            let store = try ObjectStore(path: file.path, entities: [GadgetV1.self])
            let context = try store.makeContext()
            let gadget = GadgetV1()
            gadget.name = "lamp"
            gadget.count = 7
            context.insert(gadget)
            try context.save()
        }
        let store = try ObjectStore(path: file.path, entities: [GadgetV2.self])
        #expect(try columns(store) == ["_object_id", "name", "quantity", "weight"])
        let gadget = try #require(try store.makeContext().fetchAll(GadgetV2.self).first)
        #expect(gadget.name == "lamp")
        #expect(gadget.quantity == 7)
        #expect(gadget.weight == 1.5)
        let indexes = try store.makeContext().connection.rows("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Gadget'")
        #expect(indexes.contains([.text("Gadget_name_index")]))
    }

    @Test func typeChangeThrowsNamingTheAttributeAndLeavesTheFileUntouched() throws {
        do {
            let store = try ObjectStore(path: file.path, entities: [GadgetV1.self])
            let context = try store.makeContext()
            context.insert(GadgetV1())
            try context.save()
        }
        let schemaBefore = try SQLiteConnection(path: file.path).rows("SELECT sql FROM sqlite_master ORDER BY name")
        let error = try #require(throws: StoreError.self) {
            _ = try ObjectStore(path: file.path, entities: [GadgetWithIntegerName.self])
        }
        #expect(error.code == .migrationImpossible)
        #expect(error.entity == "Gadget")
        #expect(error.attribute == "name")
        #expect(error.message.contains("string"))
        #expect(try SQLiteConnection(path: file.path).rows("SELECT sql FROM sqlite_master ORDER BY name") == schemaBefore)
        // The old model still opens and reads its data.
        #expect(try ObjectStore(path: file.path, entities: [GadgetV1.self]).makeContext().fetchAll(GadgetV1.self).count == 1)
    }

    @Test func mismatchedInverseIsReportedNamingBothSides() throws {
        let error = try #require(throws: StoreError.self) {
            _ = try ObjectStore(path: file.path, entities: [Widget.self, Gizmo.self])
        }
        #expect(error.code == .invalidSchema)
        #expect(error.message.contains("Widget.gizmo"))
        #expect(error.message.contains("Gizmo.widgets"))
    }

    @Test func missingTargetEntityIsReported() throws {
        let error = try #require(throws: StoreError.self) {
            _ = try ObjectStore(path: file.path, entities: [HandPerson.self])
        }
        #expect(error.code == .invalidSchema)
        #expect(error.message.contains("HandPlace"))
    }
}

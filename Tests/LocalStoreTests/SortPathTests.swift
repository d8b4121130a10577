import Foundation
import LocalStore
@testable import LocalStoreCore
import TestSupport
import Testing

enum SortFixture {
    enum Priority: Int, Comparable {
        case low = 1, medium = 3, high = 5
        static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    @Composition struct Size: Equatable {
        var width: Double = 0
        var height: Double = 0
    }

    @Entity final class Shelf {
        var name: String = ""
        @Relationship(inverse: "shelf", deleteRule: .nullify) var items: Set<Item> = []
    }

    @Entity final class Item {
        var title: String = ""
        @Attribute(storage: .raw) var priority: Priority = .low
        @Attribute(storage: .composition) var size: Size = Size()
        @Relationship(inverse: "items", deleteRule: .nullify) var shelf: Shelf?
    }
}

/// Sorting by an attribute of a to-one target, by a `.raw` value and by a composition field.
@Suite struct SortPathTests {
    typealias Item = SortFixture.Item
    let file = TemporaryStoreFile()
    let context: ObjectContext

    init() throws {
        let store = try ObjectStore(path: file.path, entities: [SortFixture.Shelf.self, Item.self])
        context = try store.makeContext()
        let shelves = Dictionary(uniqueKeysWithValues: ["A", "B", "C"].map { name in
            let shelf = SortFixture.Shelf()
            shelf.name = name
            return (name, shelf)
        })
        let rows: [(String, String?, SortFixture.Priority, Double)] = [
            ("a", "B", .high, 3), ("b", "A", .low, 1), ("c", nil, .medium, 2), ("d", "C", .low, 5),
        ]
        for (title, shelf, priority, width) in rows {
            let item = Item()
            item.title = title
            item.priority = priority
            item.size = SortFixture.Size(width: width, height: 1)
            item.shelf = shelf.flatMap { shelves[$0] }
            context.insert(item)
        }
        try context.save()
    }

    func titles(_ descriptor: FetchDescriptor<Item>) throws -> [String] {
        try context.fetch(descriptor).map(\.title)
    }

    @Test func sortsByAnAttributeOfAToOneTargetWithoutTargetsFirst() throws {
        #expect(try titles(FetchDescriptor(sortBy: [SortDescriptor(\.shelf?.name)])) == ["c", "b", "a", "d"])
        #expect(try titles(FetchDescriptor(sortBy: [SortDescriptor(\.shelf?.name, order: .reverse)])) == ["d", "a", "b", "c"])
        // The predicate's join of the same relationship serves the sort too.
        let shelved = FetchDescriptor<Item>(predicate: #Predicate { $0.shelf?.name != "B" }, sortBy: [SortDescriptor(\.shelf?.name)])
        #expect(try titles(shelved) == ["c", "b", "d"])
        var page = FetchDescriptor<Item>(sortBy: [SortDescriptor(\.shelf?.name)])
        page.fetchLimit = 2
        page.fetchOffset = 1
        #expect(try titles(page) == ["b", "a"])
    }

    @Test func sortsByARawValue() throws {
        #expect(try titles(FetchDescriptor(sortBy: [SortDescriptor(\.priority), SortDescriptor(\.title)])) == ["b", "d", "c", "a"])
        #expect(try titles(FetchDescriptor(sortBy: [SortDescriptor(\.priority, order: .reverse), SortDescriptor(\.title)])) == ["a", "c", "b", "d"])
    }

    @Test func sortsByACompositionField() throws {
        #expect(try titles(FetchDescriptor(sortBy: [SortDescriptor(\.size.width)])) == ["b", "c", "a", "d"])
        #expect(try titles(FetchDescriptor(sortBy: [SortDescriptor(\.size.width, order: .reverse)])) == ["d", "a", "c", "b"])
    }
}

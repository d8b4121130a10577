import Foundation
import SyncKit
import Testing

// The README's twenty-line example, verbatim apart from the file path, so it keeps compiling
// and doing what the README says.

@Entity final class ReadmeAuthor {
    var name: String = ""
    @Relationship(inverse: "author", deleteRule: .cascade) var books: [ReadmeBook] = []   // ordered
}
@Entity final class ReadmeBook {
    var title: String = ""
    @Relationship(inverse: "books", deleteRule: .nullify) var author: ReadmeAuthor?
}

@Suite struct ReadmeExampleTests {
    @Test func theTwentyLineExampleWorksAsDescribed() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("library-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }

        let store = try ObjectStore(path: path, entities: [ReadmeAuthor.self, ReadmeBook.self])
        let replica = try SyncReplica(store: store)          // from now on every save records a change set
        let context = try store.makeContext()
        let ada = ReadmeAuthor(); ada.name = "Ada"
        let book = ReadmeBook(); book.title = "Notes"; book.author = ada   // ada.books is [book] at once
        #expect(ada.books == [book])
        context.insert(ada)
        try context.save()

        let recent = try context.fetch(FetchDescriptor<ReadmeBook>(predicate: #Predicate { $0.title.starts(with: "N") }))
        #expect(recent.map(\.title) == ["Notes"])
        #expect(try replica.versionVector()[replica.replicaID] == 1)
    }
}

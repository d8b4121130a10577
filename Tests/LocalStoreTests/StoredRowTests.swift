import Foundation
import LocalStore
@testable import LocalStoreCore
import SQLiteDatabase
import TestSupport
import Testing

enum StoredRowFixture {
    enum Size: Int, CaseIterable { case small = 1, large = 2 }

    @Composition struct Point {
        var x: Double = 0
        var label: String? = nil
    }

    /// One attribute of every type with default storage, optionals and `.raw` ones.
    @Entity final class Sample {
        var flag: Bool = false
        var count: Int = 0
        var small: Int16 = 0
        var ratio: Double = 0
        var single: Float = 0
        var amount: Decimal = 0
        var title: String = ""
        var when: Date = Date(timeIntervalSince1970: 0)
        var bytes: Data = Data()
        var token: UUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        var link: URL = URL(string: "https://example.com")!
        var note: String? = nil
        var missing: Double? = nil
        var maybeToken: UUID? = nil
        @Attribute(storage: .raw) var size: Size = .small
        @Attribute(storage: .raw) var maybeSize: Size? = nil
        @Attribute(storage: .codable) var tags: [String] = []
        @Attribute(storage: .composition) var point: Point = Point()
    }
}

/// A fetch reads attributes straight from the statement's row, other paths (refresh, rollback,
/// merges) from SQL values read before: both follow the same rules, and a column holding
/// another storage class than the attribute's type expects gets the same error either way.
/// An insert binds attributes straight to its statement (``RowBinding``), and writes exactly
/// the SQL values the attributes encode to, which is what updates and sync compare with.
@Suite struct StoredRowTests {
    typealias Sample = StoredRowFixture.Sample
    let file = TemporaryStoreFile()

    private func savedSample() throws -> (ObjectStore, Sample) {
        let store = try ObjectStore(path: file.path, entities: [Sample.self])
        let context = try store.makeContext()
        let sample = Sample()
        sample.flag = true
        sample.count = -42_000_000_000
        sample.small = -7
        sample.ratio = 2.5
        sample.single = 0.25
        sample.amount = Decimal(string: "12345678901234567890.12")!
        sample.title = "Grüße, 世界"
        sample.when = Date(timeIntervalSince1970: 1_700_000_000.5)
        sample.bytes = Data([0, 1, 2, 255])
        sample.token = UUID(uuidString: "8F0E7F5A-2B1C-4D3E-9F80-7A6B5C4D3E2F")!
        sample.link = URL(string: "https://example.com/a?b=c")!
        sample.note = "noted"
        sample.maybeToken = UUID(uuidString: "00000000-0000-4000-8000-000000000001")!
        sample.size = .large
        sample.tags = ["a", "b"]
        sample.point = StoredRowFixture.Point(x: 1.5, label: "p")
        context.insert(sample)
        try context.save()
        return (store, sample)
    }

    private func expectSameValues(_ read: Sample, _ written: Sample) {
        #expect(read.flag == written.flag && read.count == written.count && read.small == written.small)
        #expect(read.ratio == written.ratio && read.single == written.single && read.amount == written.amount)
        #expect(read.title == written.title && read.when == written.when && read.bytes == written.bytes)
        #expect(read.token == written.token && read.link == written.link && read.note == written.note)
        #expect(read.missing == nil && read.maybeToken == written.maybeToken)
        #expect(read.size == written.size && read.maybeSize == nil)
        #expect(read.tags == written.tags && read.point.x == written.point.x && read.point.label == written.point.label)
    }

    @Test func everyDefaultTypeReadsBackFromTheStatementRow() throws {
        let (store, written) = try savedSample()
        let read = try #require(try store.makeContext().fetchAll(Sample.self).first)
        expectSameValues(read, written)
    }

    @Test func everyAttributeDecodesFromValuesAsFromTheStatement() throws {
        let (store, written) = try savedSample()
        let context = try store.makeContext()
        let mapping = try #require(store.schema.entity(for: Sample.self))
        let fresh = Sample()
        for index in mapping.description.attributes.indices {
            var values: [SQLValue] = []
            try mapping.encodeAttribute(index, of: written, into: &values)
            try mapping.decodeAttributeValue(index, of: fresh, from: StoredRow(values: values), at: 0)
        }
        expectSameValues(fresh, written)
        let fetched = try #require(try context.fetchAll(Sample.self).first)
        expectSameValues(fetched, fresh)
    }

    @Test func anInsertedRowHoldsWhatEachAttributeEncodesTo() throws {
        let (store, written) = try savedSample()
        let context = try store.makeContext()
        let mapping = try #require(store.schema.entity(for: Sample.self))
        let rows = try context.connection.rows("SELECT \(mapping.selectList) FROM \"Sample\"")
        let row = try #require(rows.first)
        for index in mapping.description.attributes.indices {
            var values: [SQLValue] = []
            try mapping.encodeAttribute(index, of: written, into: &values)
            let offset = 1 + mapping.attributeColumnOffsets[index]
            #expect(Array(row[offset..<(offset + values.count)]) == values, "\(mapping.description.attributes[index].name)")
        }
    }

    @Test(arguments: [
        ("count", "'many'", "expected an integer that fits Int, found text 'many'"),
        ("flag", "'yes'", "expected a boolean (integer 0 or 1), found text 'yes'"),
        ("token", "'not-a-uuid'", "expected a UUID string, found text 'not-a-uuid'"),
        ("title", "X'00'", "expected text, found blob"),
        ("size", "3", "expected a raw value of Size, found integer 3"),
        ("maybeSize", "'large'", "expected an integer that fits Int, found text 'large'"),
    ])
    func aColumnOfAnotherStorageClassFailsNamingWhatWasExpectedAndFound(attribute: String, stored: String, message: String) throws {
        let (store, written) = try savedSample()
        let context = try store.makeContext()
        try context.connection.run(#"UPDATE "Sample" SET "\#(attribute)" = \#(stored) WHERE "_object_id" = ?"#, [.text(written.objectID.storageText)])
        let error = try #require(throws: StoreError.self) { try context.fetchAll(Sample.self) }
        #expect(error.code == .corruptValue)
        #expect(error.entity == "Sample" && error.attribute == attribute && error.objectID == written.objectID)
        #expect(error.message.contains(message), "\(error.message)")
    }
}

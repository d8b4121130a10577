import Foundation
import LocalStore
@testable import LocalStoreCore
import TestSupport
import Testing

enum DecodeFailureFixture {
    struct Layout: Codable, Equatable {
        var columns: Int
    }

    @Entity final class Page {
        var title: String = ""
        @Attribute(storage: .codable) var strict: Layout? = nil
        @Attribute(storage: .codable, decodeFailure: .fallbackToDefaultValue) var layout: Layout = Layout(columns: 2)
        @Attribute(storage: .codable, decodeFailure: .debugAssertNil) var draft: Layout? = Layout(columns: 9)
    }
}

/// Rows whose `.codable` values no longer decode: each attribute's policy decides between
/// throwing, the default value, and `nil` with a debug assertion.
@Suite struct DecodeFailurePolicyTests {
    typealias Page = DecodeFailureFixture.Page
    typealias Layout = DecodeFailureFixture.Layout
    let file = TemporaryStoreFile()

    /// Saves two pages, then writes `'{not json'` into `column` of the first one's row.
    func storeWithUndecodable(_ column: String) throws -> (store: ObjectStore, broken: UUID) {
        let store = try ObjectStore(path: file.path, entities: [Page.self])
        let context = try store.makeContext()
        let pages = ["broken", "fine"].map { title in
            let page = Page()
            page.title = title
            page.strict = Layout(columns: 1)
            page.layout = Layout(columns: 4)
            page.draft = Layout(columns: 5)
            context.insert(page)
            return page
        }
        try context.save()
        try context.connection.run(#"UPDATE "Page" SET "\#(column)" = '{not json' WHERE "_object_id" = ?"#, [.text(pages[0].objectID.storageText)])
        return (store, pages[0].objectID)
    }

    @Test func byDefaultTheFetchThrowsNamingEntityAttributeAndObject() throws {
        let (store, broken) = try storeWithUndecodable("strict")
        let error = try #require(throws: StoreError.self) { try store.makeContext().fetchAll(Page.self) }
        #expect(error.code == .corruptValue)
        #expect(error.entity == "Page" && error.attribute == "strict" && error.objectID == broken)
        #expect(error.message.contains(broken.storageText))
    }

    @Test func fallbackToDefaultValueGivesTheDeclaredDefault() throws {
        let (store, broken) = try storeWithUndecodable("layout")
        let context = try store.makeContext()
        let pages = try context.fetch(FetchDescriptor<Page>(sortBy: [SortDescriptor(\.title)]))
        #expect(pages.map(\.title) == ["broken", "fine"])
        #expect(pages[0].objectID == broken && pages[0].layout == Layout(columns: 2))
        #expect(pages[1].layout == Layout(columns: 4))
        #expect(pages[0].strict == Layout(columns: 1) && pages[0].draft == Layout(columns: 5))
        // A refresh reads the row again under the same policy.
        try context.refresh()
        #expect(pages[0].layout == Layout(columns: 2))
        // Saving a change writes the default, and the row decodes again.
        pages[0].layout = Layout(columns: 6)
        try context.save()
        #expect(try store.makeContext().fetchAll(Page.self).first { $0.title == "broken" }?.layout == Layout(columns: 6))
    }

    @Test func debugAssertNilGivesNilAndReportsTheValue() throws {
        let (store, broken) = try storeWithUndecodable("draft")
        let reports = Reports()
        let pages = try DecodeFailureAssertion.reporting(to: { reports.append($0) }) {
            try store.makeContext().fetch(FetchDescriptor<Page>(sortBy: [SortDescriptor(\.title)]))
        }
        #expect(pages[0].draft == nil && pages[1].draft == Layout(columns: 5))
        let report = try #require(reports.all.first)
        #expect(reports.all.count == 1)
        #expect(report.entity == "Page" && report.attribute == "draft" && report.objectID == broken)
    }
}

/// The assertions reported, from whichever thread reports them.
private final class Reports: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var reports: [StoreError] = []
    func append(_ report: StoreError) { lock.withLock { reports.append(report) } }
    var all: [StoreError] { lock.withLock { reports } }
}

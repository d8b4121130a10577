import Foundation
import LocalStore
@testable import LocalStoreCore
import Testing

/// Constructs without an SQL translation throw `.unsupportedQuery` naming them; a query never
/// falls back to unfiltered or in-memory results.
@Suite struct UnsupportedPredicateTests {
    let fixture: QueryFixture

    init() throws { fixture = try QueryFixture(people: 20) }

    func error<Entity: PersistentEntity>(_ descriptor: FetchDescriptor<Entity>) -> StoreError? {
        do {
            _ = try fixture.context.fetch(descriptor)
            return nil
        } catch let error as StoreError {
            #expect(throws: StoreError.self) { try fixture.context.fetchCount(descriptor) }
            #expect(throws: StoreError.self) { try fixture.context.fetchIdentifiers(descriptor) }
            return error
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    @Test func unsupportedExpressionTypeIsNamed() throws {
        let failure = try #require(error(FetchDescriptor(predicate: #Predicate<QPerson> { $0.name.contains(/a+b/) })))
        #expect(failure.code == .unsupportedQuery)
        #expect(failure.message.contains("PredicateExpressions.StringContainsRegex"), "\(failure.message)")
        #expect(failure.entity == "HandPerson")
    }

    @Test func nonStoredPropertyIsNamed() throws {
        let failure = try #require(error(FetchDescriptor(predicate: #Predicate<QPerson> { $0.cache.isEmpty })))
        #expect(failure.code == .unsupportedQuery)
        #expect(failure.message.contains("cache"), "\(failure.message)")
        #expect(failure.message.contains("not a stored attribute"))
    }

    @Test func rawValueAccessAndUnsupportedCollectionPropertiesAreRefused() throws {
        let raw = try #require(error(FetchDescriptor(predicate: #Predicate<QPerson> { $0.mood.rawValue == "busy" })))
        #expect(raw.message.contains("rawValue"), "\(raw.message)")
        let first = try #require(error(FetchDescriptor(predicate: #Predicate<QAuthor> { $0.books.first?.title == "X" })))
        #expect(first.message.contains("books"), "\(first.message)")
        let allNames = try #require(error(FetchDescriptor(predicate: #Predicate<QPlace> { $0.people.first?.name == "a" })))
        #expect(allNames.code == .unsupportedQuery)
    }

    @Test func unsupportedSortsAreNamed() throws {
        let path = try #require(error(FetchDescriptor<QPerson>(sortBy: [SortDescriptor(\.place?.name.count)])))
        #expect(path.message.contains("cannot sort HandPerson"), "\(path.message)")
        let field = try #require(error(FetchDescriptor<QPlace>(sortBy: [SortDescriptor(\.location?.latitude)])))
        #expect(field.code == .unsupportedQuery)
    }

    @Test func unsupportedAggregatesAreNamed() throws {
        #expect(throws: StoreError.self) { try fixture.context.aggregate(.count(\QPerson.mood)) }
        #expect(throws: StoreError.self) { try fixture.context.aggregate(.count(\QPerson.prefs)) }
        #expect(throws: StoreError.self) { try fixture.context.aggregate(.count(\QPerson.cache)) }
    }

    @Test func negativePagingIsRefused() throws {
        var descriptor = FetchDescriptor<QPerson>()
        descriptor.fetchLimit = -1
        #expect(error(descriptor)?.message.contains("fetchLimit") == true)
    }
}

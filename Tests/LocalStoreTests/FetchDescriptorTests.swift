import Foundation
import LocalStore
@testable import LocalStoreCore
import Testing

/// Paging, sorting, counting, identifiers and aggregates of `FetchDescriptor` queries.
@Suite struct FetchDescriptorTests {
    let fixture: QueryFixture

    init() throws { fixture = try QueryFixture(seed: 99, people: 120) }

    @Test func withoutSortObjectsComeInStorageOrder() throws {
        let fetched = try fixture.context.fetch(FetchDescriptor<QPerson>())
        #expect(fetched.map(\.objectID) == fixture.people.map(\.objectID))
        #expect(fetched.elementsEqual(try fixture.context.fetchAll(QPerson.self), by: ===))
    }

    /// The identifier breaks ties the same way on every replica, unlike storage order.
    @Test func sortingByObjectIDFollowsUUIDOrder() throws {
        let byID = try fixture.context.fetch(FetchDescriptor<QPerson>(sortBy: [SortDescriptor(\.objectID)]))
        #expect(byID.map(\.objectID) == fixture.people.map(\.objectID).sorted())
        let reversed = try fixture.context.fetch(FetchDescriptor<QPerson>(sortBy: [SortDescriptor(\.objectID, order: .reverse)]))
        #expect(reversed.map(\.objectID) == fixture.people.map(\.objectID).sorted().reversed())
        let tieBroken = try fixture.context.fetch(FetchDescriptor<QPerson>(sortBy: [SortDescriptor(\.name), SortDescriptor(\.objectID)]))
        let expected = fixture.people.sorted { ($0.name, $0.objectID) < ($1.name, $1.objectID) }
        #expect(tieBroken.map(\.objectID) == expected.map(\.objectID))
    }

    @Test func fetchReturnsTheContextsObjects() throws {
        let fetched = try fixture.context.fetch(FetchDescriptor<QPerson>(predicate: #Predicate { $0.score != nil }))
        #expect(fetched.allSatisfy { person in fixture.people.contains { $0 === person } })
        let other = try fixture.store.makeContext()
        let fresh = try other.fetch(FetchDescriptor<QPerson>(sortBy: [SortDescriptor(\.email)]))
        let expected = fixture.people.sorted { $0.email < $1.email }
        #expect(fresh.map(\.email) == expected.map(\.email))
        #expect(fresh.map(\.score) == expected.map(\.score))
        #expect(fresh.map { $0.place?.name } == expected.map { $0.place?.name })
    }

    @Test func limitAndOffsetPageTheSortedResult() throws {
        let sortBy = [SortDescriptor(\QPerson.name), SortDescriptor(\QPerson.score, order: .reverse)]
        let predicate = #Predicate<QPerson> { $0.score != nil }
        let all = try QueryFixture.evaluate(fixture.people, predicate, sortBy)
        #expect(all.count > 40)
        for (limit, offset) in [(20, 0), (20, 40), (10, all.count - 5), (0, 0), (5, all.count + 3)] as [(Int?, Int?)] + [(nil, 7), (7, nil)] {
            var descriptor = FetchDescriptor(predicate: predicate, sortBy: sortBy)
            descriptor.fetchLimit = limit
            descriptor.fetchOffset = offset
            let start = min(offset ?? 0, all.count)
            let end = min(start + (limit ?? all.count), all.count)
            let page = Array(all[start..<end])
            #expect(try fixture.context.fetch(descriptor).map(\.objectID) == page.map(\.objectID), "limit \(limit as Any) offset \(offset as Any)")
            #expect(try fixture.context.fetchCount(descriptor) == page.count)
            #expect(try fixture.context.fetchIdentifiers(descriptor) == page.map(\.objectID))
        }
    }

    @Test func countWithoutPredicateCountsEverything() throws {
        #expect(try fixture.context.fetchCount(FetchDescriptor<QPerson>()) == fixture.people.count)
        #expect(try fixture.context.fetchCount(FetchDescriptor<QBook>()) == fixture.books.count)
    }

    @Test func aggregatesMatchSwift() throws {
        let scores = fixture.people.compactMap(\.score)
        #expect(try fixture.context.aggregate(.count(\QPerson.score)) == scores.count)
        #expect(try fixture.context.aggregate(.count(\QPerson.name)) == fixture.people.count)
        #expect(try fixture.context.aggregate(.minimum(\QPerson.score)) == scores.min())
        #expect(try fixture.context.aggregate(.maximum(\QPerson.score)) == scores.max())
        #expect(try fixture.context.aggregate(.sum(\QPerson.score)) == scores.reduce(0, +))
        #expect(try fixture.context.aggregate(.minimum(\QPerson.name)) == fixture.people.map(\.name).min())
        #expect(try fixture.context.aggregate(.maximum(\QPerson.born)) == fixture.people.compactMap(\.born).max())

        let paris = FetchDescriptor<QPerson>(predicate: #Predicate { $0.place?.name == "Paris" })
        let parisScores = fixture.people.filter { $0.place?.name == "Paris" }.compactMap(\.score)
        #expect(try fixture.context.aggregate(.sum(\QPerson.score), matching: paris) == parisScores.reduce(0, +))
        #expect(try fixture.context.aggregate(.maximum(\QPerson.score), matching: paris) == parisScores.max())
    }

    @Test func aggregatesOverAPageUseThatPage() throws {
        var descriptor = FetchDescriptor<QPerson>(predicate: #Predicate { $0.score != nil }, sortBy: [SortDescriptor(\.score, order: .reverse)])
        descriptor.fetchLimit = 5
        let top = fixture.people.compactMap(\.score).sorted(by: >).prefix(5)
        #expect(try fixture.context.aggregate(.sum(\QPerson.score), matching: descriptor) == top.reduce(0, +))
        #expect(try fixture.context.aggregate(.minimum(\QPerson.score), matching: descriptor) == top.min())
    }

    @Test func aggregatesOfNothing() throws {
        let none = FetchDescriptor<QPerson>(predicate: #Predicate { $0.name == "no such name" })
        #expect(try fixture.context.aggregate(.minimum(\QPerson.score), matching: none) == nil)
        #expect(try fixture.context.aggregate(.maximum(\QPerson.email), matching: none) == nil)
        #expect(try fixture.context.aggregate(.sum(\QPerson.score), matching: none) == 0)
        #expect(try fixture.context.aggregate(.count(\QPerson.score), matching: none) == 0)
        #expect(try fixture.context.fetch(none).isEmpty)
    }
}

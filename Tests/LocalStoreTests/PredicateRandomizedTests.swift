import Foundation
import LocalStore
@testable import LocalStoreCore
import Testing

/// Every supported construct, run through SQL and through Foundation's `Predicate.evaluate`
/// over the same seeded random data set: both must give the same objects in the same order.
@Suite struct PredicateRandomizedTests {
    static let seeds: [UInt64] = [1, 7, 2024]

    @Test(arguments: seeds) func equalityAndOrderingOnAttributes(seed: UInt64) throws {
        let fixture = try QueryFixture(seed: seed)
        let name = fixture.people.first { !$0.name.isEmpty }!.name
        let pivot = "Ca"
        let day = Date(timeIntervalSince1970: 500_000)
        try fixture.check(fixture.people, #Predicate { $0.name == name }, sortBy: [SortDescriptor(\.email)])
        try fixture.check(fixture.people, #Predicate { $0.name != name })
        try fixture.check(fixture.people, #Predicate { $0.name < pivot }, sortBy: [SortDescriptor(\.name)])
        try fixture.check(fixture.people, #Predicate { $0.name >= pivot }, sortBy: [SortDescriptor(\.name, order: .reverse)])
        try fixture.check(fixture.people, #Predicate { $0.nickname == "" })
        try fixture.check(fixture.people, #Predicate { $0.born == nil || $0.born! > day }, sortBy: [SortDescriptor(\.born)])
        try fixture.check(fixture.people, #Predicate { $0.born != nil && $0.born! <= day }, sortBy: [SortDescriptor(\.born, order: .reverse)])
    }

    @Test(arguments: seeds) func optionalsAndNilCoalescing(seed: UInt64) throws {
        let fixture = try QueryFixture(seed: seed)
        let three = 3.0
        try fixture.check(fixture.people, #Predicate { $0.score == nil }, sortBy: [SortDescriptor(\.name)])
        try fixture.check(fixture.people, #Predicate { $0.score != nil }, sortBy: [SortDescriptor(\.score)])
        try fixture.check(fixture.people, #Predicate { ($0.score ?? 0) > 3 }, sortBy: [SortDescriptor(\.score, order: .reverse)])
        try fixture.check(fixture.people, #Predicate { $0.score == three })
        try fixture.check(fixture.people, #Predicate { $0.score != three })
        try fixture.check(fixture.people, #Predicate { $0.score.flatMap { $0 > 4 } == true })
    }

    @Test(arguments: seeds) func logicAndArithmetic(seed: UInt64) throws {
        let fixture = try QueryFixture(seed: seed)
        try fixture.check(fixture.people, #Predicate { !($0.name.starts(with: "a")) && $0.score != nil })
        try fixture.check(fixture.people, #Predicate { $0.name.starts(with: "b") || ($0.score ?? 0) >= 9 })
        try fixture.check(fixture.people, #Predicate { ($0.score ?? 0) * 2 + 1 >= 9 }, sortBy: [SortDescriptor(\.name)])
        try fixture.check(fixture.people, #Predicate { ($0.score ?? 10) - 4 < 2 })
        try fixture.check(fixture.people, #Predicate { ($0.score ?? 0) / 2 > 2 })
        try fixture.check(fixture.people, #Predicate { -($0.score ?? 0) < -5 })
        try fixture.check(fixture.people, #Predicate { $0.name.count / 2 == 1 })
        try fixture.check(fixture.people, #Predicate { $0.name.count % 2 == 0 })
        try fixture.check(fixture.people, #Predicate { ($0.score ?? 0) > 5 ? $0.name.starts(with: "a") : $0.name.starts(with: "b") })
        try fixture.check(fixture.people, #Predicate { (2.0...6.0).contains($0.score ?? -1) })
        try fixture.check(fixture.people, #Predicate { (2.0..<6.0).contains($0.score ?? -1) })
    }

    @Test(arguments: seeds) func strings(seed: UInt64) throws {
        let fixture = try QueryFixture(seed: seed)
        let prefix = "al"
        try fixture.check(fixture.people, #Predicate { $0.name.starts(with: prefix) }, sortBy: [SortDescriptor(\.name)])
        try fixture.check(fixture.people, #Predicate { $0.name.starts(with: "Ca") })
        try fixture.check(fixture.people, #Predicate { $0.name.contains("o") })
        try fixture.check(fixture.people, #Predicate { $0.name.contains("Go") && !$0.name.contains("ed") })
        try fixture.check(fixture.people, #Predicate { $0.name.contains("") }, discriminating: false)
        try fixture.check(fixture.people, #Predicate { $0.name.isEmpty })
        try fixture.check(fixture.people, #Predicate { $0.name.count > 3 })
        try fixture.check(fixture.people, #Predicate { $0.nickname.starts(with: "") && !$0.nickname.isEmpty })
    }

    @Test(arguments: seeds) func capturedCollectionsEnumsAndCodable(seed: UInt64) throws {
        let fixture = try QueryFixture(seed: seed)
        let names = Array(Set(fixture.people.prefix(10).map(\.name)))
        let busy = QMood.busy
        let light = QPrefs(theme: "light")
        let noPrefs: QPrefs? = nil
        try fixture.check(fixture.people, #Predicate { names.contains($0.name) }, sortBy: [SortDescriptor(\.name)])
        try fixture.check(fixture.people, #Predicate { !names.contains($0.name) })
        try fixture.check(fixture.people, #Predicate { $0.mood == busy })
        try fixture.check(fixture.people, #Predicate { $0.mood != busy && $0.score != nil })
        try fixture.check(fixture.people, #Predicate { $0.prefs == light })
        try fixture.check(fixture.people, #Predicate { $0.prefs == noPrefs })
    }

    @Test(arguments: seeds) func toOnePathsAndCompositions(seed: UInt64) throws {
        let fixture = try QueryFixture(seed: seed)
        try fixture.check(fixture.people, #Predicate { $0.place?.name == "Paris" }, sortBy: [SortDescriptor(\.name)])
        try fixture.check(fixture.people, #Predicate { $0.place == nil })
        try fixture.check(fixture.people, #Predicate { $0.place != nil && $0.place?.name != "Rome" })
        try fixture.check(fixture.people, #Predicate { ($0.place?.location?.latitude ?? 0) > 40 })
        try fixture.check(fixture.people, #Predicate { $0.place?.location == nil })
        try fixture.check(fixture.people, #Predicate {
            $0.name.starts(with: "a") || (($0.score ?? 0) > 3 && $0.place?.name == "Paris")
        })
        try fixture.check(fixture.places, #Predicate { $0.location == nil }, sortBy: [SortDescriptor(\.name)])
        let latitude = fixture.places.compactMap(\.location?.latitude).max()!
        try fixture.check(fixture.places, #Predicate { ($0.location?.latitude ?? 0) >= latitude })
        try fixture.check(fixture.books, #Predicate { $0.author?.name.starts(with: "b") == true }, sortBy: [SortDescriptor(\.title)])
    }

    @Test(arguments: seeds) func toManyQuantifiers(seed: UInt64) throws {
        let fixture = try QueryFixture(seed: seed)
        let busy = QMood.busy
        // Thresholds from the data set itself, so each predicate splits the places.
        let counts = fixture.places.map(\.people.count).sorted()
        let median = counts[counts.count / 2]
        let busyCounts = fixture.places.map { $0.people.filter { $0.mood == busy }.count }.sorted()
        let busyMedian = busyCounts[busyCounts.count / 2]
        let rare = fixture.people.first { $0.place != nil && !$0.name.isEmpty }!.name
        try fixture.check(fixture.places, #Predicate { $0.people.contains { $0.name == rare && $0.mood != busy || $0.name == rare && $0.mood == busy } })
        try fixture.check(fixture.places, #Predicate { $0.people.count > median }, sortBy: [SortDescriptor(\.name)])
        try fixture.check(fixture.places, #Predicate { $0.people.filter { $0.mood == busy }.count >= busyMedian })
        try fixture.check(fixture.places, #Predicate { $0.people.allSatisfy { $0.score != nil || $0.name.count < 4 } }, discriminating: false)
        try fixture.check(fixture.authors, #Predicate { $0.books.isEmpty })
        try fixture.check(fixture.authors, #Predicate { !$0.books.isEmpty && $0.books.count <= 2 })
        try fixture.check(fixture.authors, #Predicate { $0.books.contains { $0.title.starts(with: "a") } }, sortBy: [SortDescriptor(\.name)])
        try fixture.check(fixture.authors, #Predicate { $0.books.allSatisfy { $0.title.contains("o") } })
        try fixture.check(fixture.books, #Predicate { ($0.author?.books.count ?? 0) >= 3 })
        try fixture.check(fixture.people, #Predicate { $0.place?.people.contains { $0.name == "al" } == true })
    }

    @Test(arguments: seeds) func sortingMatchesFoundation(seed: UInt64) throws {
        let fixture = try QueryFixture(seed: seed)
        let all = #Predicate<QPerson> { _ in true }
        for sortBy in [
            [SortDescriptor(\QPerson.name)],
            [SortDescriptor(\QPerson.name, order: .reverse), SortDescriptor(\QPerson.score)],
            [SortDescriptor(\QPerson.score, order: .reverse), SortDescriptor(\QPerson.born)],
            [SortDescriptor(\QPerson.nickname), SortDescriptor(\QPerson.born, order: .reverse)],
            [SortDescriptor(\QPerson.name, comparator: .lexical)],
            [SortDescriptor(\QPerson.name, comparator: .lexical, order: .reverse), SortDescriptor(\QPerson.email)],
        ] {
            try fixture.check(fixture.people, all, sortBy: sortBy, discriminating: false)
        }
    }
}

extension QueryFixture {
    /// Runs `predicate` through SQL and through Foundation's `evaluate` over the same objects: the
    /// objects, their order, the count and the identifiers must agree, and (when `discriminating`)
    /// the data set must make the predicate keep some objects and drop others.
    func check<Entity: PersistentEntity>(
        _ all: [Entity], _ predicate: Predicate<Entity>, sortBy: [SortDescriptor<Entity>] = [],
        discriminating: Bool = true, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let result = try compare(all, predicate, sortBy: sortBy)
        #expect(result.fetched == result.expected, "\(predicate)", sourceLocation: sourceLocation)
        #expect(result.count == result.expected.count, sourceLocation: sourceLocation)
        #expect(result.identifiers == result.expected, sourceLocation: sourceLocation)
        if discriminating {
            #expect(!result.expected.isEmpty && result.expected.count < result.total,
                    "the data set should make this predicate keep some objects and drop others (kept \(result.expected.count) of \(result.total))",
                    sourceLocation: sourceLocation)
        }
    }
}

// The articles GettingStarted.md and Querying.md (Sources/LocalStore/LocalStore.docc/) show the
// code between the markers below, one code block per marker, without the markers' indentation.
// The first test compares the two, so the articles' code is code that compiles; the others run it.

// GettingStarted.md code block.
import Foundation
import LocalStore

@Entity final class Trip {
    var name: String = ""
    @Relationship(inverse: "trip", deleteRule: .cascade) var stops: [Stop] = []   // ordered
}

@Entity final class Stop {
    var city: String = ""
    var nights: Int = 1
    @Relationship(inverse: "stops", deleteRule: .nullify) var trip: Trip?
}
// GettingStarted.md code block.
func planTrip(in directory: URL) throws -> (longStays: [String], stopsAfterDelete: Int) {
    // Creates the file, or migrates an existing one to these entities.
    let store = try ObjectStore(path: directory.appending(path: "trips.sqlite").path,
                                entities: [Trip.self, Stop.self])
    let context = try store.makeContext()

    let trip = Trip()
    trip.name = "Coast"
    for (city, nights) in [("Lisbon", 3), ("Porto", 2), ("Faro", 1)] {
        let stop = Stop()
        stop.city = city
        stop.nights = nights
        stop.trip = trip               // trip.stops gains the stop at once
    }
    context.insert(trip)               // its new stops are inserted with it
    try context.save()                 // one SQLite transaction

    let longStays = FetchDescriptor<Stop>(
        predicate: #Predicate { $0.nights >= 2 },
        sortBy: [SortDescriptor(\.city)])
    let cities = try context.fetch(longStays).map(\.city)   // filtered and sorted by SQLite

    context.delete(trip)               // the cascade rule deletes its stops on save
    try context.save()
    return (cities, try context.fetchCount(FetchDescriptor<Stop>()))
}
// End of the article's code.

/// The page and the count the querying article's code computes.
func secondPageOfLongStays(in context: ObjectContext) throws -> (page: [Stop], matching: Int) {
    // Querying.md code block.
    // The second page of ten: stops of two nights or more on the trip "Coast", by city.
    var descriptor = FetchDescriptor<Stop>(
        predicate: #Predicate { $0.nights >= 2 && $0.trip?.name == "Coast" },
        sortBy: [SortDescriptor(\.city), SortDescriptor(\.objectID)])
    descriptor.fetchLimit = 10
    descriptor.fetchOffset = 10
    let page = try context.fetch(descriptor)
    let matching = try context.fetchCount(FetchDescriptor(predicate: descriptor.predicate))
    // End of the article's code.
    return (page, matching)
}

import Testing
import TestSupport

@Suite struct GettingStartedArticleTests {
    @Test(arguments: ["GettingStarted.md", "Querying.md"])
    func theArticleShowsThisFilesCode(article: String) throws {
        let testFile = URL(fileURLWithPath: #filePath)
        let articleFile = testFile.deletingLastPathComponent().appending(path: "../../Sources/LocalStore/LocalStore.docc/\(article)")
        let articleBlocks = Self.swiftCodeBlocks(inMarkdown: try String(contentsOf: articleFile, encoding: .utf8))
        let sourceBlocks = Self.markedBlocks(inSource: try String(contentsOf: testFile, encoding: .utf8), article: article)
        #expect(!sourceBlocks.isEmpty)
        #expect(articleBlocks == sourceBlocks, "\(article)'s swift code blocks differ from the marked code in \(testFile.lastPathComponent)")
    }

    @Test func theGettingStartedCodeDoesWhatTheArticleSays() throws {
        let directory = try TemporaryDirectory(prefix: "getting-started")
        let result = try planTrip(in: directory.url)
        #expect(result.longStays == ["Lisbon", "Porto"])
        #expect(result.stopsAfterDelete == 0)
    }

    @Test func theQueryingCodeReturnsTheSecondPage() throws {
        let directory = try TemporaryDirectory(prefix: "querying")
        let store = try ObjectStore(path: directory.file("trips.sqlite"), entities: [Trip.self, Stop.self])
        let context = try store.makeContext()
        for (name, nights) in [("Coast", 2), ("Coast", 1), ("Inland", 3)] {
            let trip = Trip()
            trip.name = name
            for number in 0..<15 {
                let stop = Stop()
                stop.city = "City \(String(number + 10))"
                stop.nights = nights
                stop.trip = trip
            }
            context.insert(trip)
        }
        try context.save()
        let result = try secondPageOfLongStays(in: context)
        #expect(result.matching == 15)
        #expect(result.page.map(\.city) == (20..<25).map { "City \($0)" })
        #expect(result.page.allSatisfy { $0.trip?.name == "Coast" && $0.nights == 2 })
    }

    /// The contents of each ```` ```swift ```` fence, in order.
    static func swiftCodeBlocks(inMarkdown text: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```swift" {
                current = []
            } else if let lines = current, line == "```" {
                blocks.append(lines.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// The lines after each "// <article> code block." marker, up to the next marker or the end
    /// marker, without the marker's indentation.
    static func markedBlocks(inSource text: String, article: String) -> [String] {
        var blocks: [[Substring]] = []
        var indentation: Int?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.drop { $0 == " " }
            if trimmed == "// \(article) code block." {
                blocks.append([])
                indentation = line.count - trimmed.count
            } else if trimmed.hasPrefix("// "), trimmed.hasSuffix(" code block.") || trimmed == "// End of the article's code." {
                indentation = nil
            } else if let indentation {
                blocks[blocks.count - 1].append(line.dropFirst(min(indentation, line.count - line.drop { $0 == " " }.count)))
            }
        }
        return blocks.map { $0.joined(separator: "\n") }
    }
}

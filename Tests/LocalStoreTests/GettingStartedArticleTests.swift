// The getting-started article (Sources/LocalStore/LocalStore.docc/GettingStarted.md) shows the
// code between the markers below, one code block per marker. The first test compares the two,
// so the article's code is code that compiles; the second runs it.

// Article code block.
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
// Article code block.
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

import Testing
import TestSupport

@Suite struct GettingStartedArticleTests {
    @Test func theArticleShowsThisFilesCode() throws {
        let testFile = URL(fileURLWithPath: #filePath)
        let article = testFile.deletingLastPathComponent().appending(path: "../../Sources/LocalStore/LocalStore.docc/GettingStarted.md")
        let articleBlocks = Self.swiftCodeBlocks(inMarkdown: try String(contentsOf: article, encoding: .utf8))
        let sourceBlocks = Self.markedBlocks(inSource: try String(contentsOf: testFile, encoding: .utf8))
        #expect(sourceBlocks.count == 2)
        #expect(articleBlocks == sourceBlocks, "GettingStarted.md's swift code blocks differ from the marked code in \(testFile.lastPathComponent)")
    }

    @Test func theArticlesCodeDoesWhatTheArticleSays() throws {
        let directory = try TemporaryDirectory(prefix: "getting-started")
        let result = try planTrip(in: directory.url)
        #expect(result.longStays == ["Lisbon", "Porto"])
        #expect(result.stopsAfterDelete == 0)
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

    /// The lines after each "// Article code block." marker, up to the next marker or the end marker.
    static func markedBlocks(inSource text: String) -> [String] {
        var blocks: [[Substring]] = []
        var inside = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "// Article code block." {
                blocks.append([])
                inside = true
            } else if line == "// End of the article's code." {
                inside = false
            } else if inside {
                blocks[blocks.count - 1].append(line)
            }
        }
        return blocks.map { $0.joined(separator: "\n") }
    }
}

import Foundation
import SyncKit
import Testing

/// A post whose likes are a counter and whose best rating is a maximum, for the CLI's edits.
@Entity final class RatedPost {
    var title: String = ""
    @Attribute(merge: .counter) var likes: Int = 0
    @Attribute(merge: .max) var bestRating: Int = 0
}

/// `sync increment`, and `sync put` of a counter or a maximum, on a real store file.
extension CLIStoreTests {
    @Test func incrementAndPutOfACounterRecordIncrements() throws {
        let (path, run) = try initializedStore("posts", entities: [RatedPost.self])
        func post(_ id: String) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(try run("get", "RatedPost", id).utf8)) as? [String: Any])
        }
        let id = try run("put", "RatedPost", "title=hello", "likes=10", "bestRating=4")
        _ = try run("increment", "RatedPost", id, "likes", "2")
        _ = try run("increment", "RatedPost", id, "likes", "--", "-1")
        #expect(try post(id)["likes"] as? Int == 11)
        _ = try run("put", "RatedPost", id, "likes=15", "bestRating=2")
        #expect(try post(id)["likes"] as? Int == 15)
        #expect(try post(id)["bestRating"] as? Int == 4, "a maximum keeps the larger value")
        #expect(try run("log").split(separator: "\n").count == 4, "one change set per edit")

        let notCounter = try cli.run("--store", path, "increment", "RatedPost", id, "bestRating", "1")
        #expect(notCounter.status == 1)
        #expect(notCounter.stderr.contains("RatedPost.bestRating is not a counter"), "\(notCounter.stderr)")
        let badDelta = try cli.run("--store", path, "increment", "RatedPost", id, "likes", "many")
        #expect(badDelta.status == 2)
    }
}

extension CLIStoreTests {
    /// A `sync init`ed store named `name` with the schema of `entities`, and a runner of `sync`
    /// commands on it that expects each to succeed and returns its trimmed output.
    func initializedStore(_ name: String, entities: [any PersistentEntity.Type]) throws -> (path: String, run: (String...) throws -> String) {
        let schemaPath = directory.appendingPathComponent("\(name)-schema.json").path
        try ObjectStore(path: directory.appendingPathComponent("\(name)-typed.sqlite").path, entities: entities).exportSchema()
            .write(to: URL(fileURLWithPath: schemaPath))
        let path = directory.appendingPathComponent("\(name).sqlite").path
        #expect(try cli.run("init", path, "--schema", schemaPath, "--server", "http://127.0.0.1:9", "--dataset", name, "--token", "t0k").status == 0)
        let cli = self.cli
        return (path, { arguments in
            let result = try cli.run(["--store", path] + arguments)
            #expect(result.status == 0, "sync \(arguments.joined(separator: " ")): \(result.stderr)")
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        })
    }
}

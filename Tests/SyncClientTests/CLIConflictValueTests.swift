import Foundation
import SyncKit
import Testing

/// `sync conflicts` prints each side's value as a JSON value (`"from A"`, `7`, `null` for none),
/// the same values ``SyncReplica/conflicts()`` returns.
@Suite struct CLIConflictValueTests {
    /// A store made by `sync init` that merged concurrent edits of two typed replicas: both set
    /// one note's title and count, and one deleted a second note the other updated.
    static func storeWithConflicts(_ directory: URL, cli: CLIRunner) throws -> String {
        let a = try ClientReplica(), b = try ClientReplica()
        let ids = try a.addNotes(2)
        _ = try b.replica.apply(try a.replica.changeSets(missingFrom: VersionVector()))

        for (replica, title, count) in [(a, "from A", 5), (b, "from B", 7)] {
            let notes = try replica.context.fetchAll(Note.self)
            let first = try #require(notes.first { $0.objectID == ids[0] })
            first.title = title
            first.count = count
            let second = try #require(notes.first { $0.objectID == ids[1] })
            if replica === a { replica.context.delete(second) } else { second.count = 9 }
            try replica.context.save()
        }

        let schema = directory.appendingPathComponent("schema.json")
        try a.store.exportSchema().write(to: schema)
        let path = directory.appendingPathComponent("merged.sqlite").path
        let created = try cli.run("init", path, "--schema", schema.path, "--server", "http://127.0.0.1:9", "--dataset", "notes", "--token", "t0k")
        #expect(created.status == 0, "\(created.stderr)")
        let merged = try SyncReplica(store: ObjectStore(existingAt: path))
        _ = try merged.apply(try a.replica.changeSets(missingFrom: VersionVector()))
        _ = try merged.apply(try b.replica.changeSets(missingFrom: VersionVector()).filter { $0.dot.replica == b.replica.replicaID })
        return path
    }

    @Test func sidesPrintTheirValuesAsJSONValues() throws {
        let cli = try CLIRunner()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-conflicts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try CLIConflictValueTests.storeWithConflicts(directory, cli: cli)

        let result = try cli.run("--store", path, "conflicts")
        #expect(result.status == 0, "\(result.stderr)")
        let entries = try result.stdout.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        func values(_ kind: String, _ property: String) throws -> (winner: Any?, loser: Any?) {
            let entry = try #require(entries.first { $0["kind"] as? String == kind && $0["property"] as? String == property }, "\(result.stdout)")
            return ((entry["winner"] as? [String: Any])?["value"], (entry["loser"] as? [String: Any])?["value"])
        }
        let title = try values("attribute", "title")
        #expect(Set([title.winner as? String, title.loser as? String]) == ["from A", "from B"], "\(result.stdout)")
        let count = try values("attribute", "count")
        #expect(Set([count.winner as? Int, count.loser as? Int]) == [5, 7], "\(result.stdout)")
        let deleted = try values("update_vs_delete", "count")
        #expect(deleted.winner is NSNull && deleted.loser as? Int == 9, "\(result.stdout)")
        #expect(!result.stdout.contains(#"\""#), "no JSON text inside JSON strings: \(result.stdout)")

        // The Swift API reads the same values back, typed.
        let journal = try SyncReplica(store: ObjectStore(existingAt: path)).conflicts()
        let titleEntry = try #require(journal.first { $0.kind == .attribute && $0.property == "title" })
        #expect(Set([titleEntry.winner?.value, titleEntry.loser.value]) == [.string("from A"), .string("from B")])
        let deleteEntry = try #require(journal.first { $0.kind == .updateVersusDelete })
        #expect(deleteEntry.winner?.value == nil && deleteEntry.loser.value == .integer(9))
        #expect(deleteEntry.loser.value?.jsonText == "9" && deleteEntry.loser.value?.sqlValue == .integer(9))
    }
}

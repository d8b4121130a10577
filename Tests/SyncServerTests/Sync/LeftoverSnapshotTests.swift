import Foundation
import TestSupport
import Testing

@testable import SyncServer

/// Snapshot copies left in a dataset's directory by a server that stopped mid-snapshot are
/// removed when the service starts; nothing else is.
@Suite struct LeftoverSnapshotTests {
    @Test func leftoverSnapshotCopiesAreRemovedAtStart() throws {
        let data = try TemporaryDirectory(prefix: "syncd-leftovers")
        let first = try ServerFixture(dataDirectory: data.url)
        try first.registerSchema()
        let datasetDirectory = data.url.appendingPathComponent("datasets/main")
        let leftovers = ["snapshot-\(UUID().uuidString).sqlite", "snapshot-\(UUID().uuidString).sqlite-journal",
                         "snapshot-\(UUID().uuidString).sqlite-wal"]
        for name in leftovers {
            try Data(repeating: 1, count: 4096).write(to: datasetDirectory.appendingPathComponent(name))
        }
        try Data("keep".utf8).write(to: datasetDirectory.appendingPathComponent("snapshot-notes.txt"))

        let restarted = try ServerFixture(dataDirectory: data.url)
        let remaining = try FileManager.default.contentsOfDirectory(atPath: datasetDirectory.path)
        for name in leftovers { #expect(!remaining.contains(name), "\(name) was left") }
        #expect(remaining.contains("store.sqlite"))
        #expect(remaining.contains("snapshot-notes.txt"))
        #expect(restarted.send(.get, "/v1/datasets/main/snapshot").status == .ok)
    }
}

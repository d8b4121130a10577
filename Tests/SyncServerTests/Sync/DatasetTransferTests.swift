import Foundation
@testable import HTTPServer
import SyncKit
import TestSupport
import Testing

@testable import SyncServer

/// `syncd dataset export` from SQLite storage and `import` into PostgreSQL: the imported dataset
/// has the same log (cursors, digests), state and replica keys, and refuses to be imported twice.
@Suite struct DatasetTransferTests {
    @Test func anExportedDatasetImportsWithTheSameLogStateAndKeys() throws {
        let (sqlite, a, _) = try PullRouteTests.populated(storage: .sqlite)
        var file = Data()
        #expect(try DatasetTransfer.export(dataset: "main", dataDirectory: sqlite.directory) { file += $0 } == 5)
        let postgres = try ServerFixture(storage: .postgreSQL)
        let url = try #require(postgres.database?.url)
        #expect(try DatasetTransfer.importDataset("main", from: file, databaseURL: url) == 5)

        let before = try PullRouteTests.page(sqlite.pull(after: "0"))
        let after = try PullRouteTests.page(postgres.pull(after: "0"))
        #expect(after.changeSets.map(\.dot) == before.changeSets.map(\.dot))
        #expect(try CursorDigestRouteTests.position(postgres.pull(after: "2", limit: 2)) == CursorDigestRouteTests.position(sqlite.pull(after: "2", limit: 2)))
        #expect(try ServerFixture.entityRows(at: postgres.snapshotFile()) == ServerFixture.entityRows(at: sqlite.snapshotFile()))

        // The keys came along: a's ID with another key is refused, a itself goes on pushing.
        let impostor = try ClientReplica()
        try impostor.addBoard("impostor")
        let forged = ReplicaCredentials(replica: a.replica.replicaID, key: try impostor.credentials.key)
        #expect(postgres.push(try impostor.batch(), as: forged).status != .ok)
        try a.addBoard("after the move")
        postgres.push(try a.batch(missingFrom: try postgres.serverVector()), as: try a.credentials).expectOK()

        #expect(throws: DatasetTransfer.TransferError.self) { try DatasetTransfer.importDataset("main", from: file, databaseURL: url) }
    }

    /// A compacted log has lost the change sets before its compaction point: the export carries
    /// the store file as the base, and the imported dataset answers pulls as the exporter did.
    @Test func aCompactedDatasetExportsItsBaseAndTailAndImportsWithTheSameLogAndState() throws {
        let (sqlite, a, b) = try PullRouteTests.populated(storage: .sqlite)
        let stable = VersionVector([a.replica.replicaID: 3])
        let report = try #require(try sqlite.service.registry.dataset("main").compactLog(stableVector: { _ in stable }))
        #expect(report.logStart.cursor == 3 && report.changeSetsRemoved == 2, "\(report)")
        var lines: [Data] = []
        #expect(try DatasetTransfer.export(dataset: "main", dataDirectory: sqlite.directory) { lines.append($0) } == 3,
                "a's latest change set (kept) and b's two")
        #expect(lines.count == 6 && lines[1].starts(with: Data(#"{"compactedEntry""#.utf8)))
        let file = lines.reduce(Data(), +)
        let postgres = try ServerFixture(storage: .postgreSQL)
        let url = try #require(postgres.database?.url)
        #expect(try DatasetTransfer.importDataset("main", from: file, databaseURL: url) == 3)

        for (after, puller) in [("3", nil), ("0", a.replica.replicaID), ("4", b.replica.replicaID)] as [(String, ReplicaID?)] {
            let exported = try PullRouteTests.page(sqlite.pull(after: after, exclude: puller))
            let imported = try PullRouteTests.page(postgres.pull(after: after, exclude: puller))
            #expect(imported.changeSets.map(\.dot) == exported.changeSets.map(\.dot) && imported.cursor == exported.cursor, "after \(after)")
        }
        #expect(postgres.pull(after: "0", exclude: b.replica.replicaID).errorCode == "history_compacted")
        #expect(try ServerFixture.entityRows(at: postgres.snapshotFile()) == ServerFixture.entityRows(at: sqlite.snapshotFile()))
        try a.addBoard("after the move")
        postgres.push(try a.batch(missingFrom: try postgres.serverVector()), as: try a.credentials).expectOK()

        // A damaged base is refused before anything is written.
        let header = try #require(try JSONSerialization.jsonObject(with: lines[0]) as? [String: Any])
        var damaged = header
        damaged["base"] = ["cursor": "3", "digest": "00", "store": ""]
        let damagedFile = try JSONSerialization.data(withJSONObject: damaged) + Data("\n".utf8) + lines.dropFirst().reduce(Data(), +)
        let other = try ServerFixture(storage: .postgreSQL)
        #expect(throws: DatasetTransfer.TransferError.self) {
            try DatasetTransfer.importDataset("main", from: damagedFile, databaseURL: try #require(other.database?.url))
        }
    }

    @Test func aLogWithAFloorExportsFromItAndImportsWithTheSameAnswers() throws {
        let (sqlite, a, b) = try PullRouteTests.populated(storage: .sqlite)
        // b merges a's three change sets, then writes b3 (cursor 6), which has seen them.
        _ = try b.replica.apply(try a.replica.changeSets(missingFrom: VersionVector()))
        try b.addBoard("b2")
        sqlite.push(try b.batch(missingFrom: try sqlite.serverVector()), as: try b.credentials).expectOK()
        // a pulled up to its own a3, b to the end: the floor can rise to cursor 3.
        _ = try PullRouteTests.page(sqlite.pull(after: "3", exclude: a.replica.replicaID))
        _ = try PullRouteTests.page(sqlite.pull(after: "6", exclude: b.replica.replicaID))
        let everything = try sqlite.serverVector()
        let report = try #require(try sqlite.service.registry.dataset("main").compactLog(stableVector: { _ in everything }))
        #expect(report.logStart.cursor == 6 && report.entriesFolded == 3, "\(report)")

        var lines: [Data] = []
        #expect(try DatasetTransfer.export(dataset: "main", dataDirectory: sqlite.directory) { lines.append($0) } == 1, "b's latest change set")
        let header = try #require(try JSONSerialization.jsonObject(with: lines[0]) as? [String: Any])
        let floor = try #require((header["base"] as? [String: Any])?["floor"] as? [String: Any])
        #expect(header["version"] as? Int == 3 && floor["cursor"] as? String == "3"
                && floor["vector"] as? String == "\(a.replica.replicaID.storageText):3")
        #expect(lines.count == 4 && lines[2].starts(with: Data(#"{"compactedEntry""#.utf8)), "b1 and b2 compacted, then b3")
        let postgres = try ServerFixture(storage: .postgreSQL)
        #expect(try DatasetTransfer.importDataset("main", from: lines.reduce(Data(), +), databaseURL: try #require(postgres.database?.url)) == 1)

        #expect(try postgres.serverVector() == everything)
        for (after, puller) in [("6", nil), ("3", a.replica.replicaID), ("1", b.replica.replicaID), ("0", nil)] as [(String, ReplicaID?)] {
            let exported = sqlite.pull(after: after, exclude: puller), imported = postgres.pull(after: after, exclude: puller)
            #expect(imported.status == exported.status && imported.errorCode == exported.errorCode, "after \(after): \(imported.text)")
            if exported.status == .ok {
                let (left, right) = (try PullRouteTests.page(exported), try PullRouteTests.page(imported))
                #expect(right.changeSets.map(\.dot) == left.changeSets.map(\.dot) && right.cursor == left.cursor, "after \(after)")
            }
        }
        // b's latest change set covers the floor: it reads on from below it; nobody else does.
        #expect(try PullRouteTests.page(postgres.pull(after: "1", exclude: b.replica.replicaID)).cursor == "6")
        #expect(postgres.pull(after: "0").errorCode == "history_compacted")
        #expect(try ServerFixture.entityRows(at: postgres.snapshotFile()) == ServerFixture.entityRows(at: sqlite.snapshotFile()))
        try a.addBoard("after the move")
        postgres.push(try a.batch(missingFrom: try postgres.serverVector()), as: try a.credentials).expectOK()
        #expect(try PullRouteTests.page(postgres.pull(after: "6", exclude: b.replica.replicaID)).changeSets.map(\.dot)
                == [Dot(replica: a.replica.replicaID, seq: 4)])
    }

    @Test func theSchemaHistoryMovesWithTheDataset() throws {
        let sqlite = try ServerFixture(storage: .sqlite)
        let document = try SchemaDocument(jsonData: try ClientReplica().store.exportSchema())
        try sqlite.registerSchema(try document.jsonData())
        try sqlite.registerSchema(try rehashed(try addingCardColor(to: document)))
        var file = Data()
        _ = try DatasetTransfer.export(dataset: "main", dataDirectory: sqlite.directory) { file += $0 }
        let postgres = try ServerFixture(storage: .postgreSQL)
        _ = try DatasetTransfer.importDataset("main", from: file, databaseURL: try #require(postgres.database?.url))

        func versions(_ server: ServerFixture) throws -> [[String: String]] {
            let response = server.send(.get, "/v1/datasets/main/schema/versions")
            #expect(response.status == .ok)
            return try #require(response.json["versions"] as? [[String: Any]]).map { version in
                ["hash": version["versionHash"] as? String ?? "", "at": version["registeredAt"] as? String ?? "null"]
            }
        }
        let exported = try versions(sqlite)
        #expect(exported.count == 2)
        #expect(try versions(postgres) == exported, "both versions, with the times the SQLite server first held them")
    }

    @Test func aTruncatedExportIsRefusedAndImportsNothing() throws {
        let (sqlite, _, _) = try PullRouteTests.populated(storage: .sqlite)
        var lines: [Data] = []
        _ = try DatasetTransfer.export(dataset: "main", dataDirectory: sqlite.directory) { lines.append($0) }
        let postgres = try ServerFixture(storage: .postgreSQL)
        let truncated = lines.dropLast().reduce(Data(), +)
        #expect(throws: DatasetTransfer.TransferError.self) {
            try DatasetTransfer.importDataset("main", from: truncated, databaseURL: try #require(postgres.database?.url))
        }
        #expect(postgres.send(.get, "/v1/datasets/main/schema").status == .notFound)
    }
}

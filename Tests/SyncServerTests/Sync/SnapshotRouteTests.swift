import Foundation
import SyncKit
import Testing

@testable import SyncServer

@Suite struct SnapshotRouteTests {
    @Test(arguments: ServerStorage.allCases) func snapshotIsAStoreWithTheSameRowsAndItsCursor(storage: ServerStorage) throws {
        let (server, a, _) = try PullRouteTests.populated(storage: storage)
        let response = server.send(.get, "/v1/datasets/main/snapshot")
        #expect(response.status == .ok)
        #expect(response.headers["Content-Type"] == "application/vnd.sqlite3")
        #expect(response.headers["Sync-Cursor"] == "5")
        // The digest of the log up to the cursor, as a pull page that ends there carries it.
        let end = try CursorDigestRouteTests.position(server.pull(after: "0"))
        #expect(end.cursor == "5" && response.headers["Sync-Cursor-Digest"] == end.digest)
        #expect(response.body.prefix(15) == Data("SQLite format 3".utf8))

        let path = FileManager.default.temporaryDirectory.appendingPathComponent("syncd-snapshot-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        try response.body.write(to: URL(fileURLWithPath: path))
        let serverRows = try ServerFixture.entityRows(at: server.snapshotFile())
        #expect(try ServerFixture.entityRows(at: path) == serverRows)
        #expect(serverRows.count == 8)
        let connection = try SQLiteConnection(path: path, readOnly: true)
        #expect(try connection.rows("SELECT name FROM sqlite_master WHERE name = '_server_log'").isEmpty)

        // A client starting from the snapshot has the server's vector and nothing left to pull.
        let store = try ObjectStore(path: path, entities: boardEntities)
        let replica = try SyncReplica(store: store)
        #expect(try replica.versionVector() == server.serverVector())
        try a.addBoard("later")
        server.push(try a.batch(missingFrom: try server.serverVector()), as: try a.credentials).expectOK()
        let page = try PullRouteTests.page(server.pull(after: response.headers["Sync-Cursor"]))
        #expect(page.changeSets.map(\.dot) == [Dot(replica: a.replica.replicaID, seq: 4)])
        _ = try replica.apply(page.changeSets)
        #expect(try ServerFixture.entityRows(at: path) == ServerFixture.entityRows(at: server.snapshotFile()))
    }
}

import Foundation
@testable import HTTPServer
import SyncKit
import Testing

@testable import SyncServer

@Suite struct PullRouteTests {
    /// A server holding five change sets: three from `a`, then two from `b`.
    static func populated(storage: ServerStorage) throws -> (ServerFixture, ClientReplica, ClientReplica) {
        let server = try ServerFixture(storage: storage)
        try server.registerSchema()
        let a = try ClientReplica(), b = try ClientReplica()
        for index in 0..<3 { try a.addBoard("a\(index)", cards: 1) }
        server.push(try a.batch(), as: try a.credentials).expectOK()
        for index in 0..<2 { try b.addBoard("b\(index)") }
        server.push(try b.batch(), as: try b.credentials).expectOK()
        return (server, a, b)
    }

    static func page(_ response: HTTPResponse) throws -> (changeSets: [ChangeSet], cursor: String, more: Bool) {
        #expect(response.status == .ok, "\(response.text)")
        let object = try #require(response.json["changeSets"])
        let batch = try ChangeSetCoding.decode(try JSONSerialization.data(withJSONObject: object))
        #expect(batch.base == VersionVector())
        return (batch.changeSets, try #require(response.json["cursor"] as? String), try #require(response.json["more"] as? Bool))
    }

    @Test(arguments: ServerStorage.allCases) func pagesFollowTheCursorAndReportMore(storage: ServerStorage) throws {
        let (server, a, b) = try PullRouteTests.populated(storage: storage)
        let first = try PullRouteTests.page(server.pull(limit: 2))
        #expect(first.changeSets.map(\.dot) == [Dot(replica: a.replica.replicaID, seq: 1), Dot(replica: a.replica.replicaID, seq: 2)])
        #expect(first.cursor == "2")
        #expect(first.more)
        let second = try PullRouteTests.page(server.pull(after: first.cursor, limit: 2))
        #expect(second.changeSets.map(\.dot) == [Dot(replica: a.replica.replicaID, seq: 3), Dot(replica: b.replica.replicaID, seq: 1)])
        #expect(second.more)
        let third = try PullRouteTests.page(server.pull(after: second.cursor, limit: 2))
        #expect(third.changeSets.map(\.dot) == [Dot(replica: b.replica.replicaID, seq: 2)])
        #expect(third.cursor == "5")
        #expect(!third.more)
        let empty = try PullRouteTests.page(server.pull(after: "5"))
        #expect(empty.changeSets.isEmpty && empty.cursor == "5" && !empty.more)
    }

    @Test(arguments: ServerStorage.allCases) func askingAgainWithTheSameCursorReturnsTheSamePage(storage: ServerStorage) throws {
        let (server, _, _) = try PullRouteTests.populated(storage: storage)
        let once = server.pull(after: "1", limit: 3)
        let twice = server.pull(after: "1", limit: 3)
        #expect(once.body == twice.body)
        #expect(try PullRouteTests.page(once).changeSets.count == 3)
    }

    @Test(arguments: ServerStorage.allCases) func excludedReplicaIsLeftOutButAdvancesTheCursor(storage: ServerStorage) throws {
        let (server, a, b) = try PullRouteTests.populated(storage: storage)
        let page = try PullRouteTests.page(server.pull(limit: 4, exclude: a.replica.replicaID))
        #expect(page.changeSets.map(\.dot) == [Dot(replica: b.replica.replicaID, seq: 1)])
        #expect(page.cursor == "4")
        #expect(page.more)
    }

    @Test(arguments: ServerStorage.allCases) func aClientApplyingEveryPageConvergesWithTheWriters(storage: ServerStorage) throws {
        let (server, a, b) = try PullRouteTests.populated(storage: storage)
        let fresh = try ClientReplica()
        var cursor = "0"
        var more = true
        while more {
            let page = try PullRouteTests.page(server.pull(after: cursor, limit: 2))
            _ = try fresh.replica.apply(page.changeSets)
            cursor = page.cursor
            more = page.more
        }
        // Each writer pulls the other's change sets, leaving out its own.
        for writer in [a, b] {
            let page = try PullRouteTests.page(server.pull(exclude: writer.replica.replicaID))
            _ = try writer.replica.apply(page.changeSets)
        }
        let rows = try ServerFixture.entityRows(at: fresh.path)
        #expect(rows.count == 5 + 3)
        #expect(try ServerFixture.entityRows(at: a.path) == rows)
        #expect(try ServerFixture.entityRows(at: b.path) == rows)
        #expect(try ServerFixture.entityRows(at: server.snapshotFile()) == rows)
    }

    @Test(arguments: ServerStorage.allCases) func invalidCursorAndParametersAre400(storage: ServerStorage) throws {
        let (server, _, _) = try PullRouteTests.populated(storage: storage)
        for cursor in ["abc", "-1", "1.5", "", " 1", "6", "99999999999999999999"] {
            let response = server.pull(after: cursor)
            #expect(response.status == .badRequest, "\(cursor)")
            #expect(response.errorCode == "invalid_cursor", "\(cursor)")
        }
        #expect(server.send(.get, "/v1/datasets/main/changesets", query: [("limit", "0")]).errorCode == "invalid_parameter")
        #expect(server.send(.get, "/v1/datasets/main/changesets", query: [("limit", "x")]).errorCode == "invalid_parameter")
        #expect(server.send(.get, "/v1/datasets/main/changesets", query: [("exclude", "me")]).errorCode == "invalid_parameter")
        #expect(server.send(.get, "/v1/datasets/main/changesets", query: [("exclude", "")]).errorCode == "invalid_parameter")
        // Limits above the maximum are clamped, not refused.
        #expect(try PullRouteTests.page(server.pull(limit: 1_000_000)).changeSets.count == 5)
    }
}

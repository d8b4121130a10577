import Foundation
@testable import HTTPServer
import SyncKit
import TestSupport
import Testing

@testable import SyncServer

/// A pull at the end of the log is answered from memory; these check it never hides a push.
@Suite struct PullAtEndTests {
    /// The cursor and number of change sets of a pull page.
    static func page(_ response: HTTPResponse) throws -> (cursor: String, count: Int) {
        let page = try PullRouteTests.page(response)
        return (page.cursor, page.changeSets.count)
    }

    @Test(arguments: ServerStorage.allCases) func aPushIsVisibleToTheNextPullAfterPullsAtTheEnd(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        try server.registerSchema()
        let client = try ClientReplica()
        try client.addBoard("first")
        server.push(try client.batch(), as: try client.credentials).expectOK()
        let end = try PullAtEndTests.page(server.pull(after: "0"))
        #expect(end.count == 1)
        for _ in 0..<3 {
            let again = try PullAtEndTests.page(server.pull(after: end.cursor))
            #expect(again.count == 0 && again.cursor == end.cursor)
        }

        try client.addBoard("second")
        server.push(try client.batch(missingFrom: try server.serverVector()), as: try client.credentials).expectOK()
        let next = try PullAtEndTests.page(server.pull(after: end.cursor))
        #expect(next.count == 1)
        #expect(next.cursor != end.cursor)
        #expect(try PullAtEndTests.page(server.pull(after: next.cursor)).count == 0)
        // The remembered end does not make cursors beyond it valid.
        #expect(server.pull(after: String(Int(next.cursor)! + 1)).errorCode == "invalid_cursor")
        #expect(server.pull(after: String(Int(next.cursor)! + 1)).errorCode == "invalid_cursor")
    }

    @Test(arguments: ServerStorage.allCases) func pushesRacingPullsAtTheEndAreNeverLost(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        try server.registerSchema()
        let client = try ClientReplica()
        let service = server.service, token = server.token
        let latest = Collector<String>(), stop = Collector<Bool>(), stopped = Collector<Bool>()
        latest.append("0")
        // Threads, not tasks: they spin, and must not starve the cooperative pool.
        for _ in 0..<2 {
            Thread {
                var headers = HTTPHeaders()
                headers.add(name: "Authorization", value: "Bearer \(token)")
                while stop.values.isEmpty {
                    let cursor = latest.values.last!
                    _ = service.handle(HTTPRequest(method: .get, target: "/v1/datasets/main/changesets?after=\(cursor)",
                                                   path: "/v1/datasets/main/changesets", queryItems: [.init(name: "after", value: cursor)],
                                                   headers: headers))
                }
                stopped.append(true)
            }.start()
        }
        defer {
            stop.append(true)
            #expect(waitUntil(timeout: 10) { stopped.values.count == 2 })
        }
        for index in 0..<40 {
            let before = latest.values.last!
            try client.addBoard("board \(index)")
            server.push(try client.batch(missingFrom: try server.serverVector()), as: try client.credentials).expectOK()
            let page = try PullAtEndTests.page(server.pull(after: before))
            #expect(page.count == 1, "push \(index) was not visible after cursor \(before)")
            latest.append(page.cursor)
            #expect(try PullAtEndTests.page(server.pull(after: page.cursor)).count == 0)
        }
    }

    @Test func overHTTPAPushOnOneConnectionIsSeenByThePullOnAnother() throws {
        let fixture = try ServerFixture()
        try fixture.registerSchema()
        let client = try ClientReplica()
        try withTestServer(handler: fixture.service.handle) { server in
            let puller = try RawHTTPClient(port: server.port), pusher = try RawHTTPClient(port: server.port)
            func pull(after cursor: String) throws -> String {
                #expect(puller.send("GET /v1/datasets/main/changesets?after=\(cursor) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(fixture.token)\r\n\r\n"))
                let response = try puller.readResponse()
                #expect(response.status == 200)
                return response.bodyText
            }
            let empty = try pull(after: "0")
            #expect(empty.contains(#""changeSets":[]"#) && empty.contains(#""cursor":"0""#))
            #expect(try pull(after: "0") == empty)

            try client.addBoard("pushed")
            let body = try client.batch()
            #expect(pusher.send("POST /v1/datasets/main/changesets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(fixture.token)\r\nSync-Replica-ID: \(client.replica.replicaID.uuidString)\r\nSync-Replica-Key: \(try client.credentials.keyHex)\r\nContent-Length: \(body.count)\r\n\r\n"))
            #expect(pusher.send([UInt8](body)))
            #expect(try pusher.readResponse().status == 200)

            let after = try pull(after: "0")
            #expect(after.contains(#""cursor":"1""#))
            #expect(after.contains("pushed"), "\(after)")
        }
    }
}

import Foundation
@testable import HTTPServer
import TestSupport
import Testing

@testable import SyncServer

/// `syncd` checks route, bearer token and dataset as soon as a request's head arrives, so a
/// request that will be refused costs the server nothing for its body.
@Suite("Admission before the body")
struct HeadAdmissionTests {
    /// Runs `body` against a real server whose handler and admission check are `fixture`'s service.
    func withSyncServer(
        _ fixture: ServerFixture, configure: (inout HTTPServerConfiguration) -> Void = { _ in },
        _ body: (HTTPServer) throws -> Void
    ) throws {
        try withTestServer(configure: {
            $0.errorResponse = fixture.service.transportErrorResponse
            configure(&$0)
        }, admission: fixture.service.admit, handler: fixture.service.handle, body)
    }

    /// Connects and sends a request head with `Host` and `fields`, and nothing of the body.
    func sendHead(_ server: HTTPServer, _ requestLine: String, _ fields: [String]) throws -> RawHTTPClient {
        let client = try RawHTTPClient(port: server.port)
        client.send(requestLine + " HTTP/1.1\r\nHost: x\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n")
        return client
    }

    @Test("an unauthenticated push declaring a large body is answered 401 while only its head was sent")
    func unauthenticatedPushIsRefusedBeforeTheBody() throws {
        let fixture = try ServerFixture()
        try withSyncServer(fixture) { server in
            let client = try sendHead(server, "POST /v1/datasets/main/changesets", ["Content-Length: 30000000"])
            let response = try client.readResponse(timeout: 3)
            #expect(response.status == 401)
            #expect(response.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
            #expect(response.header("Sync-Protocol") == "1")
            #expect(response.header("Connection") == "close")
            #expect(client.waitForClose(timeout: 3))
            #expect(server.statistics.bufferedBodyBytes == 0)
        }
    }

    @Test("another dataset's token gets 403 and an unknown route 404, both before the body")
    func forbiddenAndUnknownAreRefusedBeforeTheBody() throws {
        let fixture = try ServerFixture()
        try withSyncServer(fixture) { server in
            let forbidden = try sendHead(
                server, "PUT /v1/datasets/main/schema", ["Authorization: Bearer \(fixture.otherToken)", "Content-Length: 1000000"])
            #expect(try forbidden.readResponse(timeout: 3).status == 403)

            let unknown = try sendHead(server, "POST /v1/nowhere", ["Transfer-Encoding: chunked"])
            let response = try unknown.readResponse(timeout: 3)
            #expect(response.status == 404)
            #expect(response.bodyText.contains(#""code":"not_found""#))
        }
    }

    @Test("Expect: 100-continue gets 100 only once the token is accepted")
    func continueOnlyAfterAdmission() throws {
        let fixture = try ServerFixture()
        let schema = try ClientReplica().store.exportSchema()
        try withSyncServer(fixture) { server in
            let fields = ["Expect: 100-continue", "Content-Length: \(schema.count)"]
            let refused = try sendHead(server, "PUT /v1/datasets/main/schema", ["Authorization: Bearer wrong"] + fields)
            #expect(try refused.readResponse(timeout: 3).status == 401)

            let admitted = try sendHead(server, "PUT /v1/datasets/main/schema", ["Authorization: Bearer \(fixture.token)"] + fields)
            #expect(try admitted.readResponse(timeout: 3).status == 100)
            admitted.send(Array(schema))
            #expect(try admitted.readResponse(timeout: 3).status == 200)
        }
    }

    @Test("hundreds of slow connections at the connection limit do not keep /health or an authenticated push waiting")
    func slowConnectionsAreShed() throws {
        FileDescriptorLimit.raiseSoftLimitToHardLimit()
        let fixture = try ServerFixture()
        try fixture.registerSchema()
        let replica = try ClientReplica()
        try replica.addBoard("Plans", cards: 3)
        let batch = try replica.batch(), pusher = try replica.credentials
        try withSyncServer(fixture, configure: { $0.maxConnections = 64 }) { server in
            // Three kinds of slow client: silent, trickling a head, trickling an admitted body.
            var slow: [RawHTTPClient] = []
            for index in 0..<300 {
                switch index % 3 {
                case 0:
                    slow.append(try RawHTTPClient(port: server.port))
                case 1:
                    let client = try RawHTTPClient(port: server.port)
                    client.send("GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                    slow.append(client)
                default:
                    slow.append(try sendHead(
                        server, "POST /v1/datasets/main/changesets", ["Authorization: Bearer \(fixture.token)", "Content-Length: 100000"]))
                }
            }
            let trickling = Trickler(slow)
            defer { trickling.stop() }

            for _ in 0..<3 {
                let start = Date()
                let health = try RawHTTPClient(port: server.port)
                health.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(try health.readResponse(timeout: 5).status == 200)
                let healthSeconds = Date().timeIntervalSince(start)
                #expect(healthSeconds < 2, "/health took \(healthSeconds) s")

                let pushStart = Date()
                let push = try sendHead(
                    server, "POST /v1/datasets/main/changesets",
                    ["Authorization: Bearer \(fixture.token)", "Content-Length: \(batch.count)"] + ServerFixture.headers(of: pusher).map { "\($0): \($1)" })
                push.send(Array(batch))
                let response = try push.readResponse(timeout: 5)
                #expect(response.status == 200, "\(response.bodyText)")
                let pushSeconds = Date().timeIntervalSince(pushStart)
                #expect(pushSeconds < 2, "push took \(pushSeconds) s")
                usleep(300_000)
            }
            #expect(server.statistics.shedConnections >= 300 - 64)
            #expect(server.statistics.openConnections <= 64)
        }
    }
}

/// Sends one byte to each of its clients every 200 ms from a background thread until stopped.
private final class Trickler: @unchecked Sendable {
    // @unchecked: `stopped` is only accessed while holding `lock`; `clients` is only used by the thread.
    private let lock = NSLock()
    private var stopped = false
    private let finished = DispatchSemaphore(value: 0)

    init(_ clients: [RawHTTPClient]) {
        nonisolated(unsafe) let clients = clients
        Thread.detachNewThread { [self] in
            while !isStopped {
                for client in clients { client.send("a") }
                usleep(200_000)
            }
            finished.signal()
        }
    }

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    /// Stops the thread and waits for it, so the clients outlive their last use.
    func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
        finished.wait()
    }
}

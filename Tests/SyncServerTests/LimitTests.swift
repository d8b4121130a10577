import Foundation
@testable import HTTPServer
import TestSupport
import Testing

@testable import SyncServer

@Suite("Limits")
struct LimitTests {
    @Test("a head larger than the limit gets 431 and the connection closes")
    func headerTooLarge() throws {
        try withTestServer(configure: { $0.maxHeadBytes = 1024 }) { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("GET / HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 2000))\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 431)
            #expect(response.bodyText.contains("1024"))
            #expect(client.waitForClose())
        }
    }

    @Test("an unterminated head is rejected as soon as it exceeds the limit")
    func unterminatedHeadTooLarge() throws {
        try withTestServer(configure: { $0.maxHeadBytes = 1024 }) { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("GET /\(String(repeating: "a", count: 4000))")
            #expect(try client.readResponse().status == 431)
        }
    }

    @Test("too many header fields get 431")
    func tooManyHeaders() throws {
        try withTestServer(configure: { $0.maxHeaderCount = 10 }) { server in
            let client = try RawHTTPClient(port: server.port)
            let fields = (0..<11).map { "X-\($0): v\r\n" }.joined()
            client.send("GET / HTTP/1.1\r\nHost: x\r\n\(fields)\r\n")
            #expect(try client.readResponse().status == 431)
        }
    }

    @Test("a declared body over the limit gets 413 without the body being read")
    func contentLengthTooLarge() throws {
        try withTestServer(configure: { $0.maxBodyBytes = 100 }) { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 413)
            #expect(response.header("Connection") == "close")
            #expect(client.waitForClose())
        }
    }

    @Test("a body at exactly the limit is accepted")
    func bodyAtLimit() throws {
        try withTestServer(configure: { $0.maxBodyBytes = 100 }) { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n" + String(repeating: "b", count: 100))
            #expect(try client.readResponse().status == 200)
        }
    }

    @Test("a chunked body growing over the limit gets 413")
    func chunkedTooLarge() throws {
        try withTestServer(configure: { $0.maxBodyBytes = 100 }) { server in
            let client = try RawHTTPClient(port: server.port)
            let chunk = "40\r\n" + String(repeating: "c", count: 64) + "\r\n"
            client.send("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk + chunk)
            #expect(try client.readResponse().status == 413)
        }
    }

    @Test("a large upload that is refused still lets the client read the 413")
    func largeRefusedUpload() throws {
        try withTestServer(configure: { $0.maxBodyBytes = 1000 }) { server in
            let client = try RawHTTPClient(port: server.port)
            // The client keeps sending after the server answered; lingering close must prevent
            // a reset from destroying the response.
            client.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n")
            client.send([UInt8](repeating: 0x61, count: 200_000))
            #expect(try client.readResponse().status == 413)
        }
    }

    @Test("at the limit a new connection displaces the longest-idle one; only when every connection is busy is it refused with 503")
    func connectionLimit() throws {
        let release = DispatchSemaphore(value: 0)
        let handler: HTTPServer.Handler = { request in
            if request.path == "/wait" { release.wait() }
            return echoHandler(request)
        }
        try withTestServer(configure: { $0.maxConnections = 3 }, handler: handler) { server in
            var clients: [RawHTTPClient] = []
            for _ in 0..<3 {
                let client = try RawHTTPClient(port: server.port)
                client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(try client.readResponse().status == 200)
                clients.append(client)
            }
            #expect(server.statistics.openConnections == 3)
            // A client can read its response before the server's worker has handed the connection
            // back to the event loop, which does not shed a connection a worker still holds.
            #expect(waitUntil(timeout: 10) { server.statistics.activeRequests == 0 })

            let newcomer = try RawHTTPClient(port: server.port)
            newcomer.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try newcomer.readResponse().status == 200)
            let displaced = clients.removeFirst()
            #expect(displaced.waitForClose(timeout: 10))
            #expect(displaced.unreadBytes.isEmpty, "an idle connection is closed without a response")
            #expect(server.statistics.shedConnections == 1)

            // Connections whose requests are with the handler are never displaced.
            clients.append(newcomer)
            for client in clients { client.send("GET /wait HTTP/1.1\r\nHost: x\r\n\r\n") }
            #expect(waitUntil(timeout: 10) { server.statistics.activeRequests == 3 })
            let extra = try RawHTTPClient(port: server.port)
            let refused = try extra.readResponse()
            #expect(refused.status == 503)
            #expect(refused.header("Connection") == "close")
            #expect(refused.header("Retry-After") == "1")
            #expect(extra.waitForClose())
            #expect(server.statistics.rejectedConnections == 1)

            for _ in clients { release.signal() }
            for client in clients { #expect(try client.readResponse().status == 200) }
        }
    }
}

import Foundation
@testable import HTTPServer
import Testing

@testable import SyncServer

@Suite("Timeouts")
struct TimeoutTests {
    @Test("a client that never finishes its head gets 408 and is closed")
    func slowHead() throws {
        try withTestServer(configure: { $0.readTimeout = .milliseconds(300) }) { server in
            let client = try RawHTTPClient(port: server.port)
            let start = Date()
            client.send("GET / HTTP/1.1\r\nHost: x\r\n")
            let response = try client.readResponse(timeout: 3)
            let elapsed = Date().timeIntervalSince(start)
            #expect(response.status == 408)
            #expect(response.header("Connection") == "close")
            #expect(elapsed >= 0.25 && elapsed < 2, "408 after \(elapsed) s")
            #expect(client.waitForClose())
        }
    }

    @Test("trickling the head byte by byte does not extend the read timeout (slowloris)")
    func slowlorisTrickle() throws {
        try withTestServer(configure: { $0.readTimeout = .milliseconds(300) }) { server in
            let client = try RawHTTPClient(port: server.port)
            let start = Date()
            var response: RawResponse?
            let trickle = Array("GET / HTTP/1.1\r\nX-Slow: ".utf8) + [UInt8](repeating: 0x61, count: 200)
            for byte in trickle where Date().timeIntervalSince(start) < 3 {
                client.send([byte])
                if let answer = try? client.readResponse(timeout: 0.02) {
                    response = answer
                    break
                }
            }
            let elapsed = Date().timeIntervalSince(start)
            #expect(response?.status == 408)
            #expect(elapsed < 1.5, "connection survived \(elapsed) s of trickling")
            #expect(client.waitForClose(timeout: 1))
        }
    }

    @Test("a stalled body gets 408")
    func stalledBody() throws {
        try withTestServer(configure: { $0.readTimeout = .milliseconds(300) }) { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
            #expect(try client.readResponse(timeout: 3).status == 408)
        }
    }

    @Test("an idle keep-alive connection is closed after the idle timeout, not before")
    func idleTimeout() throws {
        try withTestServer(configure: { $0.idleTimeout = .milliseconds(400) }) { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().status == 200)
            let start = Date()
            #expect(client.waitForClose(timeout: 3))
            let elapsed = Date().timeIntervalSince(start)
            #expect(elapsed >= 0.3 && elapsed < 2, "closed after \(elapsed) s")
            #expect(client.unreadBytes.isEmpty, "idle close must not send a response")
        }
    }

    @Test("a slow handler is not subject to the read timeout")
    func slowHandlerIsNotATimeout() throws {
        let handler: HTTPServer.Handler = { _ in
            usleep(600_000)
            return .text("done")
        }
        try withTestServer(configure: { $0.readTimeout = .milliseconds(200) }, handler: handler) { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().bodyText == "done")
        }
    }
}

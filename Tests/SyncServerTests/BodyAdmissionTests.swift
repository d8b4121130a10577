import Foundation
@testable import HTTPServer
import TestSupport
import Testing

@testable import SyncServer

/// Bodies cost the server time and memory only within bounds: an overall deadline per body and a
/// server-wide budget for bodies still arriving.
@Suite("Body deadline and memory budget")
struct BodyAdmissionTests {
    @Test("a body trickled steadily past the body deadline gets 408, although no single pause is long")
    func bodyTrickledPastDeadline() throws {
        try withTestServer(configure: {
            $0.readTimeout = .seconds(5)
            $0.bodyTimeout = .milliseconds(800)
        }) { server in
            let client = try RawHTTPClient(port: server.port)
            let start = Date()
            client.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
            var response: RawResponse?
            while response == nil && Date().timeIntervalSince(start) < 5 {
                client.send("a")
                response = try? client.readResponse(timeout: 0.1)
            }
            let elapsed = Date().timeIntervalSince(start)
            #expect(response?.status == 408)
            #expect(response?.bodyText.contains("body") == true)
            #expect(elapsed >= 0.7 && elapsed < 3, "408 after \(elapsed) s")
            #expect(client.waitForClose(timeout: 3))
        }
    }

    @Test("bodies beyond the memory budget get 503 with Retry-After, and the budget returns when bodies finish")
    func memoryBudget() throws {
        try withTestServer(configure: { $0.maxBufferedBodyBytes = 100_000 }) { server in
            let first = try RawHTTPClient(port: server.port)
            first.send("POST /first HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\nabc")
            #expect(waitUntil(timeout: 3) { server.statistics.bufferedBodyBytes == 60_000 })

            let declared = try RawHTTPClient(port: server.port)
            declared.send("POST /second HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n")
            let refused = try declared.readResponse(timeout: 3)
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") == "1")
            #expect(declared.waitForClose(timeout: 3))

            // A chunked body has no declared size: it is refused once what it has grown to no longer fits.
            let chunked = try RawHTTPClient(port: server.port)
            let chunk = String(repeating: "c", count: 50_000)
            chunked.send("POST /third HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\(String(chunk.utf8.count, radix: 16))\r\n\(chunk)\r\n")
            #expect(try chunked.readResponse(timeout: 3).status == 503)
            #expect(server.statistics.bodiesRefusedForMemory == 2)

            first.send(String(repeating: "x", count: 60_000 - 3))
            let accepted = try first.readResponse(timeout: 3)
            #expect(accepted.status == 200)
            #expect(accepted.bodyText.contains("path=/first"))
            #expect(waitUntil(timeout: 3) { server.statistics.bufferedBodyBytes == 0 })

            let retry = try RawHTTPClient(port: server.port)
            retry.send("POST /second HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n\(String(repeating: "y", count: 60_000))")
            #expect(try retry.readResponse(timeout: 3).status == 200)
        }
    }

    @Test("a connection closed mid-body gives its share of the budget back")
    func abandonedBodyReleasesBudget() throws {
        try withTestServer(configure: { $0.maxBufferedBodyBytes = 100_000 }) { server in
            do {
                let client = try RawHTTPClient(port: server.port)
                client.send("POST /gone HTTP/1.1\r\nHost: x\r\nContent-Length: 90000\r\n\r\nabc")
                #expect(waitUntil(timeout: 3) { server.statistics.bufferedBodyBytes == 90_000 })
            }
            #expect(waitUntil(timeout: 3) { server.statistics.bufferedBodyBytes == 0 })
        }
    }
}

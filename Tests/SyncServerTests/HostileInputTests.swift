import Foundation
@testable import HTTPServer
import TestSupport
import Testing

@testable import SyncServer

@Suite("Hostile input")
struct HostileInputTests {
    /// Fragments that steer random input towards interesting parser states.
    static let fragments: [String] = [
        "GET ", "POST ", "/", " HTTP/1.1", " HTTP/1.0", "\r\n", "\n", "\r", "\r\n\r\n", "Host: x\r\n",
        "Content-Length: ", "Transfer-Encoding: chunked\r\n", "0\r\n\r\n", "ffffffff\r\n", ":", ";", "%", "%zz",
        "?a=b&c", "Expect: 100-continue\r\n", "\u{0}", "\t", " ", "99999999999999999999", "-1", "ÿ", "\u{7F}",
    ]

    /// Valid requests that get mutated, so the fuzzer also explores paths past the first error.
    static let templates: [String] = [
        "GET /a?b=c HTTP/1.1\r\nHost: x\r\n\r\n",
        "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
        "PUT /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;e=1\r\nabc\r\n0\r\nT: v\r\n\r\n",
        "GET / HTTP/1.0\r\n\r\nGET /2 HTTP/1.1\r\nHost: y\r\n\r\n",
    ]

    static func hostileInput(using generator: inout SeededGenerator) -> [UInt8] {
        if Int.random(in: 0..<3, using: &generator) == 0 {
            var bytes = Array(templates.randomElement(using: &generator)!.utf8)
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[index] = UInt8.random(in: 0...255, using: &generator)
                case 1: bytes.remove(at: index)
                default: bytes.insert(contentsOf: fragments.randomElement(using: &generator)!.utf8, at: index)
                }
            }
            return bytes
        }
        var bytes: [UInt8] = []
        let pieces = Int.random(in: 1...24, using: &generator)
        for _ in 0..<pieces {
            if Bool.random(using: &generator) {
                bytes += Array(fragments.randomElement(using: &generator)!.utf8)
            } else {
                let count = Int.random(in: 1...16, using: &generator)
                for _ in 0..<count { bytes.append(UInt8.random(in: 0...255, using: &generator)) }
            }
        }
        return bytes
    }

    @Test("thousands of seeded random requests never crash the parser or wedge it")
    func parserFuzz() {
        var generator = SeededGenerator(seed: 0x5EED_0001)
        let limits = HTTPRequestParser.Limits(maxHeadBytes: 512, maxBodyBytes: 1024, maxHeaderCount: 20)
        var outcomes = (requests: 0, errors: 0, incomplete: 0)
        for _ in 0..<20_000 {
            var parser = HTTPRequestParser(limits: limits)
            let input = Self.hostileInput(using: &generator)
            // Feed in random slices to exercise every resume point.
            var offset = 0
            var failed = false
            while offset < input.count && !failed {
                let size = Int.random(in: 1...max(1, input.count - offset), using: &generator)
                input[offset..<(offset + size)].withUnsafeBytes { parser.append($0) }
                offset += size
                do {
                    while try parser.nextAdmittedRequest() != nil { outcomes.requests += 1 }
                } catch {
                    #expect([400, 413, 431, 501, 505].contains(error.status.code))
                    failed = true
                    outcomes.errors += 1
                }
            }
            if !failed { outcomes.incomplete += 1 }
            #expect(parser.bufferedByteCount <= limits.maxHeadBytes + limits.maxBodyBytes + input.count)
        }
        // The generator must actually reach all three outcomes, or it is not testing much.
        #expect(outcomes.requests > 0)
        #expect(outcomes.errors > 0)
        #expect(outcomes.incomplete > 0)
    }

    @Test("a few thousand random byte strings over the network leave the server answering")
    func networkFuzz() throws {
        try withTestServer(configure: {
            $0.readTimeout = .milliseconds(200)
            $0.maxHeadBytes = 1024
            $0.maxBodyBytes = 4096
            $0.lingerTimeout = .milliseconds(50)
        }) { server in
            var generator = SeededGenerator(seed: 0xBAD_C0DE)
            for round in 0..<2_000 {
                let client = try RawHTTPClient(port: server.port)
                client.send(Self.hostileInput(using: &generator))
                if round % 50 == 0 {
                    // Now and then wait for the server's verdict instead of hanging up at once.
                    client.shutdownWrite()
                    _ = client.waitForClose(timeout: 2)
                }
            }
            let client = try RawHTTPClient(port: server.port)
            client.send("GET /still-alive HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.bodyText.contains("path=/still-alive"))
            #expect(waitUntil(timeout: 3) { server.statistics.openConnections <= 1 })
            #expect(server.statistics.acceptedConnections == 2_001)
        }
    }
}

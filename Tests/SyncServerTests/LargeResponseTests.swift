import Foundation
@testable import HTTPServer
import Testing

@testable import SyncServer

/// A response much larger than the socket's send buffer must be written out completely and
/// quickly: the server has to be told when the socket drains.
@Suite struct LargeResponseTests {
    @Test func aResponseOfSixteenMegabytesArrivesWhole() throws {
        let size = 16 * 1024 * 1024
        let body = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try withTestServer(configure: { $0.writeTimeout = .seconds(5) }, handler: { _ in HTTPResponse(status: .ok, body: body) }) { server in
            let client = try RawHTTPClient(port: server.port)
            #expect(client.send("GET /big HTTP/1.1\r\nHost: test\r\n\r\n"))
            let started = Date()
            let response = try client.readResponse(timeout: 20)
            #expect(response.status == 200)
            #expect(response.body.count == size)
            #expect(response.body == Array(body))
            // Well under the write timeout: the server must not wait for it to notice the socket drained.
            #expect(Date().timeIntervalSince(started) < 4)
        }
    }
}

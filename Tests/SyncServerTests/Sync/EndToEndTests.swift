import Foundation
import SyncKit
import Testing

@testable import SyncServer

/// The service behind a real ``HTTPServer`` on a loopback port, as `syncd serve` runs it.
@Suite struct EndToEndTests {
    @Test func serverRefusalsAreJSONErrorsAndEveryRequestIsLoggedAndCounted() throws {
        let fixture = try ServerFixture()
        let lines = Collector<String>()
        let directory = fixture.directory.appendingPathComponent("e2e")
        var configuration = SyncServiceConfiguration(dataDirectory: directory)
        configuration.log = { lines.append($0) }
        let service = try SyncService(configuration: configuration)
        let token = try service.tokens.add(dataset: "main")
        try withTestServer(configure: {
            $0.maxBodyBytes = 1024
            $0.onRequestCompleted = service.requestCompleted
            $0.errorResponse = service.transportErrorResponse
        }, handler: service.handle) { server in
            let client = try RawHTTPClient(port: server.port)
            #expect(client.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"))
            let health = try client.readResponse()
            #expect(health.status == 200)
            #expect(health.header("Sync-Protocol") == "1")

            let big = String(repeating: "x", count: 2048)
            #expect(client.send("POST /v1/datasets/main/changesets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nContent-Length: \(big.utf8.count)\r\n\r\n\(big)"))
            let tooLarge = try client.readResponse()
            #expect(tooLarge.status == 413)
            #expect(tooLarge.header("Content-Type") == "application/json")
            #expect(tooLarge.bodyText.contains(#""code":"payload_too_large""#))
            #expect(tooLarge.header("Sync-Protocol") == "1")

            let metrics = try RawHTTPClient(port: server.port)
            #expect(metrics.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"))
            let text = try metrics.readResponse().bodyText
            #expect(text.contains(#"syncd_requests_total{method="GET",route="/health",status="200"} 1"#), "\(text)")
        }
        let logged = lines.values
        #expect(logged.contains { $0.contains(" GET /health 200 ") && $0.hasSuffix("ms") })
        #expect(logged.contains { $0.contains(" 413 ") })
    }
}

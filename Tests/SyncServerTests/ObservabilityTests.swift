import Foundation
@testable import HTTPServer
import TestSupport
import Testing

@testable import SyncServer

@Suite("Observability")
struct ObservabilityTests {
    @Test("one summary per exchange, including server-generated errors")
    func requestSummaries() throws {
        let summaries = Collector<HTTPRequestSummary>()
        try withTestServer(configure: { configuration in
            configuration.onRequestCompleted = { summaries.append($0) }
        }) { server in
            let client = try RawHTTPClient(port: server.port)
            let request = "POST /items?x=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
            client.send(request)
            let response = try client.readResponse()
            let bad = try RawHTTPClient(port: server.port)
            bad.send("NOT HTTP\r\n\r\n")
            #expect(try bad.readResponse().status == 400)

            #expect(waitUntil(timeout: 2) { summaries.values.count == 2 })
            let values = summaries.values
            let ok = try #require(values.first { $0.status == 200 })
            #expect(ok.method == "POST")
            #expect(ok.path == "/items")
            #expect(ok.requestBytes == request.utf8.count)
            #expect(ok.responseBytes > response.body.count)
            #expect(ok.duration > .zero && ok.duration < .seconds(5))
            #expect(ok.remoteAddress.hasPrefix("127.0.0.1:"))
            let error = try #require(values.first { $0.status == 400 })
            #expect(error.method == "-")
            #expect(server.statistics.completedRequests == 2)
        }
    }

    @Test("open-connection counter follows connects and disconnects")
    func connectionCounter() throws {
        try withTestServer { server in
            var clients: [RawHTTPClient] = []
            for _ in 0..<5 {
                let client = try RawHTTPClient(port: server.port)
                client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                _ = try client.readResponse()
                clients.append(client)
            }
            #expect(server.statistics.openConnections == 5)
            #expect(server.statistics.acceptedConnections == 5)
            clients.removeAll()
            #expect(waitUntil(timeout: 2) { server.statistics.openConnections == 0 })
            #expect(server.statistics.activeRequests == 0)
        }
    }
}

@Suite("Portable poll(2) backend")
struct PortablePollerTests {
    private func configure(_ configuration: inout HTTPServerConfiguration) {
        configuration.usesPortablePoller = true
        configuration.readTimeout = .milliseconds(300)
    }

    @Test("keep-alive, pipelining and large responses work with poll(2)")
    func basicExchange() throws {
        let big = String(repeating: "z", count: 3_000_000)
        let handler: HTTPServer.Handler = { request in
            request.path == "/big" ? .text(big) : echoHandler(request)
        }
        try withTestServer(configure: configure, handler: handler) { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().bodyText.contains("path=/1"))
            #expect(try client.readResponse().body.count == big.utf8.count)
            #expect(try client.readResponse().bodyText.contains("path=/2"))
        }
    }

    @Test("read timeout fires with poll(2)")
    func readTimeout() throws {
        try withTestServer(configure: configure) { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("GET / HTTP/1.1\r\n")
            #expect(try client.readResponse(timeout: 3).status == 408)
        }
    }
}

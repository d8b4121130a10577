@testable import HTTPServer
import Testing

@testable import SyncServer

@Suite("Keep-alive and pipelining")
struct KeepAliveTests {
    @Test("several sequential requests share one connection")
    func sequentialRequests() throws {
        try withTestServer { server in
            let client = try RawHTTPClient(port: server.port)
            for index in 0..<10 {
                client.send("GET /seq/\(index) HTTP/1.1\r\nHost: x\r\n\r\n")
                let response = try client.readResponse()
                #expect(response.status == 200)
                #expect(response.header("Connection") == nil)
                #expect(response.bodyText.contains("path=/seq/\(index)"))
            }
            #expect(server.statistics.acceptedConnections == 1)
        }
    }

    @Test("pipelined requests are answered in order")
    func pipelinedRequests() throws {
        try withTestServer { server in
            let client = try RawHTTPClient(port: server.port)
            var batch = ""
            for index in 0..<20 {
                batch += index % 2 == 0
                    ? "GET /p/\(index) HTTP/1.1\r\nHost: x\r\n\r\n"
                    : "POST /p/\(index) HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n\(index % 10)!"
            }
            client.send(batch)
            for index in 0..<20 {
                let response = try client.readResponse()
                #expect(response.bodyText.contains("path=/p/\(index)\n"))
            }
        }
    }

    @Test("Connection: close is honoured after the response")
    func connectionClose() throws {
        try withTestServer { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.header("Connection") == "close")
            #expect(client.waitForClose())
        }
    }

    @Test("a handler can ask to close the connection")
    func handlerRequestsClose() throws {
        try withTestServer(handler: { _ in HTTPResponse(status: .ok, headers: ["Connection": "close"]) }) { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().header("Connection") == "close")
            #expect(client.waitForClose())
        }
    }

    @Test("HTTP/1.0 closes by default and keeps alive only when asked")
    func http10() throws {
        try withTestServer { server in
            let plain = try RawHTTPClient(port: server.port)
            plain.send("GET / HTTP/1.0\r\n\r\n")
            #expect(try plain.readResponse().header("Connection") == "close")
            #expect(plain.waitForClose())

            let keepAlive = try RawHTTPClient(port: server.port)
            keepAlive.send("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(try keepAlive.readResponse().header("Connection") == "keep-alive")
            keepAlive.send("GET /b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(try keepAlive.readResponse().bodyText.contains("path=/b"))
        }
    }

    @Test("requests sent before a half-close are still answered")
    func halfClose() throws {
        try withTestServer { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n")
            client.shutdownWrite()
            #expect(try client.readResponse().bodyText.contains("path=/1"))
            #expect(try client.readResponse().bodyText.contains("path=/2"))
            #expect(client.waitForClose())
        }
    }
}

import Foundation
@testable import HTTPServer
import Testing

@testable import SyncServer

@Suite("Basic requests")
struct BasicRequestTests {
    @Test("GET returns the handler's response with Content-Length")
    func simpleGet() throws {
        try withTestServer { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("GET /hello%20world?name=J%C3%BCrgen&tag=a&tag=b+c&flag HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.header("Content-Length") == String(response.body.count))
            #expect(response.header("Content-Type") == "text/plain; charset=utf-8")
            #expect(response.header("Date") != nil)
            let lines = response.bodyText.split(separator: "\n").map(String.init)
            #expect(lines.contains("method=GET"))
            #expect(lines.contains("path=/hello world"))
            #expect(lines.contains("version=HTTP/1.1"))
            #expect(lines.contains("query:name=Jürgen"))
            #expect(lines.contains("query:tag=a"))
            #expect(lines.contains("query:tag=b c"))
            #expect(lines.contains("query:flag="))
        }
    }

    @Test("POST with Content-Length delivers the body")
    func postWithContentLength() throws {
        try withTestServer { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("POST /items HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello world")
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.bodyText.contains("method=POST"))
            #expect(response.bodyText.contains("body=hello world"))
        }
    }

    @Test("a body split across many writes is reassembled before the handler runs")
    func bodyInPieces() throws {
        try withTestServer { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("POST /p HTTP/1.1\r\nHost: x\r\nContent-Len")
            usleep(20_000)
            client.send("gth: 6\r\n\r\nab")
            usleep(20_000)
            client.send("cdef")
            let response = try client.readResponse()
            #expect(response.bodyText.contains("body=abcdef"))
        }
    }

    @Test("request metadata reaches the handler: headers, remote address, absolute-form target")
    func requestMetadata() throws {
        let handler: HTTPServer.Handler = { request in
            .text(
                [
                    request.headers["x-token"] ?? "nil",
                    request.headers.values(for: "X-Multi").joined(separator: "|"),
                    request.remoteAddress.hasPrefix("127.0.0.1:") ? "loopback" : request.remoteAddress,
                    request.path,
                    request.queryValue("q") ?? "nil",
                ].joined(separator: ";"))
        }
        try withTestServer(handler: handler) { server in
            let client = try RawHTTPClient(port: server.port)
            client.send(
                "GET http://example.com/abs/path?q=1 HTTP/1.1\r\nHost: example.com\r\nX-Token:  secret \r\n"
                    + "x-multi: a\r\nX-MULTI: b\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.bodyText == "secret;a|b;loopback;/abs/path;1")
        }
    }

    @Test("HEAD gets Content-Length but no body")
    func headRequest() throws {
        try withTestServer(handler: { _ in .text("twelve bytes") }) { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("HEAD / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n")
            let head = try client.readResponse(isHeadRequest: true)
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == "12")
            // The next response must start right after the head: proof no body bytes were sent.
            let get = try client.readResponse()
            #expect(get.bodyText == "twelve bytes")
        }
    }

    @Test("JSON convenience encodes and labels the body; 204 carries no Content-Length")
    func jsonAndNoContent() throws {
        struct Item: Codable, Equatable { var id: Int; var name: String }
        let handler: HTTPServer.Handler = { request in
            request.path == "/none" ? HTTPResponse(status: .noContent) : .json(status: .created, Item(id: 7, name: "x"))
        }
        try withTestServer(handler: handler) { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("GET /item HTTP/1.1\r\nHost: x\r\n\r\nGET /none HTTP/1.1\r\nHost: x\r\n\r\n")
            let created = try client.readResponse()
            #expect(created.status == 201)
            #expect(created.header("Content-Type") == "application/json")
            #expect(try JSONDecoder().decode(Item.self, from: Data(created.body)) == Item(id: 7, name: "x"))
            let empty = try client.readResponse()
            #expect(empty.status == 204)
            #expect(empty.header("Content-Length") == nil)
        }
    }

    @Test("handler-supplied framing fields and header injection are neutralised")
    func handlerCannotBreakFraming() throws {
        let handler: HTTPServer.Handler = { _ in
            var response = HTTPResponse.text("abc")
            response.headers["Content-Length"] = "999"
            response.headers["Transfer-Encoding"] = "chunked"
            response.headers["X-Evil"] = "a\r\nSet-Cookie: injected"
            response.headers["X-Fine"] = "ok"
            return response
        }
        try withTestServer(handler: handler) { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.header("Content-Length") == "3")
            #expect(response.header("Transfer-Encoding") == nil)
            #expect(response.header("Set-Cookie") == nil)
            #expect(response.header("X-Evil") == nil)
            #expect(response.header("X-Fine") == "ok")
            #expect(response.bodyText == "abc")
        }
    }

    @Test("Expect: 100-continue gets an interim response before the body is sent")
    func expectContinue() throws {
        try withTestServer { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("PUT /u HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n")
            let interim = try client.readResponse()
            #expect(interim.status == 100)
            client.send("xyz")
            let final = try client.readResponse()
            #expect(final.status == 200)
            #expect(final.bodyText.contains("body=xyz"))
        }
    }
}

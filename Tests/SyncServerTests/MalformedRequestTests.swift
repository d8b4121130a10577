import Testing

@testable import SyncServer

@Suite("Malformed requests")
struct MalformedRequestTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var request: String
        var status: Int
        var messageFragment: String
        var testDescription: String { "\(status): \(messageFragment)" }
    }

    static let cases: [Case] = [
        Case(request: "GARBAGE\r\n\r\n", status: 400, messageFragment: "malformed request line"),
        Case(request: "GET /\r\nHost: x\r\n\r\n", status: 400, messageFragment: "malformed request line"),
        Case(request: "GET  / HTTP/1.1\r\nHost: x\r\n\r\n", status: 400, messageFragment: "malformed request line"),
        Case(request: "G(T / HTTP/1.1\r\nHost: x\r\n\r\n", status: 400, messageFragment: "invalid method"),
        Case(request: "GET / HTTX/1.1\r\nHost: x\r\n\r\n", status: 400, messageFragment: "HTTP version"),
        Case(request: "GET / HTTP/2.0\r\nHost: x\r\n\r\n", status: 505, messageFragment: "HTTP/1.x"),
        Case(request: "GET nope HTTP/1.1\r\nHost: x\r\n\r\n", status: 400, messageFragment: "request target"),
        Case(request: "GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n", status: 400, messageFragment: "percent-encoding"),
        Case(request: "GET /%C3%28 HTTP/1.1\r\nHost: x\r\n\r\n", status: 400, messageFragment: "percent-encoding"),
        Case(request: "GET / HTTP/1.1\r\n\r\n", status: 400, messageFragment: "missing Host"),
        Case(request: "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", status: 400, messageFragment: "multiple Host"),
        Case(request: "GET / HTTP/1.1\r\nHost: x\r\nBad Header: v\r\n\r\n", status: 400, messageFragment: "field name"),
        Case(request: "GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", status: 400, messageFragment: "without ':'"),
        Case(request: "GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n folded\r\n\r\n", status: 400, messageFragment: "folding"),
        Case(request: "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\u{01}b\r\n\r\n", status: 400, messageFragment: "field value"),
        Case(request: "GET / HTTP/1.1\r\nHost: x\rX: y\r\n\r\n", status: 400, messageFragment: "bare CR"),
        Case(
            request: "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            status: 400, messageFragment: "both Content-Length and Transfer-Encoding"),
        Case(
            request: "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
            status: 400, messageFragment: "conflicting Content-Length"),
        Case(request: "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", status: 400, messageFragment: "invalid Content-Length"),
        Case(request: "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1e3\r\n\r\n", status: 400, messageFragment: "invalid Content-Length"),
        Case(
            request: "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            status: 501, messageFragment: "only the chunked"),
        Case(
            request: "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
            status: 400, messageFragment: "must end with chunked"),
    ]

    @Test("malformed input gets a clear error and the connection closes", arguments: cases)
    func malformed(testCase: Case) throws {
        try withTestServer { server in
            let client = try RawHTTPClient(port: server.port)
            client.send(testCase.request)
            let response = try client.readResponse()
            #expect(response.status == testCase.status)
            #expect(response.header("Connection") == "close")
            #expect(response.bodyText.contains(testCase.messageFragment), "body: \(response.bodyText)")
            #expect(client.waitForClose())
        }
    }

    @Test("identical repeated Content-Length values are accepted")
    func repeatedIdenticalContentLength() throws {
        try withTestServer { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok")
            #expect(try client.readResponse().bodyText.contains("body=ok"))
        }
    }

    @Test("an error after a good pipelined request still answers the good one first")
    func errorAfterGoodRequest() throws {
        try withTestServer { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("GET /ok HTTP/1.1\r\nHost: x\r\n\r\nBROKEN\r\n\r\n")
            #expect(try client.readResponse().status == 200)
            #expect(try client.readResponse().status == 400)
            #expect(client.waitForClose())
        }
    }
}

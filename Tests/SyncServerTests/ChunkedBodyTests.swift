@testable import HTTPServer
import Testing

@testable import SyncServer

@Suite("Chunked request bodies")
struct ChunkedBodyTests {
    @Test("chunks are reassembled; extensions ignored; trailers accepted and discarded")
    func chunkedBody() throws {
        let handler: HTTPServer.Handler = { request in
            .text("\(String(decoding: request.body, as: UTF8.self))|trailer=\(request.headers["X-Trailer"] ?? "none")")
        }
        try withTestServer(handler: handler) { server in
            let client = try RawHTTPClient(port: server.port)
            client.send(
                "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "5;name=value\r\nhello\r\n"
                    + "1\r\n \r\n"
                    + "A\r\n0123456789\r\n"
                    + "0\r\nX-Trailer: t\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.bodyText == "hello 0123456789|trailer=none")
        }
    }

    @Test("a chunked body sent byte by byte is decoded")
    func chunkedBodyByteByByte() throws {
        try withTestServer { server in
            let client = try RawHTTPClient(port: server.port)
            let request = "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
            for byte in request.utf8 { client.send([byte]) }
            let response = try client.readResponse()
            #expect(response.bodyText.contains("body=abcde"))
        }
    }

    @Test("the connection stays usable after a chunked request", arguments: [true, false])
    func keepAliveAfterChunked(pipelined: Bool) throws {
        try withTestServer { server in
            let client = try RawHTTPClient(port: server.port)
            let first = "POST /one HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"
            let second = "GET /two HTTP/1.1\r\nHost: x\r\n\r\n"
            if pipelined {
                client.send(first + second)
            } else {
                client.send(first)
            }
            #expect(try client.readResponse().bodyText.contains("path=/one"))
            if !pipelined { client.send(second) }
            #expect(try client.readResponse().bodyText.contains("path=/two"))
        }
    }

    @Test(
        "malformed chunk framing gets 400 and the connection closes",
        arguments: [
            "zz\r\nhello\r\n0\r\n\r\n",  // not hex
            "\r\nhello\r\n0\r\n\r\n",  // empty size
            "5\r\nhelloXX0\r\n\r\n",  // data not followed by CRLF
            "5 x\r\nhello\r\n0\r\n\r\n",  // junk after size
            "fffffffffffffffffff\r\n",  // overflow
            "-1\r\nx\r\n0\r\n\r\n",  // negative
        ])
    func badChunk(chunks: String) throws {
        try withTestServer { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks)
            let response = try client.readResponse()
            #expect(response.status == 400)
            #expect(response.header("Connection") == "close")
            #expect(response.bodyText.contains("chunk"))
            #expect(client.waitForClose())
        }
    }
}

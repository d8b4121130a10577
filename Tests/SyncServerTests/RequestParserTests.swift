import Foundation
@testable import HTTPServer
import Testing

@testable import SyncServer

@Suite("Request parser")
struct RequestParserTests {
    static let limits = HTTPRequestParser.Limits(maxHeadBytes: 1024, maxBodyBytes: 1024, maxHeaderCount: 20)

    private func feed(_ parser: inout HTTPRequestParser, _ text: String) {
        Array(text.utf8).withUnsafeBytes { parser.append($0) }
    }

    @Test("every split point of a pipelined stream yields the same requests")
    func everySplitPoint() throws {
        let stream = "POST /a?x=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
            + "\r\nGET /b HTTP/1.1\nHost: h\n\n"
            + "PUT /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\nhi\r\n0\r\nT: 1\r\n\r\n"
        let bytes = Array(stream.utf8)
        for split in 0...bytes.count {
            var parser = HTTPRequestParser(limits: Self.limits)
            var requests: [HTTPRequestParser.ParsedRequest] = []
            for part in [bytes[0..<split], bytes[split...]] {
                part.withUnsafeBytes { parser.append($0) }
                while let request = try parser.nextAdmittedRequest() { requests.append(request) }
            }
            #expect(requests.map(\.method.rawValue) == ["POST", "GET", "PUT"], "split at \(split)")
            #expect(requests.map(\.path) == ["/a", "/b", "/c"])
            #expect(requests.map { String(decoding: $0.body, as: UTF8.self) } == ["abc", "", "hi"])
            #expect(requests.first?.queryItems == [HTTPRequest.QueryItem(name: "x", value: "1")])
            #expect(!parser.hasPartialRequest)
        }
    }

    @Test("wire byte counts include framing")
    func wireByteCount() throws {
        var parser = HTTPRequestParser(limits: Self.limits)
        let head = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
        let body = "3\r\nabc\r\n0\r\n\r\n"
        feed(&parser, head + body)
        let request = try #require(try parser.nextAdmittedRequest())
        #expect(request.wireByteCount == head.utf8.count + body.utf8.count)
    }

    @Test("partial-request tracking distinguishes head, body and idle")
    func partialTracking() throws {
        var parser = HTTPRequestParser(limits: Self.limits)
        feed(&parser, "\r\n")
        #expect(try parser.nextAdmittedRequest() == nil)
        #expect(!parser.hasPartialRequest)
        feed(&parser, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n")
        #expect(try parser.nextAdmittedRequest() == nil)
        #expect(parser.hasPartialRequest && !parser.isReceivingBody)
        feed(&parser, "\r\na")
        #expect(try parser.nextAdmittedRequest() == nil)
        #expect(parser.isReceivingBody)
        feed(&parser, "b")
        #expect(try parser.nextAdmittedRequest() != nil)
        #expect(!parser.hasPartialRequest)
    }

    @Test("errors are sticky: the parser never resynchronises after bad framing")
    func stickyErrors() {
        var parser = HTTPRequestParser(limits: Self.limits)
        feed(&parser, "BAD\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(throws: HTTPParseError.self) { try parser.nextAdmittedRequest() }
        #expect(throws: HTTPParseError.self) { try parser.nextAdmittedRequest() }
    }

    @Test("a head exactly at the limit is accepted, one byte more is 431")
    func headLimitBoundary() throws {
        let base = "GET / HTTP/1.1\r\nHost: h\r\nX: \r\n\r\n"
        let padding = Self.limits.maxHeadBytes - base.utf8.count
        let exact = "GET / HTTP/1.1\r\nHost: h\r\nX: \(String(repeating: "v", count: padding))\r\n\r\n"
        var parser = HTTPRequestParser(limits: Self.limits)
        feed(&parser, exact)
        #expect(try parser.nextAdmittedRequest() != nil)

        var over = HTTPRequestParser(limits: Self.limits)
        feed(&over, exact.replacingOccurrences(of: "X: v", with: "X: vv"))
        #expect(throws: HTTPParseError.headersTooLarge(limit: Self.limits.maxHeadBytes)) { try over.nextAdmittedRequest() }
    }

    @Test("percent-decoding of paths and queries")
    func targetDecoding() throws {
        let decoded = try RequestTargetDecoder.decode(ArraySlice("/a%2Fb/%E2%9C%93?k%20=v+w&empty=&x".utf8))
        #expect(decoded.path == "/a/b/✓")
        #expect(decoded.queryItems.map(\.name) == ["k ", "empty", "x"])
        #expect(decoded.queryItems.map(\.value) == ["v w", "", ""])
        #expect(try RequestTargetDecoder.decode(ArraySlice("*".utf8)).path == "*")
        #expect(try RequestTargetDecoder.decode(ArraySlice("https://h:1".utf8)).path == "/")
        #expect(throws: HTTPParseError.self) { try RequestTargetDecoder.decode(ArraySlice("/%4".utf8)) }
        #expect(throws: HTTPParseError.self) { try RequestTargetDecoder.decode(ArraySlice("/a#frag".utf8)) }
    }

    @Test("headers are case-insensitive, ordered and support list tokens")
    func headerLookup() {
        var headers: HTTPHeaders = ["Content-Type": "a", "X-List": "one, Two", "x-list": "three"]
        #expect(headers["content-type"] == "a")
        #expect(headers.values(for: "X-LIST") == ["one, Two", "three"])
        #expect(headers.containsToken("two", in: "x-list"))
        #expect(!headers.containsToken("tw", in: "x-list"))
        headers["X-List"] = "only"
        #expect(headers.values(for: "x-list") == ["only"])
        headers["x-list"] = nil
        #expect(!headers.contains("X-List"))
        #expect(headers.count == 1)
    }

    @Test("the cached Date header uses IMF-fixdate")
    func dateFormat() {
        #expect(String(decoding: HTTPDateCache.format(784_111_777), as: UTF8.self) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }
}

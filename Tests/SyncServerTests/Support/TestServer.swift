import Foundation
@testable import HTTPServer
import TestSupport
import Testing

@testable import SyncServer

/// Runs `body` against a server started on an ephemeral loopback port, then shuts it down and
/// checks that shutdown actually completes.
func withTestServer<Result>(
    configure: (inout HTTPServerConfiguration) -> Void = { _ in },
    admission: HTTPServer.Admission? = nil,
    handler: @escaping HTTPServer.Handler = echoHandler,
    _ body: (HTTPServer) throws -> Result
) throws -> Result {
    var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
    configuration.workerCount = 2
    configure(&configuration)
    let server = HTTPServer(configuration: configuration, admission: admission, handler: handler)
    try server.start()
    defer {
        server.shutdown(gracePeriod: .milliseconds(500))
        let stopped = waitUntil(timeout: 5) { server.hasStopped }
        #expect(stopped, "server did not stop after shutdown")
    }
    return try body(server)
}

/// Echoes what the server parsed, so tests can check parsing end to end.
let echoHandler: HTTPServer.Handler = { request in
    var lines = [
        "method=\(request.method)",
        "path=\(request.path)",
        "version=\(request.version)",
        "body=\(String(decoding: request.body, as: UTF8.self))",
    ]
    for item in request.queryItems { lines.append("query:\(item.name)=\(item.value)") }
    return .text(lines.joined(separator: "\n"))
}

extension HTTPRequestParser {
    /// The next complete request, admitting every body as the server does without an admission
    /// check; for tests that drive the parser alone.
    mutating func nextAdmittedRequest() throws(HTTPParseError) -> ParsedRequest? {
        while true {
            if let request = try nextRequest() { return request }
            guard headAwaitingAdmission(remoteAddress: "") != nil else { return nil }
            admitBody()
        }
    }
}

/// Thread-safe collector for values produced on server threads.
final class Collector<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `items` is only accessed while holding `lock`.
    private let lock = NSLock()
    private var items: [Value] = []

    func append(_ value: Value) {
        lock.lock()
        items.append(value)
        lock.unlock()
    }

    var values: [Value] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
}

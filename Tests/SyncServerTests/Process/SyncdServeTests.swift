import Foundation
import TestSupport
import Testing

@testable import SyncServer

/// `syncd serve` as its own process, as operators run it: what only the real executable shows,
/// namely its stderr (access lines are written by a background thread) and a revocation
/// committed by a second `syncd` process while it runs.
@Suite(.serialized)
final class SyncdServeTests {
    // Declared first so the server stops before its directory is removed.
    let server: SyncdServer
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory(prefix: "syncd-serve")
        server = SyncdServer(dataDirectory: directory.file("data"))
        try server.start()
    }

    var port: UInt16 { server.port }
    var lines: [Substring] { server.logLines }

    func get(_ path: String, token: String? = nil, on client: RawHTTPClient) throws -> Int {
        let authorization = token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
        #expect(client.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\(authorization)\r\n"))
        return try client.readResponse().status
    }

    @Test func accessLinesAppearPromptlyAndNoneIsLostAtShutdown() throws {
        let client = try RawHTTPClient(port: port)
        #expect(try get("/health", on: client) == 200)
        // Written by the log thread without any flush from the request path.
        #expect(waitUntil(timeout: 1) { self.lines.contains { $0.contains(" GET /health 200 ") } })

        let requests = 300
        for index in 0..<requests {
            #expect(try get("/health?n=\(index)", on: client) == 200)
        }
        #expect(server.stop(signal: SIGTERM))
        let lines = self.lines
        #expect(lines.filter { $0.contains(" GET /health 200 ") }.count == requests + 1)
        #expect(lines.last == "syncd: stopped", "\(lines.suffix(3))")
        #expect(lines.allSatisfy { !$0.contains("GET /health") || $0.hasSuffix("ms") }, "a line was cut or merged")
    }

    @Test func aTokenRevokedByAnotherProcessIsRefusedWithinASecond() throws {
        let data = server.dataDirectory
        let added = try ProductProcess.run(product: "syncd", ["token", "add", "--dataset", "main", "--data", data])
        #expect(added.status == 0, "\(added.standardError)")
        let token = added.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        let client = try RawHTTPClient(port: port)
        // Authorized, and the token is now cached: 404 schema_not_registered, not 401.
        for _ in 0..<3 { #expect(try get("/v1/datasets/main/changesets", token: token, on: client) == 404) }

        let revoked = try ProductProcess.run(product: "syncd", ["token", "revoke", String(TokenStore.hash(token).prefix(16)), "--data", data])
        #expect(revoked.status == 0, "\(revoked.standardError)")
        let start = Date()
        var status = 0
        while Date().timeIntervalSince(start) < 5 {
            status = try get("/v1/datasets/main/changesets", token: token, on: client)
            if status == 401 { break }
            usleep(5_000)
        }
        let seconds = Date().timeIntervalSince(start)
        #expect(status == 401)
        #expect(seconds < 1, "a revoked token was accepted for \(seconds) s")
    }
}

import Foundation
import Testing

@testable import SyncServer

/// `syncd serve` as its own process, as operators run it: what only the real executable shows,
/// namely its stderr (access lines are written by a background thread) and a revocation
/// committed by a second `syncd` process while it runs.
@Suite(.serialized)
final class SyncdServeTests {
    let directory: URL
    let output: URL
    let process: Process
    let port: UInt16

    init() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("syncd-serve-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let output = directory.appendingPathComponent("stderr.log")
        let process = try SyncdExecutable.start(
            ["serve", "--data", directory.appendingPathComponent("data").path, "--host", "127.0.0.1", "--port", "0"], output: output)
        var port: UInt16?
        _ = waitUntil(timeout: 30) {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("syncd listening on http://127.0.0.1:") }),
                  let value = line.split(separator: ":").last.flatMap({ UInt16($0) }) else { return false }
            port = value
            return true
        }
        guard let port else {
            process.terminate()
            throw SyncdExecutable.ProcessError("syncd did not report listening: \((try? String(contentsOf: output, encoding: .utf8)) ?? "")")
        }
        self.directory = directory
        self.output = output
        self.process = process
        self.port = port
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    var lines: [Substring] {
        ((try? String(contentsOf: output, encoding: .utf8)) ?? "").split(separator: "\n")
    }

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
        process.terminate()
        #expect(waitUntil(timeout: 15) { !self.process.isRunning })
        let lines = self.lines
        #expect(lines.filter { $0.contains(" GET /health 200 ") }.count == requests + 1)
        #expect(lines.last == "syncd: stopped", "\(lines.suffix(3))")
        #expect(lines.allSatisfy { !$0.contains("GET /health") || $0.hasSuffix("ms") }, "a line was cut or merged")
    }

    @Test func aTokenRevokedByAnotherProcessIsRefusedWithinASecond() throws {
        let data = directory.appendingPathComponent("data").path
        let added = try SyncdExecutable.run(["token", "add", "--dataset", "main", "--data", data])
        #expect(added.status == 0, "\(added.output)")
        let token = added.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let client = try RawHTTPClient(port: port)
        // Authorized, and the token is now cached: 404 schema_not_registered, not 401.
        for _ in 0..<3 { #expect(try get("/v1/datasets/main/changesets", token: token, on: client) == 404) }

        let revoked = try SyncdExecutable.run(["token", "revoke", String(TokenStore.hash(token).prefix(16)), "--data", data])
        #expect(revoked.status == 0, "\(revoked.output)")
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

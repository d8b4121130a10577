import Foundation
@testable import HTTPServer
import TestSupport
import Testing

@testable import SyncServer

@Suite("Graceful shutdown")
struct ShutdownTests {
    @Test("an in-flight slow request completes, idle connections close, then wait() returns")
    func inFlightRequestCompletes() throws {
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.workerCount = 2
        let started = Collector<Bool>()
        let server = HTTPServer(configuration: configuration) { _ in
            started.append(true)
            usleep(300_000)
            return .text("slow done")
        }
        try server.start()

        let idle = try RawHTTPClient(port: server.port)
        let busy = try RawHTTPClient(port: server.port)
        busy.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(waitUntil(timeout: 2) { !started.values.isEmpty })

        let shutdownStart = Date()
        server.shutdown(gracePeriod: .seconds(5))
        let response = try busy.readResponse()
        #expect(response.bodyText == "slow done")
        #expect(response.header("Connection") == "close")
        #expect(busy.waitForClose())
        #expect(idle.waitForClose())

        let stopped = Collector<Bool>()
        let waiter = Thread {
            server.wait()
            stopped.append(true)
        }
        waiter.start()
        #expect(waitUntil(timeout: 3) { !stopped.values.isEmpty })
        #expect(Date().timeIntervalSince(shutdownStart) < 3)

        // The listener is gone: new connections are refused by the kernel.
        #expect(throws: RawClientError.self) { try RawHTTPClient(port: server.port) }
    }

    @Test("the grace period bounds shutdown even if a handler hangs")
    func gracePeriodBoundsShutdown() throws {
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.workerCount = 2
        let server = HTTPServer(configuration: configuration) { _ in
            usleep(2_000_000)
            return .text("too late")
        }
        try server.start()
        let client = try RawHTTPClient(port: server.port)
        client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        usleep(100_000)
        let start = Date()
        server.shutdown(gracePeriod: .milliseconds(200))
        #expect(waitUntil(timeout: 1.5) { server.hasStopped })
        #expect(Date().timeIntervalSince(start) < 1.5)
        // The hung handler eventually returns and its worker closes the connection.
        #expect(client.waitForClose(timeout: 4))
    }

    @Test("shutdown of a server with no connections returns promptly")
    func shutdownWhenIdle() throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0)) { _ in .text("") }
        try server.start()
        #expect(server.port != 0)
        server.shutdown()
        #expect(waitUntil(timeout: 1) { server.hasStopped })
    }

    @Test("a partially received request may finish during the grace period")
    func partialRequestFinishes() throws {
        try withTestServer { server in
            let client = try RawHTTPClient(port: server.port)
            client.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab")
            usleep(100_000)
            server.shutdown(gracePeriod: .seconds(3))
            usleep(100_000)
            client.send("cd")
            let response = try client.readResponse()
            #expect(response.bodyText.contains("body=abcd"))
            #expect(response.header("Connection") == "close")
        }
    }

    @Test("binding a port that is in use fails with a descriptive error")
    func bindFailure() throws {
        try withTestServer { server in
            let second = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: server.port)) { _ in
                .text("")
            }
            #expect(throws: HTTPServerError.self) { try second.start() }
            let invalid = HTTPServer(configuration: HTTPServerConfiguration(host: "localhost", port: 0)) { _ in .text("") }
            #expect(throws: HTTPServerError.invalidAddress("localhost")) { try invalid.start() }
        }
    }
}

import Foundation
import Synchronization
@testable import LocalStore
@testable import SyncKit

// Entities of the end-to-end tests: a team with ordered members (cascade), a self-referencing
// manager/reports pair (deny), and labels many-to-many (nullify).

@Entity final class Squad {
    var name: String = ""
    var score: Int = 0
    @Relationship(inverse: "squad", deleteRule: .cascade) var players: [Player] = []
}

@Entity final class Player {
    var name: String = ""
    @Relationship(inverse: "players", deleteRule: .nullify) var squad: Squad?
    @Relationship(inverse: "reports", deleteRule: .nullify) var coach: Player?
    @Relationship(inverse: "coach", deleteRule: .deny) var reports: Set<Player> = []
    @Relationship(inverse: "players", deleteRule: .nullify) var badges: Set<Badge> = []
}

@Entity final class Badge {
    var title: String = ""
    @Relationship(inverse: "badges", deleteRule: .nullify) var players: Set<Player> = []
}

let endToEndEntities: [any PersistentEntity.Type] = [Squad.self, Player.self, Badge.self]

/// Where `swift build` put the executables: next to the test bundle.
let productsDirectory: URL = {
    var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    while url.pathComponents.count > 1 && !FileManager.default.fileExists(atPath: url.appendingPathComponent("syncd").path) {
        url.deleteLastPathComponent()
    }
    return url
}()

/// Output of a finished process.
struct ProcessResult {
    var status: Int32
    var standardOutput: String
    var standardError: String
}

/// Runs an executable from the build products to completion (bounded by `timeout`). Output goes
/// to temporary files, so a chatty process can never block on a full pipe.
func runProduct(_ name: String, _ arguments: [String], timeout: TimeInterval = 60) throws -> ProcessResult {
    let base = FileManager.default.temporaryDirectory.appendingPathComponent("e2e-output-\(UUID().uuidString)")
    let outputURL = base.appendingPathExtension("out"), errorURL = base.appendingPathExtension("err")
    _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
    defer {
        try? FileManager.default.removeItem(at: outputURL)
        try? FileManager.default.removeItem(at: errorURL)
    }
    let process = Process()
    process.executableURL = productsDirectory.appendingPathComponent(name)
    process.arguments = arguments
    process.standardOutput = try FileHandle(forWritingTo: outputURL)
    process.standardError = try FileHandle(forWritingTo: errorURL)
    try process.run()
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
    if process.isRunning {
        process.terminate()
        throw EndToEndError("\(name) \(arguments.joined(separator: " ")) did not finish in \(timeout) s")
    }
    process.waitUntilExit()
    return ProcessResult(status: process.terminationStatus,
                         standardOutput: (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "",
                         standardError: (try? String(contentsOf: errorURL, encoding: .utf8)) ?? "")
}

struct EndToEndError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A real `syncd serve` process on a loopback port, with its own data directory.
final class SyncdProcess {
    let dataDirectory: String
    private(set) var port: UInt16 = 0
    private var process: Process?
    private let stderrLines = LineBuffer()

    init(dataDirectory: String) { self.dataDirectory = dataDirectory }

    var url: String { "http://127.0.0.1:\(port)" }

    /// Starts the server (on `port`, or an ephemeral one) and waits for its "listening" line.
    func start(port requested: UInt16 = 0) throws {
        let process = Process()
        process.executableURL = productsDirectory.appendingPathComponent("syncd")
        process.arguments = ["serve", "--data", dataDirectory, "--host", "127.0.0.1", "--port", String(requested)]
        let error = Pipe()
        process.standardError = error
        process.standardOutput = FileHandle.nullDevice
        let lines = stderrLines
        error.fileHandleForReading.readabilityHandler = { handle in
            lines.append(String(decoding: handle.availableData, as: UTF8.self))
        }
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let line = stderrLines.lines.first(where: { $0.contains("listening on http://") }),
               let portText = line.split(separator: ":").last, let value = UInt16(portText.trimmingCharacters(in: .whitespaces)) {
                port = value
                stderrLines.removeAll()
                return
            }
            guard process.isRunning else { throw EndToEndError("syncd exited at start: \(stderrLines.lines)") }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw EndToEndError("syncd did not report listening within 30 s")
    }

    /// Stops the server with `signal` (SIGTERM: graceful; SIGKILL: a crash) and waits for it to exit.
    func stop(signal: Int32 = SIGTERM) {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(15)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        self.process = nil
    }

    deinit { stop(signal: SIGKILL) }
}

/// Lines a process writes to stderr, collected from the pipe's reader thread.
final class LineBuffer: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []

    var lines: [String] { lock.withLock { stored } }
    func append(_ text: String) { lock.withLock { stored += text.split(separator: "\n").map(String.init) } }
    func removeAll() { lock.withLock { stored.removeAll() } }
}

/// Every row of every entity and join table of a store file, sorted, as text.
func storeDigest(_ path: String) throws -> String {
    let connection = try SQLiteConnection(path: path)
    var lines: [String] = []
    for table in try connection.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite%' ORDER BY name") {
        guard case .text(let name) = table[0] else { continue }
        for row in try connection.rows("SELECT * FROM \"\(name)\" ORDER BY 1, 2") {
            lines.append(name + ": " + row.map(\.description).joined(separator: " | "))
        }
    }
    return lines.joined(separator: "\n")
}

/// A temporary directory removed when the value goes away.
final class TemporaryDirectory {
    let path: String
    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("e2e-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }
}

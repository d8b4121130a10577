import Foundation

/// Runs the built `sync` binary as a process.
struct CLIRunner {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    let binary: URL
    let environment: [String: String]
    /// Seconds a command may run before it is killed and the test fails.
    var timeout: TimeInterval = 60

    /// Finds `sync` next to the test bundle (`.build/<triple>/debug/`); `SYNC_BINARY` overrides.
    static func locate() throws -> URL {
        if let override = ProcessInfo.processInfo.environment["SYNC_BINARY"] { return URL(fileURLWithPath: override) }
        var starts = Bundle.allBundles.map(\.bundleURL).filter { $0.pathExtension == "xctest" }
        starts.append(Bundle.main.bundleURL)
        if let executable = Bundle.main.executableURL { starts.append(executable.deletingLastPathComponent()) }
        starts.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        for start in starts {
            var directory = start.standardizedFileURL
            for _ in 0..<4 {
                let candidate = directory.appendingPathComponent("sync")
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                   FileManager.default.isExecutableFile(atPath: candidate.path) {
                    return candidate
                }
                directory = directory.deletingLastPathComponent()
            }
        }
        throw CLIRunnerError(message: "no 'sync' binary near \(starts.map(\.path)); build it or set SYNC_BINARY")
    }

    init(environment: [String: String] = [:]) throws {
        binary = try CLIRunner.locate()
        self.environment = environment
    }

    /// Runs `sync arguments...` in `directory` and waits for it.
    func run(_ arguments: [String], in directory: URL? = nil, environment extra: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["SYNC_STORE"] = nil
        for (key, value) in self.environment.merging(extra, uniquingKeysWith: { $1 }) { environment[key] = value }
        process.environment = environment
        if let directory { process.currentDirectoryURL = directory }
        // Output goes to files, not pipes, so a chatty process can never block on a full pipe.
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("sync-cli-\(UUID().uuidString)")
        let outURL = base.appendingPathExtension("out"), errURL = base.appendingPathExtension("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // A hung command fails its test instead of hanging the suite.
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            throw CLIRunnerError(message: "sync \(arguments.joined(separator: " ")) did not finish within \(Int(timeout)) s")
        }
        process.waitUntilExit()
        try out.close()
        try err.close()
        return Result(status: process.terminationStatus, stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
                      stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    func run(_ arguments: String..., in directory: URL? = nil, environment: [String: String] = [:]) throws -> Result {
        try run(arguments, in: directory, environment: environment)
    }
}

struct CLIRunnerError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}


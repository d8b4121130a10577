import Foundation

/// The `syncd` executable `swift build` put next to the test bundle, run as a separate process:
/// for what only another process can show (a revocation it commits, its stderr at exit).
enum SyncdExecutable {
    /// Where it is, or `nil` when it was not built (then the tests that need it fail, saying so).
    static let url: URL? = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while directory.pathComponents.count > 1 {
            directory.deleteLastPathComponent()
            let candidate = directory.appendingPathComponent("syncd")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }()

    struct Result {
        var status: Int32
        /// stdout followed by stderr.
        var output: String
    }

    /// Runs `syncd arguments` to completion (at most `timeout` seconds).
    static func run(_ arguments: [String], timeout: Double = 30) throws -> Result {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("syncd-output-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        let process = try start(arguments, output: output)
        guard waitUntil(timeout: timeout, { !process.isRunning }) else {
            process.terminate()
            throw ProcessError("syncd \(arguments.joined(separator: " ")) did not finish in \(timeout) s")
        }
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }

    /// Starts `syncd arguments` with stdout and stderr going to the file `output`.
    static func start(_ arguments: [String], output: URL) throws -> Process {
        guard let url else { throw ProcessError("syncd was not built") }
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return process
    }

    struct ProcessError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

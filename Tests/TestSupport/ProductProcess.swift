import Foundation

/// Runs a built product (`syncd`, `sync`, …) to completion.
public enum ProductProcess {
    /// Runs `executable arguments` and waits for it, at most `timeout` seconds (then it is killed
    /// and this throws). Output goes to temporary files, not pipes, so a chatty process can never
    /// block on a full pipe.
    public static func run(
        _ executable: URL, _ arguments: [String], in directory: URL? = nil,
        environment: [String: String?] = [:], timeout: TimeInterval = 60
    ) throws -> ProcessOutput {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("product-output-\(UUID().uuidString)")
        let outputURL = base.appendingPathExtension("out"), errorURL = base.appendingPathExtension("err")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outputURL)
            try? FileManager.default.removeItem(at: errorURL)
        }
        let output = try FileHandle(forWritingTo: outputURL), error = try FileHandle(forWritingTo: errorURL)
        defer {
            try? output.close()
            try? error.close()
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            var merged = ProcessInfo.processInfo.environment
            for (key, value) in environment { merged[key] = value }
            process.environment = merged
        }
        if let directory { process.currentDirectoryURL = directory }
        process.standardOutput = output
        process.standardError = error
        try process.run()
        guard waitUntil(timeout: timeout, { !process.isRunning }) else {
            process.terminate()
            process.waitUntilExit()
            throw ProductProcessError("\(executable.lastPathComponent) \(arguments.joined(separator: " ")) did not finish in \(timeout) s")
        }
        process.waitUntilExit()
        return ProcessOutput(
            status: process.terminationStatus,
            standardOutput: String(decoding: (try? Data(contentsOf: outputURL)) ?? Data(), as: UTF8.self),
            standardError: String(decoding: (try? Data(contentsOf: errorURL)) ?? Data(), as: UTF8.self))
    }

    /// Runs the built product `name` (see ``BuiltProduct``) to completion.
    public static func run(product name: String, _ arguments: [String], timeout: TimeInterval = 60) throws -> ProcessOutput {
        try run(BuiltProduct.url(named: name), arguments, timeout: timeout)
    }
}

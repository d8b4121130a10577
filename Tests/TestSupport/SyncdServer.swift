import Foundation

/// A real `syncd serve` process on a loopback port with its own data directory, as operators run
/// it; stdout and stderr go to ``logFile``.
public final class SyncdServer {
    /// The data directory passed to `--data`.
    public let dataDirectory: String
    /// Where the server's stdout and stderr go; emptied at each ``start(port:timeout:)``.
    public let logFile: URL
    /// The PostgreSQL database passed to `--database`; `nil`: the data directory's SQLite files.
    public let databaseURL: String?
    /// The port the server listens on, once started.
    public private(set) var port: UInt16 = 0
    /// More `syncd serve` options (limits such as `--max-body-bytes`), given at every start.
    public var extraArguments: [String] = []
    private var process: Process?

    /// A server for `dataDirectory` (and `databaseURL` when given); nothing runs until ``start(port:timeout:)``.
    public init(dataDirectory: String, databaseURL: String? = nil) {
        self.dataDirectory = dataDirectory
        self.databaseURL = databaseURL
        logFile = URL(fileURLWithPath: dataDirectory + "-syncd.log")
    }

    deinit {
        stop(signal: SIGKILL)
        try? FileManager.default.removeItem(at: logFile)
    }

    /// `http://127.0.0.1:<port>`.
    public var url: String { "http://127.0.0.1:\(port)" }

    /// Whether the process is running.
    public var isRunning: Bool { process?.isRunning ?? false }

    /// The log's lines so far.
    public var logLines: [Substring] {
        String(decoding: (try? Data(contentsOf: logFile)) ?? Data(), as: UTF8.self).split(separator: "\n")
    }

    /// Starts the server on `port` (0: an ephemeral one) and waits for its "listening" line.
    public func start(port requested: UInt16 = 0, timeout: Double = 30) throws {
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let log = try FileHandle(forWritingTo: logFile)
        defer { try? log.close() }
        let process = Process()
        process.executableURL = try BuiltProduct.url(named: "syncd")
        process.arguments = ["serve", "--data", dataDirectory, "--host", "127.0.0.1", "--port", String(requested)]
            + (databaseURL.map { ["--database", $0] } ?? []) + extraArguments
        process.standardOutput = log
        process.standardError = log
        try process.run()
        self.process = process
        var listening: UInt16?
        _ = waitUntil(timeout: timeout) {
            listening = logLines.lazy.compactMap { line -> UInt16? in
                guard line.hasPrefix("syncd listening on http://") else { return nil }
                return line.split(separator: ":").last.flatMap { UInt16($0.trimmingCharacters(in: .whitespaces)) }
            }.first
            return listening != nil || !process.isRunning
        }
        guard let listening else {
            stop(signal: SIGKILL)
            throw ProductProcessError("syncd did not report listening within \(timeout) s: \(logLines.joined(separator: "\n"))")
        }
        port = listening
    }

    /// Stops the server with `signal` (SIGTERM: graceful; SIGKILL: a crash) and waits up to
    /// `timeout` seconds for it to exit; returns whether it did.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, timeout: Double = 15) -> Bool {
        guard let process else { return true }
        if process.isRunning { kill(process.processIdentifier, signal) }
        let exited = waitUntil(timeout: timeout) { !process.isRunning }
        if exited {
            process.waitUntilExit()
            self.process = nil
        }
        return exited
    }
}

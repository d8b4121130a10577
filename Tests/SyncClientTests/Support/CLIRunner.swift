import Foundation
import TestSupport

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

    init(environment: [String: String] = [:]) throws {
        binary = try BuiltProduct.url(named: "sync", override: "SYNC_BINARY")
        self.environment = environment
    }

    /// Runs `sync arguments...` in `directory` and waits for it; a hung command fails its test
    /// instead of hanging the suite.
    func run(_ arguments: [String], in directory: URL? = nil, environment extra: [String: String] = [:]) throws -> Result {
        // The caller's SYNC_STORE must not leak into commands that test its absence.
        var environment: [String: String?] = ["SYNC_STORE": nil]
        for (key, value) in self.environment.merging(extra, uniquingKeysWith: { $1 }) { environment[key] = value }
        let output = try ProductProcess.run(binary, arguments, in: directory, environment: environment, timeout: timeout)
        return Result(status: output.status, stdout: output.standardOutput, stderr: output.standardError)
    }

    func run(_ arguments: String..., in directory: URL? = nil, environment: [String: String] = [:]) throws -> Result {
        try run(arguments, in: directory, environment: environment)
    }
}

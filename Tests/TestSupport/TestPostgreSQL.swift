import Foundation

/// The PostgreSQL server the tests of syncd's shared storage use: the one
/// `OBJECTSYNC_POSTGRES_URL` names (`make test` starts one with `scripts/postgres.sh start`), or
/// else one this process starts with that script, installing PostgreSQL when it is missing.
public enum TestPostgreSQL {
    /// The server's URL, ending in `/postgres` (its maintenance database).
    public static func serverURL() throws -> String {
        switch started {
        case .success(let url): return url
        case .failure(let message): throw ProductProcessError(message.text)
        }
    }

    private struct Failure: Error, Sendable {
        var text: String
    }

    /// The URL of database `name` on the same server.
    public static func url(ofDatabase name: String) throws -> String {
        let server = try serverURL()
        guard let slash = server.range(of: "/", options: .backwards) else { return server }
        return server[..<slash.lowerBound] + "/" + name
    }

    private static let started: Result<String, Failure> = {
        if let url = ProcessInfo.processInfo.environment["OBJECTSYNC_POSTGRES_URL"], !url.isEmpty { return .success(url) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/postgres.sh")
        let process = Process()
        process.executableURL = script
        process.arguments = ["start"]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        do {
            try process.run()
        } catch {
            return .failure(Failure(text: "cannot run \(script.path): \(error)"))
        }
        let url = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0, url.hasPrefix("postgresql://") else {
            return .failure(Failure(text: "scripts/postgres.sh start failed (\(process.terminationStatus)): \(message)"))
        }
        return .success(url)
    }()
}

import Foundation

/// The PostgreSQL server the tests of syncd's shared storage use: the one
/// `OBJECTSYNC_POSTGRES_URL` names (`make test` starts one with `scripts/postgres.sh start`), or
/// else one this process starts with that script, installing PostgreSQL when it is missing. That
/// one keeps running for the next run of the tests, which finds it; `scripts/postgres.sh stop`
/// stops it.
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
        // Not `Process`: tests that start together all wait here, and may hold every thread a
        // `Process` needs to learn of the script's exit (see ``SpawnedCommand``).
        let result: ProcessOutput
        do {
            result = try SpawnedCommand.run(script.path, ["start"])
        } catch {
            return .failure(Failure(text: "cannot run \(script.path): \(error)"))
        }
        let url = result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        guard result.status == 0, url.hasPrefix("postgresql://") else {
            return .failure(Failure(text: "scripts/postgres.sh start failed (\(result.status)): \(result.standardError)"))
        }
        return .success(url)
    }()
}

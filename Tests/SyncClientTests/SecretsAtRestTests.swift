import Foundation
import SyncKit
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The token a store keeps is a secret: the store file and its `-wal`/`-shm` are owner-only
/// whatever the umask, and `sync init` takes the token from places other users cannot see.
@Suite struct SecretsAtRestTests {
    let cli: CLIRunner
    let directory: TemporaryDirectory
    let schemaPath: String

    init() throws {
        cli = try CLIRunner()
        directory = try TemporaryDirectory(prefix: "sync-secrets")
        schemaPath = directory.file("schema.json")
        try ClientReplica().store.exportSchema().write(to: URL(fileURLWithPath: schemaPath))
    }

    /// The permission bits of `path`.
    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    /// Runs `sync init <store> ... extra` under `umask 000` (so only an explicit mode keeps the
    /// file private), with `input` on standard input.
    func initStore(_ name: String, _ extra: [String], input: String = "", environment: [String: String?] = [:]) throws -> (ProcessOutput, String) {
        let path = directory.file(name)
        let arguments = ["-c", "umask 000; input=\"$1\"; store=\"$2\"; schema=\"$3\"; binary=\"$0\"; shift 3; printf '%s' \"$input\" | exec \"$binary\" init \"$store\" --schema \"$schema\" --server http://127.0.0.1:9 --dataset notes \"$@\"",
                         cli.binary.path, input, path, schemaPath] + extra
        var environment = environment
        environment["SYNC_STORE"] = .some(nil)
        if environment["SYNC_TOKEN"] == nil { environment["SYNC_TOKEN"] = .some(nil) }
        let output = try ProductProcess.run(URL(fileURLWithPath: "/bin/sh"), arguments, environment: environment, timeout: 60)
        return (output, path)
    }

    /// The token saved in the store at `path`; opening it also creates its `-wal` and `-shm`.
    static func savedToken(_ path: String) throws -> (token: String?, replica: SyncReplica) {
        let replica = try SyncReplica(store: try ObjectStore(existingAt: path))
        return (try SyncClient.Configuration.stored(in: replica)?.token, replica)
    }

    @Test func initTakesTheTokenFromAFileStandardInputOrTheEnvironmentAndKeepsTheStorePrivate() throws {
        let tokenFile = directory.file("token")
        try Data("from-file\n".utf8).write(to: URL(fileURLWithPath: tokenFile))
        let cases: [(String, [String], String, [String: String?], String)] = [
            ("file.sqlite", ["--token-file", tokenFile], "", [:], "from-file"),
            ("stdin.sqlite", ["--token", "-"], "from-stdin\n", [:], "from-stdin"),
            ("env.sqlite", [], "", ["SYNC_TOKEN": "from-environment"], "from-environment"),
            ("argument.sqlite", ["--token", "from-argument"], "", [:], "from-argument"),
        ]
        for (name, extra, input, environment, expected) in cases {
            let (output, path) = try initStore(name, extra, input: input, environment: environment)
            #expect(output.status == 0, "\(name): \(output.standardError)")
            #expect(try SecretsAtRestTests.mode(path) == 0o600, "\(name)")
            let (token, replica) = try SecretsAtRestTests.savedToken(path)
            #expect(token == expected, "\(name)")
            for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
                #expect(try SecretsAtRestTests.mode(path + suffix) == 0o600, "\(name)\(suffix)")
            }
            withExtendedLifetime(replica) {}
        }
    }

    @Test func initWithoutAnyTokenSourceIsAUsageError() throws {
        let (output, path) = try initStore("none.sqlite", [])
        #expect(output.status == 2)
        #expect(output.standardError.contains("--token-file"), "\(output.standardError)")
        #expect(!FileManager.default.fileExists(atPath: path))
        let both = try initStore("both.sqlite", ["--token", "a", "--token-file", directory.file("token")]).0
        #expect(both.status == 2)
    }

    @Test func initHelpSaysWhereTheTokenComesFromAndThatTheCommandLineIsVisible() throws {
        let help = try cli.run("init", "--help").stdout
        #expect(help.contains("--token-file"))
        #expect(help.contains("SYNC_TOKEN"))
        #expect(help.contains("ps"))
    }

    @Test func savingTheConfigurationMakesAnExistingStorePrivate() throws {
        let client = try ClientReplica()
        for file in [client.path, client.path + "-wal", client.path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            #expect(chmod(file, 0o644) == 0)
        }
        try SyncClient.Configuration(serverURL: URL(string: "http://127.0.0.1:9")!, dataset: "notes", token: "secret").save(in: client.replica)
        #expect(try SecretsAtRestTests.mode(client.path) == 0o600)
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: client.path + suffix) {
            #expect(try SecretsAtRestTests.mode(client.path + suffix) == 0o600, "\(suffix)")
        }
    }
}

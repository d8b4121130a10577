import Foundation
import Testing

/// The `sync` binary run as a process: usage errors, help, and local edits and reads.
@Suite struct CLIUsageTests {
    let cli: CLIRunner

    init() throws { cli = try CLIRunner() }

    @Test func topLevelHelpListsEveryCommand() throws {
        let result = try cli.run("--help")
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("usage: sync [--store PATH] <command>"))
        for command in ["init", "push", "pull", "status", "put", "link", "unlink", "delete", "get", "list", "conflicts", "log"] {
            #expect(result.stdout.contains("\n  \(command) "), "help lists \(command)")
        }
        #expect(try cli.run("help").stdout == result.stdout)
    }

    @Test(arguments: ["init", "push", "pull", "status", "put", "link", "unlink", "delete", "get", "list", "conflicts", "log"])
    func everyCommandHasHelp(_ command: String) throws {
        let result = try cli.run(command, "--help")
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("usage: sync \(command)"))
        #expect(result.stderr.isEmpty)
        #expect(try cli.run(command, "-h").stdout == result.stdout)
    }

    @Test func missingCommandIsAUsageError() throws {
        let result = try cli.run([])
        #expect(result.status == 2)
        #expect(result.stderr.contains("missing command"))
    }

    @Test func unknownCommandIsNamed() throws {
        let result = try cli.run("frobnicate")
        #expect(result.status == 2)
        #expect(result.stderr.contains("unknown command 'frobnicate'"))
        #expect(result.stderr.contains("sync --help"))
    }

    @Test func unknownOptionIsNamed() throws {
        let result = try cli.run("status", "--verbose")
        #expect(result.status == 2)
        #expect(result.stderr.contains("sync status: unknown option '--verbose'"))
        #expect(result.stderr.contains("Run 'sync status --help' for usage."))
        #expect(try cli.run("--bogus", "status").status == 2)
    }

    @Test func missingOptionValueAndArguments() throws {
        let storeless = try cli.run("--store")
        #expect(storeless.status == 2)
        #expect(storeless.stderr.contains("'--store' needs a value"))
        let extra = try cli.run("status", "extra")
        #expect(extra.status == 2)
        #expect(extra.stderr.contains("unexpected argument 'extra'"))
        let flagValue = try cli.run("conflicts", "--clear=yes")
        #expect(flagValue.status == 2)
        #expect(flagValue.stderr.contains("'--clear' takes no value"))
        let limit = try cli.run("log", "--limit", "many")
        #expect(limit.status == 2)
        #expect(limit.stderr.contains("--limit 'many' is not a count"))
    }

    @Test func missingStoreIsARuntimeError() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("absent-\(UUID().uuidString).sqlite").path
        let result = try cli.run("--store", path, "status")
        #expect(result.status == 1)
        #expect(result.stderr.contains("no store at '\(path)'"))
        #expect(!FileManager.default.fileExists(atPath: path), "reading commands do not create stores")
    }
}

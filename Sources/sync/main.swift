import CommandLineArguments
import Foundation
import LocalStoreCore
import SyncEngine

// `sync`: edit and inspect a SyncKit store from the command line and sync it with a `syncd` server.
// Exit status: 0 success, 1 runtime error, 2 usage error.

let commands: [Command] = [
    initCommand, statusCommand, pushCommand, pullCommand,
    putCommand, incrementCommand, linkCommand, unlinkCommand, deleteCommand,
    getCommand, listCommand, conflictsCommand, logCommand,
]

let program = CommandDescription(
    name: "sync", summary: "edit and inspect a SyncKit store",
    discussion: "Edit and inspect a SyncKit store and sync it with a syncd server.",
    options: [.value("store", valueName: "PATH", "the store file (default: $SYNC_STORE, else ./sync.sqlite)")],
    subcommands: commands.map(\.description),
    epilogue: """
        'sync <command> --help' shows a command's help.
        exit status: 0 success, 1 runtime error, 2 usage error
        """)

/// Parses the command line, runs the command and returns the exit status.
func runMain(_ arguments: [String]) async -> Int32 {
    let parsed: ParsedCommand
    do {
        switch try ArgumentParser(program).parse(arguments) {
        case .help(let text):
            Output.line(text)
            return 0
        case .run(let command):
            parsed = command
        }
    } catch {
        Output.error(error.description)
        return UsageError.exitStatus
    }
    guard let command = commands.first(where: { $0.description.name == parsed.name }) else { return 1 }
    do {
        let storePath = parsed.value("store") ?? ProcessInfo.processInfo.environment["SYNC_STORE"] ?? "./sync.sqlite"
        try await command.run(parsed, storePath)
        return 0
    } catch let error as UsageError {
        Output.error(error.description)
        return UsageError.exitStatus
    } catch let error as RuntimeError {
        Output.error("sync \(parsed.name): \(error.message)")
        return 1
    } catch {
        Output.error("sync \(parsed.name): \(Output.describe(error))")
        return 1
    }
}

let status = await runMain(Array(CommandLine.arguments.dropFirst()))
// The process ends without running exit handlers. FoundationNetworking tears its curl handles
// down on a worker thread while the process exits, and the exit handlers of the TLS and LDAP
// libraries libcurl loads free state that teardown still uses: an occasional crash after a
// sync that succeeded (swift-corelibs-foundation issue 5469). Output goes straight to the file
// descriptors (stdio is flushed below) and every transaction has committed when a command returns.
fflush(nil)
_exit(status)

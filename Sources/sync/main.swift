import Foundation
import LocalStoreCore
import SyncEngine

// `sync`: edit and inspect a SyncKit store from the command line and sync it with a `syncd` server.
// Exit status: 0 success, 1 runtime error, 2 usage error.

let commands: [Command] = [
    initCommand, statusCommand, pushCommand, pullCommand,
    putCommand, linkCommand, unlinkCommand, deleteCommand,
    getCommand, listCommand, conflictsCommand, logCommand,
]

let topLevelHelp = """
    usage: sync [--store PATH] <command> [arguments]

    Edit and inspect a SyncKit store and sync it with a syncd server.

    commands:
    \(commands.map { "  " + $0.name.padding(toLength: 11, withPad: " ", startingAt: 0) + $0.summary }.joined(separator: "\n"))

    options:
      --store PATH  the store file (default: $SYNC_STORE, else ./sync.sqlite)
      -h, --help    show help; 'sync <command> --help' shows a command's help

    exit status: 0 success, 1 runtime error, 2 usage error
    """

/// Parses the global options, runs the command and returns the exit status.
func runMain(_ arguments: [String]) async -> Int32 {
    var rest = arguments[...]
    var globalStore: String?
    while let first = rest.first, first.hasPrefix("-") {
        rest = rest.dropFirst()
        switch first {
        case "-h", "--help":
            Output.line(topLevelHelp)
            return 0
        case "--store":
            guard let value = rest.first else { return Output.usage(UsageError(message: "option '--store' needs a value")) }
            globalStore = value
            rest = rest.dropFirst()
        case let option where option.hasPrefix("--store="):
            globalStore = String(option.dropFirst("--store=".count))
        default:
            return Output.usage(UsageError(message: "unknown option '\(first)'"))
        }
    }
    guard let name = rest.first else {
        Output.error("sync: missing command\n\n" + topLevelHelp)
        return 2
    }
    if name == "help" {
        if let topic = rest.dropFirst().first, let command = commands.first(where: { $0.name == topic }) {
            Output.line(command.help)
        } else {
            Output.line(topLevelHelp)
        }
        return 0
    }
    guard let command = commands.first(where: { $0.name == name }) else {
        return Output.usage(UsageError(message: "unknown command '\(name)'; commands: \(commands.map(\.name).joined(separator: ", "))"))
    }
    do {
        let parsed = try Arguments(command: name, Array(rest.dropFirst()), options: command.options.union(["store"]), flags: command.flags)
        if parsed.wantsHelp {
            Output.line(command.help)
            return 0
        }
        let storePath = parsed.options["store"] ?? globalStore ?? ProcessInfo.processInfo.environment["SYNC_STORE"] ?? "./sync.sqlite"
        try await command.run(parsed, storePath)
        return 0
    } catch let error as UsageError {
        return Output.usage(error)
    } catch let error as RuntimeError {
        Output.error("sync \(name): \(error.message)")
        return 1
    } catch {
        Output.error("sync \(name): \(Output.describe(error))")
        return 1
    }
}

exit(await runMain(Array(CommandLine.arguments.dropFirst())))

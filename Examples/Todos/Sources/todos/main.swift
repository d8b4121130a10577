import Foundation
import SyncKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// todos: a small to-do tool over a SyncKit store, synced through a syncd server.
// Exit status: 0 success, 1 the command failed, 2 the command line was wrong.

let usage = """
    todos: lists of things to do, kept in a local store and synced through syncd

    Usage: todos [--dir DIR] COMMAND [ARGUMENTS]

    Commands:
      add TITLE... [--list NAME] [--priority P] [--note TEXT]   add a todo (to list Inbox by default)
      done REF... [--undo]                                     mark todos done
      move REF (--before REF | --after REF | --to LIST | --top) reorder, or move to another list
      rm REF... | rm --list NAME                               delete todos, or a list and its todos
      ls [LIST] [--tag TAG] [--ids]                            show the lists and their numbered todos
      tag REF TAG... [--remove]                                tag a todo
      sync [--server URL] [--dataset NAME] [--token TOKEN]     sync with a syncd server
      conflicts [--clear]                                      what sync had to resolve

    REF is a todo's number from 'todos ls' or the start of its ID from 'todos ls --ids'.
    The store is DIR/todos.sqlite; DIR is --dir, else $TODOS_DIR, else ~/.todos.
    'todos COMMAND --help' tells more about a command.
    """

typealias CommandRunner = @MainActor (_ arguments: [String], _ store: () throws -> TodoStore) async throws -> Void

let commands: [String: (help: String, run: CommandRunner)] = [
    "add": (AddCommand.help, { try AddCommand.run($0, store: $1) }),
    "done": (DoneCommand.help, { try DoneCommand.run($0, store: $1) }),
    "move": (MoveCommand.help, { try MoveCommand.run($0, store: $1) }),
    "rm": (RemoveCommand.help, { try RemoveCommand.run($0, store: $1) }),
    "ls": (ListCommand.help, { try ListCommand.run($0, store: $1) }),
    "tag": (TagCommand.help, { try TagCommand.run($0, store: $1) }),
    "sync": (SyncCommand.help, { try await SyncCommand.run($0, store: $1) }),
    "conflicts": (ConflictsCommand.help, { try ConflictsCommand.run($0, store: $1) }),
]

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("todos: \(message)\n".utf8))
    exit(status)
}

/// Takes `--dir DIR` (or `--dir=DIR`) out of the arguments, wherever it is.
func extractDirectory(from arguments: inout [String]) throws -> String? {
    var directory: String?
    var index = 0
    while index < arguments.count {
        if arguments[index] == "--" { break }
        if arguments[index] == "--dir" {
            guard index + 1 < arguments.count else { throw UsageError(message: "--dir needs a value") }
            directory = arguments[index + 1]
            arguments.removeSubrange(index...index + 1)
        } else if arguments[index].hasPrefix("--dir=") {
            directory = String(arguments[index].dropFirst("--dir=".count))
            arguments.remove(at: index)
        } else {
            index += 1
        }
    }
    return directory
}

var arguments = Array(CommandLine.arguments.dropFirst())
do {
    let directoryFlag = try extractDirectory(from: &arguments)
    guard let name = arguments.first else { throw UsageError(message: "missing command") }
    if ["--help", "-h", "help"].contains(name) {
        print(usage)
        exit(0)
    }
    guard let command = commands[name] else { throw UsageError(message: "unknown command '\(name)'") }
    let rest = Array(arguments.dropFirst())
    if rest.contains("--help") || rest.contains("-h") {
        print(command.help)
        exit(0)
    }
    let directory = TodoStore.directory(flag: directoryFlag, environment: ProcessInfo.processInfo.environment)
    try await command.run(rest) { try TodoStore(directory: directory) }
} catch let error as UsageError {
    fail("\(error.message)\nTry 'todos \(error.command.map { "\($0) " } ?? "")--help'.", status: 2)
} catch let error as ToolError {
    fail(error.message, status: 1)
} catch {
    fail("\(error)", status: 1)
}

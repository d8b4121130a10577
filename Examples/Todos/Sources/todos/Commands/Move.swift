import SyncKit

/// `todos move REF (--before REF | --after REF | --to LIST [--top] | --top)`
enum MoveCommand {
    static let help = """
        Usage: todos move REF --before REF2
               todos move REF --after REF2
               todos move REF --to LIST [--top]
               todos move REF --top

        Moves a todo next to another one (into that one's list), to the end (or with --top,
        the start) of list LIST, which is created if there is none, or to the top of its own list.
        """

    static func run(_ arguments: [String], store: () throws -> TodoStore) throws {
        let arguments = try Arguments(arguments, command: "move", options: ["--before", "--after", "--to"], flags: ["--top"])
        try arguments.expectPositionals(1, 1, what: "the todo to move (a number from 'todos ls')")
        let targets = [arguments["--before"], arguments["--after"], arguments["--to"]].compactMap { $0 }
        guard targets.count == 1 || (targets.isEmpty && arguments.has("--top")) else {
            throw UsageError(message: "say where to: one of --before REF, --after REF, --to LIST or --top", command: "move")
        }
        if arguments.has("--top"), arguments["--before"] != nil || arguments["--after"] != nil {
            throw UsageError(message: "--top goes with --to LIST or alone, not with --before or --after", command: "move")
        }

        let store = try store()
        let todo = try store.todo(arguments.positionals[0])
        let destination: TodoList
        var index: Int?
        var created = false
        if let reference = arguments["--before"] ?? arguments["--after"] {
            let neighbour = try store.todo(reference)
            guard neighbour !== todo else { throw ToolError("cannot move a todo next to itself") }
            guard let list = neighbour.list else { throw ToolError("todo \(reference) is in no list") }
            destination = list
            // The neighbour's index once `todo` has left the list.
            let others = list.todos.filter { $0 !== todo }
            let neighbourIndex = others.firstIndex { $0 === neighbour } ?? others.count
            index = arguments["--before"] != nil ? neighbourIndex : neighbourIndex + 1
        } else if let name = arguments["--to"] {
            guard !name.isEmpty else { throw UsageError(message: "the list name is empty", command: "move") }
            (destination, created) = try store.listCreatingIfNeeded(name)
            index = arguments.has("--top") ? 0 : nil
        } else {
            guard let list = todo.list else { throw ToolError("\(todo.title) is in no list; use --to LIST") }
            destination = list
            index = 0
        }

        if let source = todo.list { source.removeFromTodos(todo) }
        destination.insertIntoTodos(todo, at: min(index ?? destination.todos.count, destination.todos.count))
        try store.save()
        let number = try store.numberedTodos().first { $0.todo === todo }?.number ?? 0
        print("Moved \(todo.title) to \(destination.name)\(created ? " (new list)" : ""), now \(number).")
    }
}

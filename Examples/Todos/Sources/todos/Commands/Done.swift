import SyncKit

/// `todos done REF… [--undo]`
enum DoneCommand {
    static let help = """
        Usage: todos done REF... [--undo]

        Marks todos done (with --undo: not done). REF is a number from 'todos ls' or the start
        of an ID from 'todos ls --ids'.
        """

    static func run(_ arguments: [String], store: () throws -> TodoStore) throws {
        let arguments = try Arguments(arguments, command: "done", flags: ["--undo"])
        try arguments.expectPositionals(1, what: "at least one todo (a number from 'todos ls')")
        let store = try store()
        let todos = try store.todos(arguments.positionals)
        let isDone = !arguments.has("--undo")
        for todo in todos { todo.isDone = isDone }
        try store.save()
        for todo in todos { print("\(isDone ? "Done" : "Not done"): \(todo.title)") }
    }
}

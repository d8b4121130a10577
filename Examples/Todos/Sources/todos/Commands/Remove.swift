import SyncKit

/// `todos rm REF…` or `todos rm --list NAME`
enum RemoveCommand {
    static let help = """
        Usage: todos rm REF...
               todos rm --list NAME

        Deletes todos, or list NAME together with all its todos.
        """

    static func run(_ arguments: [String], store openStore: () throws -> TodoStore) throws {
        let arguments = try Arguments(arguments, command: "rm", options: ["--list"])
        let store: TodoStore
        if let name = arguments["--list"] {
            try arguments.expectPositionals(0, 0, what: "no todos with --list")
            store = try openStore()
            guard let list = try store.list(named: name) else { throw ToolError("there is no list named '\(name)'") }
            let count = list.todos.count
            store.context.delete(list)
            try store.save()
            print("Deleted list \(name) and its \(count) \(count == 1 ? "todo" : "todos")")
        } else {
            try arguments.expectPositionals(1, what: "the todos to delete (numbers from 'todos ls'), or --list NAME")
            store = try openStore()
            let todos = try store.todos(arguments.positionals)
            let titles = todos.map(\.title)
            for todo in todos { store.context.delete(todo) }
            try store.save()
            for title in titles { print("Deleted: \(title)") }
        }
    }
}

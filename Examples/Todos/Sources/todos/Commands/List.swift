import SyncKit

/// `todos ls [LIST] [--tag TAG] [--ids]`
enum ListCommand {
    static let help = """
        Usage: todos ls [LIST] [--tag TAG] [--ids]

        Shows every list (or only LIST) with its todos, numbered; other commands take these
        numbers. Numbers follow the listing order (lists by name, todos in their list's order),
        so replicas that synced number alike.
          --tag TAG   only todos tagged TAG
          --ids       also show the start of each todo's ID (for use in scripts)
        """

    static func run(_ arguments: [String], store: () throws -> TodoStore) throws {
        let arguments = try Arguments(arguments, command: "ls", options: ["--tag"], flags: ["--ids"])
        try arguments.expectPositionals(0, 1, what: "at most one list")
        let store = try store()
        let onlyList = arguments.positionals.first
        let tag = arguments["--tag"].map { $0.hasPrefix("#") ? String($0.dropFirst()) : $0 }
        var lists = try store.lists()
        if let onlyList {
            lists = lists.filter { $0.name == onlyList }
            if lists.isEmpty { throw ToolError("there is no list named '\(onlyList)'") }
        }
        let numbers = Dictionary(uniqueKeysWithValues: try store.numberedTodos().map { (ObjectIdentifier($0.todo), $0.number) })
        if lists.isEmpty {
            print("No todos yet. Add one with: todos add TITLE [--list NAME]")
            return
        }
        for list in lists {
            print(list.name)
            let todos = list.todos.filter { todo in tag.map { name in todo.tags.contains { $0.name == name } } ?? true }
            if todos.isEmpty { print("   (\(tag == nil ? "empty" : "nothing tagged #\(tag!)"))") }
            for todo in todos {
                print(line(for: todo, number: numbers[ObjectIdentifier(todo)] ?? 0, showID: arguments.has("--ids")))
            }
        }
    }

    /// `  3. [x] Title (high) #tag` and the note, if any, on the next line.
    static func line(for todo: Todo, number: Int, showID: Bool) -> String {
        var text = "\(String(number).leftPadded(to: 3)). "
        if showID { text += todo.shortID + " " }
        text += todo.isDone ? "[x] " : "[ ] "
        text += todo.title
        if todo.priority != .normal { text += " (\(todo.priority.rawValue))" }
        for tag in todo.tags.map(\.name).sorted() { text += " #\(tag)" }
        if let note = todo.note {
            let parts = [note.text, note.link?.absoluteString].compactMap { $0 }.filter { !$0.isEmpty }
            text += "\n       " + parts.joined(separator: " ")
        }
        return text
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

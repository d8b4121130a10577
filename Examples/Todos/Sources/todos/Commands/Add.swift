import Foundation
import SyncKit

/// `todos add TITLE… [--list NAME] [--priority P] [--note TEXT] [--link URL]`
enum AddCommand {
    static let help = """
        Usage: todos add TITLE... [--list NAME] [--priority low|normal|high] [--note TEXT] [--link URL]

        Adds a todo at the end of list NAME (default "Inbox"), creating the list if there is none.
        The words of TITLE are joined with spaces.
          --list NAME      the list to add to (default Inbox)
          --priority P     low, normal (the default) or high
          --note TEXT      a note shown under the todo
          --link URL       a link kept with the note
        """

    static func run(_ arguments: [String], store: () throws -> TodoStore) throws {
        let arguments = try Arguments(arguments, command: "add", options: ["--list", "--priority", "--note", "--link"])
        try arguments.expectPositionals(1, what: "a title")
        let title = arguments.positionals.joined(separator: " ").trimmingCharacters(in: .whitespaces)
        guard !title.isEmpty else { throw UsageError(message: "the title is empty", command: "add") }
        let priority = try Priority.parse(arguments["--priority"] ?? "normal", command: "add")
        let note = try Note.parse(text: arguments["--note"], link: arguments["--link"], command: "add")
        let listName = arguments["--list"] ?? "Inbox"
        guard !listName.isEmpty else { throw UsageError(message: "the list name is empty", command: "add") }

        let store = try store()
        let (list, created) = try store.listCreatingIfNeeded(listName)
        let todo = Todo()
        todo.title = title
        todo.priority = priority
        todo.note = note
        todo.createdAt = Date()
        store.context.insert(todo)
        list.addToTodos(todo)
        try store.save()
        let number = try store.numberedTodos().first { $0.todo === todo }?.number ?? 0
        print("Added \(number). \(title) to \(list.name)\(created ? " (new list)" : "")")
    }
}

extension Priority {
    static func parse(_ text: String, command: String) throws -> Priority {
        guard let priority = Priority(rawValue: text.lowercased()) else {
            throw UsageError(message: "unknown priority '\(text)' (use low, normal or high)", command: command)
        }
        return priority
    }
}

extension Note {
    /// A note from `--note` and `--link`; `nil` when neither was given.
    static func parse(text: String?, link: String?, command: String) throws -> Note? {
        guard text != nil || link != nil else { return nil }
        var url: URL?
        if let link {
            guard let parsed = URL(string: link), parsed.scheme != nil else {
                throw UsageError(message: "'\(link)' is not a URL (e.g. https://example.com)", command: command)
            }
            url = parsed
        }
        return Note(text: text ?? "", link: url)
    }
}

import SyncKit

/// `todos tag REF TAG… [--remove]`
enum TagCommand {
    static let help = """
        Usage: todos tag REF TAG... [--remove]

        Tags a todo (tags are created as needed), or with --remove takes tags off it.
        'todos ls --tag TAG' shows only the todos with a tag.
        """

    static func run(_ arguments: [String], store: () throws -> TodoStore) throws {
        let arguments = try Arguments(arguments, command: "tag", flags: ["--remove"])
        try arguments.expectPositionals(2, what: "a todo and at least one tag")
        let names = arguments.positionals.dropFirst().map { $0.hasPrefix("#") ? String($0.dropFirst()) : $0 }
        guard names.allSatisfy({ !$0.isEmpty && !$0.contains(" ") }) else {
            throw UsageError(message: "a tag is one word", command: "tag")
        }
        let store = try store()
        let todo = try store.todo(arguments.positionals[0])
        if arguments.has("--remove") {
            for name in names {
                guard let tag = todo.tags.first(where: { $0.name == name }) else { throw ToolError("\(todo.title) has no tag #\(name)") }
                todo.removeFromTags(tag)
            }
        } else {
            for name in names where !todo.tags.contains(where: { $0.name == name }) {
                todo.addToTags(try store.tagCreatingIfNeeded(name))
            }
        }
        try store.save()
        let tags = todo.tags.map { "#" + $0.name }.sorted()
        print("\(todo.title): \(tags.isEmpty ? "no tags" : tags.joined(separator: " "))")
    }
}

import Foundation
import SyncKit

/// The tool's store: `todos.sqlite` in the directory given by `--dir`, else `$TODOS_DIR`, else
/// `~/.todos`, opened as a sync replica so every save is recorded for `todos sync`.
///
/// Listings are deterministic: lists sort by name, then creation time, then identifier; todos
/// keep their list's order. Every todo gets a number from that order (what `ls` shows), and
/// two replicas that synced show the same numbers.
struct TodoStore {
    let directory: URL
    let store: ObjectStore
    let replica: SyncReplica
    let context: ObjectContext

    static let fileName = "todos.sqlite"

    /// The directory `--dir` or the environment selects.
    static func directory(flag: String?, environment: [String: String]) -> URL {
        if let flag, !flag.isEmpty { return URL(fileURLWithPath: flag) }
        if let variable = environment["TODOS_DIR"], !variable.isEmpty { return URL(fileURLWithPath: variable) }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".todos")
    }

    /// Opens (creating it the first time) the store in `directory`.
    init(directory: URL) throws {
        self.directory = directory
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw ToolError("cannot create the store directory \(directory.path): \(error.localizedDescription)")
        }
        store = try ObjectStore(path: directory.appendingPathComponent(Self.fileName).path, entities: todoEntities)
        replica = try SyncReplica(store: store)
        context = try store.makeContext()
    }

    func save() throws {
        try context.save()
    }

    // MARK: Lists

    /// Every list, in listing order.
    func lists() throws -> [TodoList] {
        // The ID last: storage order, which would break remaining ties, differs between replicas.
        try context.fetch(FetchDescriptor<TodoList>(sortBy: [SortDescriptor(\.name), SortDescriptor(\.createdAt), SortDescriptor(\.objectID)]))
    }

    /// The first list (in listing order) called `name`.
    func list(named name: String) throws -> TodoList? {
        try lists().first { $0.name == name }
    }

    /// The list called `name`, created if there is none; `created` says which.
    func listCreatingIfNeeded(_ name: String) throws -> (list: TodoList, created: Bool) {
        if let list = try list(named: name) { return (list, false) }
        let list = TodoList()
        list.name = name
        list.createdAt = Date()
        context.insert(list)
        return (list, true)
    }

    // MARK: Todos and their numbers

    /// Every todo with its number, in listing order: the lists' todos first, then any todo
    /// without a list (sorted by creation).
    func numberedTodos() throws -> [(number: Int, todo: Todo)] {
        var todos = try lists().flatMap(\.todos)
        todos += try context.fetch(FetchDescriptor<Todo>(
            predicate: #Predicate { $0.list == nil }, sortBy: [SortDescriptor(\.createdAt), SortDescriptor(\.objectID)]))
        return todos.enumerated().map { ($0.offset + 1, $0.element) }
    }

    /// The todo a reference names: a number from `ls`, or the start of an ID from `ls --ids`
    /// (at least 4 characters, and it must match one todo only).
    func todo(_ reference: String) throws -> Todo {
        let numbered = try numberedTodos()
        if let number = Int(reference) {
            guard let match = numbered.first(where: { $0.number == number }) else {
                throw ToolError(numbered.isEmpty ? "there is no todo \(number): there are no todos yet"
                                : "there is no todo \(number) (todos are numbered 1 to \(numbered.count); see 'todos ls')")
            }
            return match.todo
        }
        let prefix = reference.lowercased()
        guard prefix.count >= 4 else {
            throw ToolError("'\(reference)' is neither a todo number nor an ID prefix of at least 4 characters (see 'todos ls --ids')")
        }
        let matches = numbered.filter { $0.todo.objectID.uuidString.lowercased().hasPrefix(prefix) }
        switch matches.count {
        case 1: return matches[0].todo
        case 0: throw ToolError("no todo has an ID starting with '\(reference)' (see 'todos ls --ids')")
        default: throw ToolError("'\(reference)' matches \(matches.count) todos: \(matches.map { "\($0.number)" }.joined(separator: ", ")); give more of the ID")
        }
    }

    /// The todos `references` name, each once, in the order given.
    func todos(_ references: [String]) throws -> [Todo] {
        var result: [Todo] = []
        for reference in references {
            let todo = try todo(reference)
            if !result.contains(where: { $0 === todo }) { result.append(todo) }
        }
        return result
    }

    // MARK: Tags

    /// The tag called `name`, created if there is none.
    func tagCreatingIfNeeded(_ name: String) throws -> Tag {
        var descriptor = FetchDescriptor<Tag>(predicate: #Predicate { $0.name == name }, sortBy: [SortDescriptor(\.objectID)])
        descriptor.fetchLimit = 1
        if let tag = try context.fetch(descriptor).first { return tag }
        let tag = Tag()
        tag.name = name
        context.insert(tag)
        return tag
    }
}

extension Todo {
    /// The short form of the ID that `ls --ids` shows.
    var shortID: String { String(objectID.uuidString.lowercased().prefix(8)) }
}

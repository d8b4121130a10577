import Foundation
import SyncKit

// The example's entities, declared with the macros a user's app would use:
// - TodoList.todos / Todo.list: an ordered one-to-many; deleting a list deletes its todos (cascade).
// - Todo.tags / Tag.todos: many-to-many; deleting either side only unlinks (nullify).
// - Todo.priority: an enum stored as its raw value; Todo.note: a Codable struct stored as JSON.

/// A named, ordered list of todos.
@Entity final class TodoList {
    var name: String = ""
    var createdAt: Date = Date(timeIntervalSince1970: 0)
    @Relationship(inverse: "list", deleteRule: .cascade) var todos: [Todo] = []
}

/// One thing to do, in exactly one list.
@Entity final class Todo {
    var title: String = ""
    var isDone: Bool = false
    @Attribute(storage: .raw) var priority: Priority = .normal
    @Attribute(storage: .codable) var note: Note? = nil
    var createdAt: Date = Date(timeIntervalSince1970: 0)
    @Relationship(inverse: "todos", deleteRule: .nullify) var list: TodoList?
    @Relationship(inverse: "todos", deleteRule: .nullify) var tags: Set<Tag> = []
}

/// A label shared by any number of todos.
@Entity final class Tag {
    var name: String = ""
    @Relationship(inverse: "tags", deleteRule: .nullify) var todos: Set<Todo> = []
}

/// How urgent a todo is; stored as its raw value (`"low"`, `"normal"`, `"high"`).
enum Priority: String, CaseIterable, Sendable {
    case low, normal, high
}

/// Free-form details about a todo, stored as JSON.
struct Note: Codable, Hashable, Sendable {
    var text: String
    var link: URL?
}

/// Every entity the store holds.
let todoEntities: [any PersistentEntity.Type] = [TodoList.self, Todo.self, Tag.self]

import Foundation
import SyncKit

/// `todos conflicts [--clear] [--verbose]`
enum ConflictsCommand {
    static let help = """
        Usage: todos conflicts [--verbose] [--clear]

        Lists the conflict journal: every change sync discarded or altered while merging
        concurrent edits, and why.
          --verbose   also the object IDs, the change sets involved and the journal's own wording
          --clear     empty the journal after showing it
        """

    static func run(_ arguments: [String], store: () throws -> TodoStore) throws {
        let arguments = try Arguments(arguments, command: "conflicts", flags: ["--clear", "--verbose"])
        try arguments.expectPositionals(0, 0, what: "no arguments")
        let store = try store()
        let entries = try store.replica.conflicts()
        if entries.isEmpty { print("No conflicts.") }
        for entry in entries {
            print("\(entry.number). \(entry.kind.rawValue): \(describe(entry, in: store))")
            if arguments.has("--verbose") {
                print("   \(entry.detail)")
                print("   caused by change set \(entry.cause.replica.uuidString.lowercased().prefix(8)):\(entry.cause.seq)")
            }
        }
        if arguments.has("--clear"), let last = entries.last {
            try store.replica.clearConflicts(through: last.number)
            print("Cleared \(entries.count) \(entries.count == 1 ? "entry" : "entries").")
        }
    }

    /// A sentence about the entry in the tool's own terms.
    static func describe(_ entry: ConflictEntry, in store: TodoStore) -> String {
        let object = name(of: entry.entity, id: entry.objectID, in: store)
        switch entry.kind {
        case .cascadedDelete:
            return "\(object) was deleted too: it was added to a list that was deleted on another replica at the same time"
        case .updateVersusDelete:
            return "a change to \(object)\(entry.property.map { " (\($0))" } ?? "") was dropped: it was deleted on another replica at the same time"
        case .attribute:
            let loser = entry.loser.value?.jsonText ?? "nothing", winner = entry.winner?.value?.jsonText ?? "nothing"
            return "\(object) \(entry.property ?? "?") was set to \(loser) and to \(winner) at the same time; \(winner) won"
        case .move:
            return "\(object) was moved on two replicas at the same time; the later move won"
        case .toOne:
            return "\(object) \(entry.property ?? "?") was set on two replicas at the same time; the later one won"
        case .referenceDropped:
            return "\(object) lost a \(entry.property ?? "reference") to something deleted on another replica at the same time"
        case .voidedDelete:
            return "deleting \(object) was undone: another replica added to it at the same time"
        case .uniqueMerged:
            return "\(object) was merged into an object created earlier with the same \(entry.property ?? "unique value")"
        case .counterSaturated:
            return "\(object) \(entry.property ?? "?") went beyond its range and shows its bound"
        case .aboveMaxCount:
            return "\(object) has more \(entry.property ?? "members") than it allows; the latest one added is hidden"
        case .belowMinCount:
            return "\(object) has fewer \(entry.property ?? "members") than it needs after a merge"
        }
    }

    /// `todo "Milk"`, `list "Groceries"` or `tag #home`, from the object's last known values
    /// (it may be gone: a merge deleted it); the entity and the start of the ID if even those are unknown.
    static func name(of entity: String, id: UUID, in store: TodoStore) -> String {
        let record = try? store.replica.lastKnownRecord(entity, id: id)
        func text(_ attribute: String) -> String? {
            if case .text(let value)? = record?.value(of: attribute) { return value }
            return nil
        }
        switch entity {
        case "Todo": if let title = text("title") { return "todo \"\(title)\"" }
        case "TodoList": if let name = text("name") { return "list \"\(name)\"" }
        case "Tag": if let name = text("name") { return "tag #\(name)" }
        default: break
        }
        return "\(entity) \(id.uuidString.lowercased().prefix(8))"
    }
}

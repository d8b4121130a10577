import Foundation
import LocalStoreCore
import SyncEngine

// put, link, unlink, delete: data-level edits, each committed as one change set.

/// Splits `field=value` arguments; the value may be empty or contain further `=`.
func fieldValues(_ arguments: [String], command: String) throws(UsageError) -> [(field: String, value: String)] {
    var result: [(field: String, value: String)] = []
    for argument in arguments {
        guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else {
            throw UsageError(message: "'\(argument)' is not field=value", command: command)
        }
        let field = String(argument[..<equals])
        guard !result.contains(where: { $0.field == field }) else {
            throw UsageError(message: "field '\(field)' is given twice", command: command)
        }
        result.append((field, String(argument[argument.index(after: equals)...])))
    }
    return result
}

let putCommand = Command(
    name: "put", summary: "create or update an object; prints its id",
    help: """
        usage: sync put <Entity> [id] field=value...

        Creates an object of <Entity> (with a new id, or the given one if no such object exists)
        or updates the object with that id, setting each attribute to its value, in one change
        set. Values are converted by the attribute's type: numbers, true/false, dates as ISO 8601
        or seconds since 1970, UUIDs, JSON for compositions and other Codable values, and 'null'
        for nil on optional attributes. Prints the object's id.
        """
) { arguments, storePath in
    guard let entity = arguments.positionals.first else { throw UsageError(message: "missing <Entity>", command: "put") }
    var rest = Array(arguments.positionals.dropFirst())
    var id: UUID?
    if let first = rest.first, !first.contains("=") {
        id = try arguments.objectID(first)
        rest.removeFirst()
    }
    let values = try fieldValues(rest, command: "put")
    if id != nil && values.isEmpty { throw UsageError(message: "nothing to change: give field=value pairs", command: "put") }
    let replica = try openReplica(storePath)
    let objectID = try RecordAccess.put(replica, entity: entity, id: id, values: values)
    Output.line(objectID.uuidString)
}

let linkCommand = Command(
    name: "link", summary: "add <targetId> to a relationship of an object",
    help: """
        usage: sync link <Entity> <id> <relationship> <targetId>

        Adds the target object to the relationship (for a to-one, replaces its value); the
        inverse relationship follows. One change set.
        """
) { arguments, storePath in
    let values = try arguments.positionals(["Entity", "id", "relationship", "targetId"])
    let id = try arguments.objectID(values[1]), target = try arguments.objectID(values[3], what: "targetId")
    let replica = try openReplica(storePath)
    try RecordAccess.link(replica, entity: values[0], id: id, relationship: values[2], target: target)
}

let unlinkCommand = Command(
    name: "unlink", summary: "remove <targetId> from a relationship of an object",
    help: """
        usage: sync unlink <Entity> <id> <relationship> <targetId>

        Removes the target object from the relationship (for a to-one holding it, clears it);
        the inverse relationship follows. One change set.
        """
) { arguments, storePath in
    let values = try arguments.positionals(["Entity", "id", "relationship", "targetId"])
    let id = try arguments.objectID(values[1]), target = try arguments.objectID(values[3], what: "targetId")
    let replica = try openReplica(storePath)
    try RecordAccess.unlink(replica, entity: values[0], id: id, relationship: values[2], target: target)
}

let deleteCommand = Command(
    name: "delete", summary: "delete an object (applying delete rules)",
    help: """
        usage: sync delete <Entity> <id>

        Deletes the object, applying its relationships' delete rules: nullify clears references
        to it, cascade deletes related objects too, deny refuses (exit status 1, naming the
        relationship). One change set.
        """
) { arguments, storePath in
    let values = try arguments.positionals(["Entity", "id"])
    let id = try arguments.objectID(values[1])
    let replica = try openReplica(storePath)
    try RecordAccess.delete(replica, entity: values[0], id: id)
}

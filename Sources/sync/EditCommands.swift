import CommandLineArguments
import Foundation
import LocalStoreCore
import SyncEngine

// put, link, unlink, delete: data-level edits, each committed as one change set. Each is refused
// where an app's save would be (a `.unique` value another object has, a relationship left outside
// its minCount/maxCount, a deny delete rule), with the same error, and then commits nothing.

/// Splits `field=value` arguments; the value may be empty or contain further `=`.
func fieldValues(_ texts: [String], of arguments: ParsedCommand) throws(UsageError) -> [(field: String, value: String)] {
    var result: [(field: String, value: String)] = []
    for argument in texts {
        guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else {
            throw arguments.usageError("'\(argument)' is not field=value")
        }
        let field = String(argument[..<equals])
        guard !result.contains(where: { $0.field == field }) else {
            throw arguments.usageError("field '\(field)' is given twice")
        }
        result.append((field, String(argument[argument.index(after: equals)...])))
    }
    return result
}

let putCommand = Command(CommandDescription(
    name: "put", summary: "create or update an object; prints its id",
    synopses: ["<Entity> [<id>] <field=value>..."],
    discussion: """
        Creates an object of <Entity> (with a new id, or the given one if no such object exists)
        or updates the object with that id, setting each attribute to its value, in one change
        set. Values are converted by the attribute's type: numbers, true/false, dates as ISO 8601
        or seconds since 1970, UUIDs, JSON for compositions and other Codable values, and 'null'
        for nil on optional attributes. Prints the object's id. A value of a unique attribute that
        another object has is refused (exit status 1), as an app's save refuses it.
        """,
    positionals: [PositionalDescription("Entity"), PositionalDescription("field=value", .repeated)]
)) { arguments, storePath in
    let entity = arguments.positionals[0]
    var rest = Array(arguments.positionals.dropFirst())
    var id: UUID?
    if let first = rest.first, !first.contains("=") {
        id = try arguments.objectID(first)
        rest.removeFirst()
    }
    let values = try fieldValues(rest, of: arguments)
    if id != nil && values.isEmpty { throw arguments.usageError("nothing to change: give field=value pairs") }
    let replica = try openReplica(storePath)
    let objectID = try RecordAccess.put(replica, entity: entity, id: id, values: values)
    Output.line(objectID.uuidString)
}

let incrementCommand = Command(CommandDescription(
    name: "increment", summary: "add <delta> to a counter attribute of an object",
    discussion: """
        Adds the integer <delta> (negative to subtract) to an attribute declared
        @Attribute(merge: .counter), in one change set. Increments made concurrently on other
        replicas add up with it; 'sync show' prints the merged value. ('sync put' of a counter
        records the difference to the value the object holds as an increment too.)
        """,
    positionals: ["Entity", "id", "attribute", "delta"].map { PositionalDescription($0) }
)) { arguments, storePath in
    let values = arguments.positionals
    let id = try arguments.objectID(values[1])
    guard let delta = Int64(values[3]) else { throw arguments.usageError("delta '\(values[3])' is not a 64-bit integer") }
    let replica = try openReplica(storePath)
    try RecordAccess.increment(replica, entity: values[0], id: id, attribute: values[2], by: delta)
}

/// What link and unlink take: `<Entity> <id> <relationship> <targetId>`.
private let edgePositionals = ["Entity", "id", "relationship", "targetId"].map { PositionalDescription($0) }

let linkCommand = Command(CommandDescription(
    name: "link", summary: "add <targetId> to a relationship of an object",
    discussion: """
        Adds the target object to the relationship (for a to-one, replaces its value); the
        inverse relationship follows. One change set. Refused (exit status 1) when either side
        would go beyond its maxCount or below its minCount, as an app's save is.
        """,
    positionals: edgePositionals
)) { arguments, storePath in
    let values = arguments.positionals
    let id = try arguments.objectID(values[1]), target = try arguments.objectID(values[3], what: "targetId")
    let replica = try openReplica(storePath)
    try RecordAccess.link(replica, entity: values[0], id: id, relationship: values[2], target: target)
}

let unlinkCommand = Command(CommandDescription(
    name: "unlink", summary: "remove <targetId> from a relationship of an object",
    discussion: """
        Removes the target object from the relationship (for a to-one holding it, clears it);
        the inverse relationship follows. One change set. Refused (exit status 1) when either
        side would go below its minCount.
        """,
    positionals: edgePositionals
)) { arguments, storePath in
    let values = arguments.positionals
    let id = try arguments.objectID(values[1]), target = try arguments.objectID(values[3], what: "targetId")
    let replica = try openReplica(storePath)
    try RecordAccess.unlink(replica, entity: values[0], id: id, relationship: values[2], target: target)
}

let deleteCommand = Command(CommandDescription(
    name: "delete", summary: "delete an object (applying delete rules)",
    discussion: """
        Deletes the object, applying its relationships' delete rules: nullify clears references
        to it, cascade deletes related objects too, deny refuses (exit status 1, naming the
        relationship). Refused too when an object it was related to would go below its
        minCount. One change set.
        """,
    positionals: [PositionalDescription("Entity"), PositionalDescription("id")]
)) { arguments, storePath in
    let values = arguments.positionals
    let id = try arguments.objectID(values[1])
    let replica = try openReplica(storePath)
    try RecordAccess.delete(replica, entity: values[0], id: id)
}

import CommandLineArguments
import Foundation
import LocalStoreCore
import SyncEngine

// get, list: objects as JSON, attributes and relationships included.

let getCommand = Command(CommandDescription(
    name: "get", summary: "print an object as JSON",
    discussion: """
        Prints the object as one JSON object with sorted keys: "id", every attribute, and every
        relationship (a to-one as the target's id or null, a to-many as an array of ids, in order
        for ordered relationships). Exit status 1 when there is no such object.
        """,
    positionals: [PositionalDescription("Entity"), PositionalDescription("id")]
)) { arguments, storePath in
    let values = arguments.positionals
    let id = try arguments.objectID(values[1])
    let replica = try openReplica(storePath)
    guard let record = try RecordAccess.record(replica, entity: values[0], id: id) else {
        throw RuntimeError("there is no \(values[0]) with id \(id.uuidString)")
    }
    Output.line(record)
}

let listCommand = Command(CommandDescription(
    name: "list", summary: "print every object of an entity, one JSON object per line",
    discussion: """
        Prints every object of <Entity>, sorted by id, one JSON object per line in the form
        'sync get' uses (relationships included).
        """,
    positionals: [PositionalDescription("Entity")]
)) { arguments, storePath in
    let values = arguments.positionals
    let replica = try openReplica(storePath)
    for record in try RecordAccess.records(replica, entity: values[0]) {
        Output.line(record)
    }
}

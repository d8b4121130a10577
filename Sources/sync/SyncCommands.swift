import Foundation
import LocalStoreCore
import SyncEngine

// status, push, pull, log, conflicts: the store's sync state and the exchange with the server.

/// Opens the sync store at `path`, with the schema stored in it.
func openReplica(_ path: String) throws -> SyncReplica {
    guard FileManager.default.fileExists(atPath: path) else {
        throw RuntimeError("no store at '\(path)'; create one with 'sync init \(path) --schema FILE --server URL --dataset NAME --token TOKEN'")
    }
    do {
        return try SyncReplica(store: try openStore(path))
    } catch {
        throw RuntimeError("cannot open the store '\(path)': \(Output.describe(error))")
    }
}

/// A client for the server configured in the store by `sync init`.
func makeClient(_ replica: SyncReplica) throws -> SyncClient {
    guard var configuration = try SyncClient.Configuration.stored(in: replica) else {
        throw RuntimeError("the store has no server configured; run 'sync init' with --server, --dataset and --token")
    }
    configuration.backoff = Backoff(initial: .milliseconds(250), maximum: .seconds(4), maxAttempts: 4)
    configuration.requestTimeout = .seconds(30)
    return SyncClient(replica: replica, configuration: configuration)
}

let statusCommand = Command(
    name: "status", summary: "show replica ID, version vector, pending changes, last sync and server",
    help: """
        usage: sync status [--json]

        Shows the store's replica ID, version vector, the number of local change sets the
        server has not acknowledged, when it last synced, and its server, dataset and cursor.
        Does not contact the server.

        options:
          --json  print one JSON object instead of lines
        """,
    flags: ["json"]
) { arguments, storePath in
    _ = try arguments.positionals([])
    let replica = try openReplica(storePath)
    let configuration = try SyncClient.Configuration.stored(in: replica)
    let state = try SyncClient.StoredState.read(from: replica)
    let vector = try replica.versionVector()
    let pending = try replica.unacknowledgedCount()
    let conflicts = try replica.conflictCount()
    if arguments.flags.contains("json") {
        var object: [String: Any] = [
            "store": storePath, "replica": replica.replicaID.uuidString, "pending": pending, "conflicts": conflicts,
            "vector": Dictionary(uniqueKeysWithValues: vector.entries.map { ($0.key.uuidString, NSNumber(value: $0.value)) }),
            "cursor": state.cursor, "schemaHash": replica.store.schemaDocument.versionHash,
        ]
        object["lastSync"] = state.lastSuccessfulSync.map(Output.date) ?? NSNull()
        object["server"] = configuration?.serverURL.absoluteString ?? NSNull()
        object["dataset"] = configuration?.dataset ?? NSNull()
        Output.line(Output.json(object))
    } else {
        Output.line("""
            store: \(storePath)
            replica: \(replica.replicaID.uuidString)
            vector: \(Output.vector(vector))
            pending: \(pending)
            conflicts: \(conflicts)
            last sync: \(state.lastSuccessfulSync.map(Output.date) ?? "never")
            server: \(configuration?.serverURL.absoluteString ?? "none")
            dataset: \(configuration?.dataset ?? "none")
            cursor: \(state.cursor)
            """)
    }
}

/// Prints what a push or pull did.
func printReport(_ report: SyncReport, json: Bool, push: Bool, pull: Bool) {
    if json {
        Output.line(Output.json([
            "registeredSchema": report.registeredSchema, "pushed": report.pushed, "alreadyOnServer": report.alreadyOnServer,
            "pulled": report.pulled, "pulledAlreadyApplied": report.pulledAlreadyApplied, "pages": report.pages,
            "changedObjects": report.changedObjectIDs.count, "newConflicts": report.newConflicts, "cursor": report.cursor,
            "pending": report.pendingAfter,
        ] as [String: Any]))
        return
    }
    if report.registeredSchema { Output.line("registered the schema") }
    if push {
        Output.line("pushed \(report.pushed) change set\(report.pushed == 1 ? "" : "s")"
            + (report.alreadyOnServer > 0 ? " (\(report.alreadyOnServer) already on the server)" : "")
            + ", \(report.pendingAfter) pending")
    }
    if pull {
        Output.line("pulled \(report.pulled) change set\(report.pulled == 1 ? "" : "s") in \(report.pages) page\(report.pages == 1 ? "" : "s"), "
            + "\(report.changedObjectIDs.count) object\(report.changedObjectIDs.count == 1 ? "" : "s") changed, "
            + "\(report.newConflicts) new conflict\(report.newConflicts == 1 ? "" : "s"), cursor \(report.cursor)")
    }
}

/// Runs a push, pull or both, turning client errors into runtime errors.
func exchange(_ storePath: String, push: Bool, pull: Bool, json: Bool) async throws {
    let replica = try openReplica(storePath)
    let client = try makeClient(replica)
    let report: SyncReport
    do {
        switch (push, pull) {
        case (true, false): report = try await client.push()
        case (false, true): report = try await client.pull()
        default: report = try await client.sync()
        }
    } catch {
        throw RuntimeError(error.description)
    }
    printReport(report, json: json, push: push, pull: pull)
}

let pushCommand = Command(
    name: "push", summary: "send local change sets to the server",
    help: """
        usage: sync push [--json]

        Registers the store's schema with the server if needed, then sends every local change
        set the server has not acknowledged. Safe to repeat: the server skips change sets it has.
        Network errors and 5xx responses are retried a few times with backoff.

        options:
          --json  print the report as one JSON object
        """,
    flags: ["json"]
) { arguments, storePath in
    _ = try arguments.positionals([])
    try await exchange(storePath, push: true, pull: false, json: arguments.flags.contains("json"))
}

let pullCommand = Command(
    name: "pull", summary: "fetch and merge other replicas' change sets from the server",
    help: """
        usage: sync pull [--json] [--push]

        Fetches the server's change sets after the store's cursor, page by page, and merges
        each page. The cursor is saved after each page, so an interrupted pull resumes.

        options:
          --push  push local change sets first (a full sync)
          --json  print the report as one JSON object
        """,
    flags: ["json", "push"]
) { arguments, storePath in
    _ = try arguments.positionals([])
    try await exchange(storePath, push: arguments.flags.contains("push"), pull: true, json: arguments.flags.contains("json"))
}

let logCommand = Command(
    name: "log", summary: "list the change sets in the store",
    help: """
        usage: sync log [--limit N]

        Lists the change sets the store holds, oldest first: one line each with its dot
        (replica:seq), HLC (milliseconds.counter), status (pending, sent, acknowledged, remote)
        and number of operations.

        options:
          --limit N  only the newest N
        """,
    options: ["limit"]
) { arguments, storePath in
    _ = try arguments.positionals([])
    var limit: Int?
    if let text = arguments.options["limit"] {
        guard let value = Int(text), value >= 0 else { throw UsageError(message: "--limit '\(text)' is not a count", command: "log") }
        limit = value
    }
    let replica = try openReplica(storePath)
    for entry in try replica.changeSetLog(limit: limit) {
        let changeSet = entry.changeSet
        Output.line("\(changeSet.dot)  hlc=\(changeSet.hlc)  \(entry.status.rawValue)  \(changeSet.operations.count) op\(changeSet.operations.count == 1 ? "" : "s")")
    }
}

let conflictsCommand = Command(
    name: "conflicts", summary: "show (or clear) the conflict journal",
    help: """
        usage: sync conflicts [--clear]

        Prints the conflict journal, one JSON object per entry: what merged away a committed
        change (kind, entity, object, property, winner, loser, cause, detail).

        options:
          --clear  remove all entries (after printing how many)
        """,
    flags: ["clear"]
) { arguments, storePath in
    _ = try arguments.positionals([])
    let replica = try openReplica(storePath)
    let entries = try replica.conflicts()
    if arguments.flags.contains("clear") {
        try replica.clearConflicts()
        Output.line("cleared \(entries.count) conflict entr\(entries.count == 1 ? "y" : "ies")")
        return
    }
    func side(_ side: ConflictEntry.Side?) -> Any {
        guard let side else { return NSNull() }
        return ["value": side.value ?? NSNull(), "dot": side.dot.description, "hlc": side.hlc.description] as [String: Any]
    }
    for entry in entries {
        Output.line(Output.json([
            "number": NSNumber(value: entry.number), "kind": entry.kind.rawValue, "entity": entry.entity,
            "object": entry.objectID.uuidString, "property": entry.property ?? NSNull(), "winner": side(entry.winner),
            "loser": side(entry.loser), "cause": entry.cause.description, "detail": entry.detail,
        ] as [String: Any]))
    }
}

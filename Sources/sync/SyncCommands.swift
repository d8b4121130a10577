import Codecs
import CommandLineArguments
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

let statusCommand = Command(CommandDescription(
    name: "status", summary: "show replica ID, version vector, pending changes, last sync and server",
    discussion: """
        Shows the store's replica ID, version vector, the number of local change sets the
        server has not acknowledged, when it last synced, its server, dataset and cursor, and
        the sync history the file holds (change sets by outbox state, field stamps, edges,
        deletes, tombstones, journal entries, bytes in use), the vector its history was compacted
        through and what the last compaction dropped. Does not contact the server.
        """,
    options: [.flag("json", "print one JSON object instead of lines")]
)) { arguments, storePath in
    let replica = try openReplica(storePath)
    let configuration = try SyncClient.Configuration.stored(in: replica)
    let state = try SyncClient.StoredState.read(from: replica)
    let vector = try replica.versionVector()
    let pending = try replica.unacknowledgedCount()
    let conflicts = try replica.conflictCount()
    let history = try replica.heldHistory()
    if arguments.isSet("json") {
        func count(_ value: Int) -> JSONValue { .integer(Int64(value)) }
        let object: [String: JSONValue] = [
            "store": .string(storePath), "replica": .string(replica.replicaID.uuidString),
            "pending": .integer(Int64(pending)), "conflicts": .integer(Int64(conflicts)),
            "vector": Output.vector(vector), "cursor": .string(state.cursor), "schemaHash": .string(replica.store.schemaDocument.versionHash),
            "lastSync": state.lastSuccessfulSync.map { .string(Output.date($0)) } ?? .null,
            "server": configuration.map { .string($0.serverURL.absoluteString) } ?? .null,
            "dataset": configuration.map { .string($0.dataset) } ?? .null,
            "certificateAuthorities": configuration?.certificateAuthorities.map { .string($0.path) } ?? .null,
            "history": .object([
                "changeSets": count(history.changeSets), "pending": count(history.pending), "sent": count(history.sent),
                "acknowledged": count(history.acknowledged), "remote": count(history.remote),
                "deleteRecords": count(history.deleteRecords), "tombstones": count(history.tombstones),
                "fieldStamps": count(history.fieldStamps), "edgeAdditions": count(history.edgeAdditions),
                "edgeRemovals": count(history.edgeRemovals), "journalEntries": count(history.journalEntries),
                "keptForNewerSchema": count(history.keptForNewerSchema), "fileBytes": .integer(history.fileBytes),
                "compactedThrough": Output.vector(history.compactedThrough),
                "forgottenBelow": history.forgottenBelow.map(Output.vector) ?? .null,
                "lastCompaction": history.lastCompaction.map { compaction in .object([
                    "stable": Output.vector(compaction.stable), "changeSets": count(compaction.changeSets),
                    "changeSetStampsKept": count(compaction.changeSetStampsKept), "tombstones": count(compaction.tombstones),
                    "fieldStamps": count(compaction.fieldStamps), "positions": count(compaction.positions),
                    "removedEdges": count(compaction.removedEdges), "forgottenObjects": count(compaction.forgottenObjects),
                    "forgottenEdges": count(compaction.forgottenEdges), "bytes": .integer(compaction.bytes),
                    "fileBytesFreed": .integer(compaction.fileBytesFreed),
                ]) } ?? .null,
            ]),
        ]
        Output.line(JSONValue.object(object).string)
    } else {
        Output.line("""
            store: \(storePath)
            replica: \(replica.replicaID.uuidString)
            vector: \(Output.vector(vector).string)
            pending: \(pending)
            conflicts: \(conflicts)
            last sync: \(state.lastSuccessfulSync.map(Output.date) ?? "never")
            server: \(configuration?.serverURL.absoluteString ?? "none")
            dataset: \(configuration?.dataset ?? "none")
            certificate authorities: \(configuration?.certificateAuthorities?.path ?? "the system's")
            cursor: \(state.cursor)
            history: \(history.changeSets) change sets (own: \(history.pending) pending, \(history.sent) sent, \(history.acknowledged) acknowledged; \(history.remote) from others)
                     \(history.fieldStamps) field stamps, \(history.edgeAdditions) edge additions, \(history.edgeRemovals) removals, \(history.deleteRecords) deletes, \(history.tombstones) tombstones
                     \(history.journalEntries) journal entries, \(history.fileBytes) bytes in use
                     \(history.keptForNewerSchema) change sets kept for a newer schema
            compacted through: \(Output.vector(history.compactedThrough).string)
            deleted objects forgotten below: \(history.forgottenBelow.map { Output.vector($0).string } ?? "none yet")
            last compaction: \(history.lastCompaction.map { compaction in
                "\(compaction.changeSets) change sets (\(compaction.changeSetStampsKept) keep their stamps), \(compaction.tombstones) tombstones, "
                    + "\(compaction.fieldStamps) field stamps, \(compaction.positions) positions, \(compaction.removedEdges) removed edges, "
                    + "\(compaction.forgottenObjects) objects forgotten with \(compaction.forgottenEdges) edges, \(compaction.bytes) bytes, "
                    + "\(compaction.fileBytesFreed) file bytes freed" } ?? "never")
            """)
    }
}

/// Prints what a push or pull did.
func printReport(_ report: SyncReport, json: Bool, push: Bool, pull: Bool) {
    if json {
        func count(_ value: Int) -> JSONValue { .integer(Int64(value)) }
        var object: [String: JSONValue] = [
            "registeredSchema": .bool(report.registeredSchema), "pushed": count(report.pushed),
            "alreadyOnServer": count(report.alreadyOnServer), "pulled": count(report.pulled),
            "pulledAlreadyApplied": count(report.pulledAlreadyApplied), "pages": count(report.pages),
            "changedObjects": count(report.changedObjectIDs.count), "newConflicts": count(report.newConflicts),
            "cursor": .string(report.cursor), "pending": count(report.pendingAfter),
        ]
        if !report.unrelayedAuthors.isEmpty {
            object["unrelayedAuthors"] = .array(report.unrelayedAuthors.map { .string($0.uuidString) })
        }
        if let rebootstrap = report.rebootstrap {
            object["rebootstrap"] = .object([
                "retiredReplica": .string(rebootstrap.retiredReplica.uuidString), "newReplica": .string(rebootstrap.newReplica.uuidString),
                "replayed": count(rebootstrap.replayed),
            ])
        }
        Output.line(JSONValue.object(object).string)
        return
    }
    if !report.unrelayedAuthors.isEmpty {
        Output.line("could not relay the change sets of \(report.unrelayedAuthors.map(\.uuidString).joined(separator: ", ")): "
            + "the server lost their keys; those replicas must push them again")
    }
    if let rebootstrap = report.rebootstrap {
        Output.line("the server retired replica \(rebootstrap.retiredReplica.uuidString): started again from its snapshot as replica "
            + "\(rebootstrap.newReplica.uuidString), replaying \(rebootstrap.replayed) unpushed change set\(rebootstrap.replayed == 1 ? "" : "s")")
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

let pushCommand = Command(CommandDescription(
    name: "push", summary: "send local change sets to the server",
    discussion: """
        Registers the store's schema with the server if needed, then sends every local change
        set the server has not acknowledged. Safe to repeat: the server skips change sets it has.
        Network errors and 5xx responses are retried a few times with backoff.
        """,
    options: [.flag("json", "print the report as one JSON object")]
)) { arguments, storePath in
    try await exchange(storePath, push: true, pull: false, json: arguments.isSet("json"))
}

let pullCommand = Command(CommandDescription(
    name: "pull", summary: "fetch and merge other replicas' change sets from the server",
    discussion: """
        Fetches the server's change sets after the store's cursor, page by page, and merges
        each page. The cursor is saved after each page, so an interrupted pull resumes.
        """,
    options: [.flag("push", "push local change sets first (a full sync)"), .flag("json", "print the report as one JSON object")]
)) { arguments, storePath in
    try await exchange(storePath, push: arguments.isSet("push"), pull: true, json: arguments.isSet("json"))
}

let logCommand = Command(CommandDescription(
    name: "log", summary: "list the change sets in the store",
    discussion: """
        Lists the change sets the store holds, oldest first: one line each with its dot
        (replica:seq), HLC (milliseconds.counter), status (pending, sent, acknowledged, remote)
        and number of operations.
        """,
    options: [.value("limit", valueName: "N", "only the newest N")]
)) { arguments, storePath in
    var limit: Int?
    if let text = arguments.value("limit") {
        guard let value = Int(text), value >= 0 else { throw arguments.usageError("--limit '\(text)' is not a count") }
        limit = value
    }
    let replica = try openReplica(storePath)
    for entry in try replica.changeSetLog(limit: limit) {
        let changeSet = entry.changeSet
        Output.line("\(changeSet.dot)  hlc=\(changeSet.hlc)  \(entry.status.rawValue)  \(changeSet.operations.count) op\(changeSet.operations.count == 1 ? "" : "s")")
    }
}

let conflictsCommand = Command(CommandDescription(
    name: "conflicts", summary: "show (or clear) the conflict journal",
    discussion: """
        Prints the conflict journal, one JSON object per entry: what merged away a committed
        change (kind, entity, object, property, winner, loser, cause, detail). Each side's
        "value" is a JSON value: an attribute's value (3, "Milk", {"real": 1.5}, an array for
        several columns), an object ID or a position key; null when the side wrote none.
        """,
    options: [.flag("clear", "remove all entries (after printing how many)")]
)) { arguments, storePath in
    let replica = try openReplica(storePath)
    let entries = try replica.conflicts()
    if arguments.isSet("clear") {
        try replica.clearConflicts()
        Output.line("cleared \(entries.count) conflict entr\(entries.count == 1 ? "y" : "ies")")
        return
    }
    func side(_ side: ConflictEntry.Side?) -> JSONValue {
        guard let side else { return .null }
        // The value as itself (`3`, `"x"`, `[…]`), `null` when the side wrote none.
        return .object(["value": side.value?.json ?? .null, "dot": .string(side.dot.description), "hlc": .string(side.hlc.description)])
    }
    for entry in entries {
        Output.line(JSONValue.object([
            "number": .integer(Int64(entry.number)), "kind": .string(entry.kind.rawValue), "entity": .string(entry.entity),
            "object": .string(entry.objectID.uuidString), "property": entry.property.map(JSONValue.string) ?? .null,
            "winner": side(entry.winner), "loser": side(entry.loser), "cause": .string(entry.cause.description),
            "detail": .string(entry.detail),
        ]).string)
    }
}

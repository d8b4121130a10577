import CommandLineArguments
import Foundation
import SyncEngine
import SyncServer

extension Command {
    static let replicaHorizonDays = OptionDescription.value(
        "replica-horizon-days", valueName: "N",
        "a replica silent for more than N days counts as retired: refused when it returns, not waited for by the stable vector (default 90)")
    static let replicaHorizonSeconds = OptionDescription.value(
        "replica-horizon-seconds", valueName: "N", "the same horizon in seconds, for tests (overrides --replica-horizon-days)")

    static let replicaCommand = CommandDescription(
        name: "replica", summary: "list a dataset's replicas and retire one",
        discussion: """
            Every replica that pushed or pulled (naming itself with exclude=) is recorded with its acknowledged
            vector (what it provably holds), when it was last seen and whether it is retired. A replica is
            active, silent (not seen for longer than the horizon: treated as retired) or retired. The stable
            vector, sent in every pull answer, is what every active replica holds.
            Retiring works while syncd runs: the replica's next push or pull gets 410 replica_retired, and its
            client starts again from a snapshot under a new replica ID, replaying its unpushed change sets.
            """,
        options: [data, database],
        subcommands: [
            CommandDescription(
                name: "list", summary: "list replica, last seen, acknowledged vector and state of dataset NAME",
                options: [
                    .value("dataset", valueName: "NAME", "the dataset", required: true),
                    replicaHorizonDays, replicaHorizonSeconds,
                    .flag("json", "one JSON object per line: replica, lastSeen, acknowledged, acknowledgedCursor, state"),
                ]),
            CommandDescription(
                name: "retire", summary: "retire replica UUID of dataset NAME",
                options: [
                    .value("dataset", valueName: "NAME", "the dataset", required: true),
                    .value("replica", valueName: "UUID", "the replica to retire (from 'syncd replica list')", required: true),
                ]),
        ])

    /// The horizon `--replica-horizon-seconds` or `--replica-horizon-days` gives (default 90 days).
    static func replicaHorizon(_ options: ParsedCommand) throws -> TimeInterval {
        if let text = options.value("replica-horizon-seconds") {
            guard let seconds = Double(text), seconds.isFinite, seconds > 0 else {
                throw options.usageError("--replica-horizon-seconds must be a number of seconds > 0, not '\(text)'")
            }
            return seconds
        }
        if let text = options.value("replica-horizon-days") {
            guard let days = Int(text), days >= 1, days <= 36_500 else {
                throw options.usageError("--replica-horizon-days must be a whole number from 1 to 36500, not '\(text)'")
            }
            return TimeInterval(days) * 86_400
        }
        return ReplicaPolicy.defaultHorizon
    }

    // MARK: replica

    static func replica(_ options: ParsedCommand) throws {
        let dataset = try options.requiredValue("dataset")
        guard DatasetRegistry.isValidName(dataset) else {
            throw options.usageError("'\(dataset)' is not a dataset name: 1-64 characters of A-Z a-z 0-9 . _ -, not starting with '.'")
        }
        let storage: ReplicaAdministration.Storage = options.value("database").map { .database($0) } ?? .dataDirectory(dataDirectory(options))
        switch options.name {
        case "list":
            let horizon = try replicaHorizon(options)
            let now = Date()
            for record in try ReplicaAdministration.replicas(of: dataset, in: storage) {
                let state = record.state(at: now, horizon: horizon).rawValue
                if options.isSet("json") {
                    let acknowledged = record.acknowledged.sortedEntries.map { "\"\($0.replica.storageText)\":\($0.seq)" }.joined(separator: ",")
                    print("{\"replica\":\"\(record.replica.storageText)\",\"lastSeen\":\"\(iso8601(record.lastSeen))\","
                          + "\"acknowledged\":{\(acknowledged)},\"acknowledgedCursor\":\(record.acknowledgedCursor),\"state\":\"\(state)\"}")
                } else {
                    let total = record.acknowledged.entries.values.reduce(0, +)
                    print("\(record.replica.storageText)  \(iso8601(record.lastSeen))  \(state)  cursor \(record.acknowledgedCursor)  "
                          + "\(record.acknowledged.entries.count) replica(s), \(total) change set(s) acknowledged")
                }
            }
        case "retire":
            let text = try options.requiredValue("replica")
            guard let replica = UUID(storageText: text) ?? UUID(uuidString: text) else {
                throw options.usageError("--replica must be a replica UUID, not '\(text)'")
            }
            try ReplicaAdministration.retire(replica, of: dataset, in: storage)
            print("retired replica \(replica.storageText) of '\(dataset)'")
        default:
            throw options.usageError("unknown command")
        }
    }
}

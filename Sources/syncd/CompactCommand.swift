import Codecs
import CommandLineArguments
import Foundation
import SyncEngine
import SyncServer

extension Command {
    /// Where `syncd serve --compact-every` and `syncd dataset compact` take a dataset's stable
    /// vector from: the meet of what its active replicas acknowledged (see `syncd replica list`),
    /// unless `dataset compact --below` names the vector.
    static let stableVector: @Sendable (any DatasetEngine) throws -> VersionVector? = { try $0.stableVector() }

    /// The default of `serve --compact-every`: four hours.
    static let defaultCompactionInterval: Duration = .seconds(4 * 3600)

    static let compactDescription = CommandDescription(
        name: "compact", summary: "compact dataset NAME's log below its stable vector (or the vector --below gives)",
        discussion: """
            Deletes the longest log prefix whose change sets every active replica has, with their stored
            change sets (those the merged state still refers to are kept), in one transaction. Pulls from
            a cursor before the compaction point are answered when the puller provably has what was
            compacted, else with 410 history_compacted (the client starts again from a snapshot). Safe
            while syncd serves the same DIR or database. Prints what it removed. With --database, a base
            (a cache's store file at the compaction point) is kept in PostgreSQL for new instances.
            """,
        options: [
            data,
            database,
            .value("dataset", valueName: "NAME", "the dataset to compact", required: true),
            .value("below", valueName: "VECTOR",
                   "compact below this version vector, as JSON ({\"<replica UUID>\": seq, ...}), instead of the dataset's stable vector; it must be one every replica has seen"),
        ])

    /// `syncd dataset compact`: compacts one dataset through the same service `serve` runs.
    static func compact(_ options: ParsedCommand, dataset name: String) throws {
        var configuration = SyncServiceConfiguration(dataDirectory: dataDirectory(options))
        configuration.databaseURL = options.value("database")
        if let text = options.value("below") {
            let vector = try parseVector(text, options)
            configuration.stableVector = { _ in vector }
        } else {
            configuration.stableVector = stableVector
        }
        let service = try SyncService(configuration: configuration)
        guard let report = try service.compactLog(of: name) else {
            throw RuntimeError(message: "nothing compacted in '\(name)': it has no schema")
        }
        print("entries removed \(report.entriesRemoved), change sets removed \(report.changeSetsRemoved), kept \(report.changeSetsKept), stamps kept \(report.changeSetStampsKept), bytes reclaimed \(report.payloadBytesRemoved + report.mergedState.bytes), tombstones \(report.mergedState.tombstones), removed edges \(report.mergedState.removedEdges), objects forgotten \(report.mergedState.forgottenObjects), identifiers released \(report.identifiersReleased), file bytes freed \(report.fileBytesFreed), entries folded into the floor \(report.entriesFolded), log start \(report.logStart.cursor)")
    }

    /// A version vector written as a JSON object of replica UUIDs to seqs.
    static func parseVector(_ text: String, _ options: ParsedCommand) throws -> VersionVector {
        do {
            return VersionVector(try JSONReader.read(Data(text.utf8)) { try $0.readReplicaMap() })
        } catch {
            throw options.usageError("--below must be a JSON object of replica UUIDs to seqs, not '\(text.prefix(80))': \(error)")
        }
    }
}

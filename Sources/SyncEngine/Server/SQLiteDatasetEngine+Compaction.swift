import Codecs
import Foundation
import LocalStoreCore

/// Log compaction of a store file (see ``CompactionReport``), and the pulls it concerns.
extension SQLiteDatasetEngine {
    /// How many log entries the search for the compaction point reads at a time.
    private static let compactionScanPageSize = 1_000

    /// Compacts the log below `stable` in one transaction: moves the entries of the longest log
    /// prefix whose change sets' vectors `stable` dominates into `_server_log_compacted` (cursor,
    /// dot and digest only) and deletes their change sets from the store, except those the
    /// merged state refers to. Compacting again with the same vector removes nothing.
    /// Then gives the freed pages back to the file system, as a client's compaction does (see
    /// ``SyncReplica/compactHistory(stable:droppingDeletedObjects:)``, "File size"): pulls wait
    /// for it on the engine's connection, but the one whole `VACUUM` a store needs runs only
    /// when a quarter of its file is free, and incremental vacuums cost the freed pages only.
    public func compactLog(stable: VersionVector) throws -> CompactionReport {
        try compactLog(stable: stable, replicas: nil)
    }

    /// ``compactLog(stable:)``, releasing the forgotten identifiers by the records of `replicas`
    /// (the registry of another storage: a PostgreSQL instance's cache keeps none), or by the
    /// store's own registry when `nil`.
    package func compactLog(stable: VersionVector, replicas: [ReplicaRecord]?) throws -> CompactionReport {
        try replica.withConnection { connection in
            let bytesBefore = StoreFileSpace.fileBytes(of: connection.path)
            var report = try connection.inTransaction {
                let previous = try ServerCompactedLogTable.compactionPoint(on: connection)
                let compacted = try Self.stablePrefix(after: previous?.cursor ?? 0, below: stable, on: connection)
                // The store's own registry decides the floor; the release, another storage's when given.
                let ownRecords = try ServerReplicaTable.records(on: connection)
                let forgottenEverywhere = ReplicaRegistry.forgottenEverywhereBelow(replicas ?? ownRecords, at: replicaPolicy.now(),
                                                                                   horizon: replicaPolicy.horizon)
                guard let point = compacted.last else {
                    var report = CompactionReport(entriesRemoved: 0, changeSetsRemoved: 0, changeSetsKept: 0, payloadBytesRemoved: 0,
                                                  logStart: previous ?? LogPosition(cursor: 0, digest: .empty))
                    report.entriesFolded = try raiseFloor(below: report.logStart.cursor, records: ownRecords, on: connection)
                    // Replicas report what they forgot after the compaction that forgot it, so a
                    // compaction with nothing new in the log may still release identifiers.
                    if let forgottenEverywhere {
                        report.identifiersReleased = try ServerForgottenObjectTable.release(forgottenEverywhereBelow: forgottenEverywhere, on: connection)
                    }
                    return report
                }
                // Each replica's latest change set stays whole: its vector proves to a pull from
                // before the compaction point what the replica has.
                let latest = Set(try VersionVectorTable.vector(on: connection).entries.map { Dot(replica: $0.key, seq: $0.value) })
                let dropped = compacted.map(\.dot).filter { !latest.contains($0) }
                let (removed, kept) = try CompactionTable.withDots(dropped, on: connection) { dotsTable in
                    // Of those the merge reads again (a delete's, a creation with unique values),
                    // the HLC and vector stay, as a replica's history compaction keeps them.
                    let selection = ChangeSetTable.named(in: dotsTable)
                    let kept = try CompactionTable.keep(selection, lookedUp: SyncTables.changeSetsLookedUpAgainQuery, on: connection)
                    return (try ChangeSetTable.remove(selection, on: connection), kept)
                }
                try ServerCompactedLogTable.moveLogEntries(through: point.cursor, on: connection)
                var report = CompactionReport(entriesRemoved: compacted.count, changeSetsRemoved: removed.count,
                                              changeSetsKept: compacted.count - dropped.count, payloadBytesRemoved: removed.bytes - kept.bytes,
                                              logStart: LogPosition(cursor: point.cursor, digest: point.digest))
                report.changeSetStampsKept = kept.count
                report.entriesFolded = try raiseFloor(below: point.cursor, records: ownRecords, on: connection)
                // The merged state's part below the vector, unless an app on an older schema may
                // still link an object the newer one deleted under a new name.
                let renames = SchemaRenames(from: nil, to: replica.store.schemaDocument).renamesSomething
                let state = try SyncTables.compactServerState(stable: stable, droppingDeletedObjects: !renames,
                                                              forgottenEverywhereBelow: forgottenEverywhere, on: connection)
                report.mergedState = state.mergedState
                report.journalEntriesRemoved = state.journalEntries
                report.identifiersReleased = state.identifiersReleased
                return report
            }
            if report.entriesRemoved > 0 || report.entriesFolded > 0 || report.mergedState.droppedRows > 0 || report.identifiersReleased > 0 {
                report.fileBytesFreed = StoreFileSpace.reclaim(on: connection, bytesBefore: bytesBefore)
            }
            return report
        }
    }

    /// Folds every compacted entry into the log's floor, whoever may still pull from before it:
    /// for a store no pull reads the log of (a PostgreSQL instance's cache, whose pulls read the
    /// shared log), where the per-entry records would only grow. Returns how many it folded.
    @discardableResult
    package func foldCompactedLog() throws -> Int {
        try replica.withConnection { connection in
            try connection.inTransaction {
                guard let point = try ServerCompactedLogTable.compactionPoint(on: connection) else { return 0 }
                return try ServerCompactedLogTable.raiseFloor(to: point.cursor, on: connection)
            }
        }
    }

    /// Folds into the log's floor the compacted entries up to `point` that every active replica
    /// has pulled past (see ``LogFloor``); returns how many. Nothing while no replica is active:
    /// a server that never heard of a puller cannot tell where it stands.
    private func raiseFloor(below point: Int64, records: [ReplicaRecord], on connection: SQLiteConnection) throws -> Int {
        guard point > 0, let cursor = LogFloor.cursor(below: point, records: records,
                                                      policy: replicaPolicy) else { return 0 }
        return try ServerCompactedLogTable.raiseFloor(to: cursor, on: connection)
    }

    /// The log entries after `cursor`, in order, up to the first whose change set `stable` does
    /// not dominate (its vector, not only its dot: a vector given by hand need not be closed
    /// under causality, and an entry must not be compacted before what it depends on).
    private static func stablePrefix(after cursor: Int64, below stable: VersionVector,
                                     on connection: SQLiteConnection) throws -> [LogEntry] {
        var prefix: [LogEntry] = []
        var position = cursor
        while true {
            let entries = try ServerLogTable.entries(after: position, limit: compactionScanPageSize, on: connection)
            for entry in entries {
                guard stable.covers(entry.dot) else { return prefix }
                guard let vector = try ChangeSetTable.vector(of: entry.dot, on: connection) else {
                    throw SyncError(.notSyncable, "\(connection.path): the change set \(entry.dot) of log entry \(entry.cursor) is not stored")
                }
                guard stable.dominates(vector) else { return prefix }
                prefix.append(entry)
            }
            guard let last = entries.last, entries.count == compactionScanPageSize else { return prefix }
            position = last.cursor
        }
    }

    /// Refuses, before the store file is migrated, a schema that would make the server merge its
    /// history again (one that renames) when its log was compacted: the change sets it would
    /// merge again are gone (see ``SyncReplica/requireWholeHistory(on:)``).
    ///
    /// - Throws: ``StoreError`` `.migrationImpossible`, naming the compaction point.
    static func refuseRenamesAfterCompaction(at path: String, schema: SchemaDocument) throws {
        guard let stored = try ObjectStore.storedSchema(at: path), stored.versionHash != schema.versionHash,
              SchemaRenames(from: stored, to: schema).renamesSomething else { return }
        let connection = try SQLiteConnection(path: path)
        guard try ServerCompactedLogTable.exists(on: connection),
              let point = try ServerCompactedLogTable.compactionPoint(on: connection) else { return }
        throw StoreError(.migrationImpossible,
                         "the schema renames entities, attributes or relationships, which needs every change set merged again, but the log was compacted up to cursor \(point.cursor)",
                         path: path)
    }

    /// Where a pull after `cursor` by `puller` starts reading the log: at `cursor` itself, or
    /// at the compaction point when `cursor` lies before it and the puller provably has every
    /// compacted entry after `cursor`, so that skipping them hands it exactly what reading them
    /// would have (see <doc:ServerStorage>, "Log compaction").
    ///
    /// A puller has a compacted entry it authored. It also has every entry covered by the
    /// vector of the latest change set it pushed: a replica's change set carries the vector of
    /// everything it had applied when it made it, and a replica never unapplies a change set.
    ///
    /// - Throws: ``DatasetEngineError/historyCompacted(_:logStart:unknown:)`` naming an entry
    ///   the puller cannot be shown to have.
    func readStart(after cursor: Int64, puller: ReplicaID?, on connection: SQLiteConnection) throws -> LogPosition? {
        guard let point = try ServerCompactedLogTable.compactionPoint(on: connection), cursor < point.cursor else { return nil }
        var known = VersionVector()
        if let puller {
            let latest = try VersionVectorTable.vector(on: connection)[puller]
            if latest > 0, let vector = try ChangeSetTable.vector(of: Dot(replica: puller, seq: latest), on: connection) {
                known = vector
            }
        }
        if let unknown = try ServerCompactedLogTable.firstUnknown(after: cursor, through: point.cursor, to: puller, known: known, on: connection) {
            throw DatasetEngineError.historyCompacted(cursor, logStart: point.cursor, unknown: unknown)
        }
        return point
    }
}

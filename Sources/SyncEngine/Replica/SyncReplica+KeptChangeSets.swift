import Foundation
import LocalStoreCore

extension SyncReplica {
    /// The replica a server keeps of a dataset: it refuses what its schema does not know instead
    /// of keeping it, since a server's schema is the newest any client registered.
    convenience init(serving store: ObjectStore) throws {
        try self.init(store: store, wallClock: HybridLogicalClock.wallClockMilliseconds, newReplicaID: UUID(), keepsUnknownOperations: false)
    }

    /// How many change sets this store applied only in part, because they name entities,
    /// attributes, relationships or values its schema does not know (a newer app's). They are
    /// kept whole; opening the store with a schema that knows more applies the rest.
    public func keptChangeSetCount() throws -> Int {
        try withConnection { try KeptChangeSetTable.count(on: $0) }
    }

    /// Applies `changeSet` of `batch` with `engine`: the part this schema knows, recording the
    /// change set as kept when that is not all of it.
    func merge(_ changeSet: ChangeSet, of batch: ValidatedBatch, with engine: MergeEngine, on connection: SQLiteConnection) throws {
        let applicable = batch.applicablePart(of: changeSet)
        try engine.apply(applicable)
        if applicable.operations.count != changeSet.operations.count {
            try KeptChangeSetTable.record(changeSet.dot, schemaVersionHash: store.schemaDocument.versionHash, on: connection)
        }
    }

    /// When change sets were applied in part by another schema than the store's (the app was
    /// upgraded since), merges the whole history again under this schema: the merge result is a
    /// function of the set of change sets, so what the older schema left out takes effect exactly
    /// as it did on replicas that knew it all along. One transaction: a failure leaves the file
    /// as it was.
    ///
    /// Conflicts found again are not journaled a second time (the journal keeps its entries),
    /// and rows of objects no change set created (saved before the store was set up for sync)
    /// are left alone.
    func mergeKeptChangeSetsIfSchemaChanged() throws {
        guard projection != nil else { return }
        let versionHash = store.schemaDocument.versionHash
        try withConnection { connection in
            guard try KeptChangeSetTable.hasEntries(notAppliedBy: versionHash, on: connection) else { return }
            try connection.inTransaction {
                let lastJournalEntry = try ConflictJournal.lastNumber(on: connection)
                for entity in schema.entities {
                    for id in try ObjectMetadataTable.identifiers(of: entity.name, on: connection) {
                        try entity.rows.deleteRow(id, on: connection)
                    }
                }
                try SyncTables.removeDerivedState(on: connection)
                // Merged in batches, so that memory does not grow with the history.
                var pending: [ChangeSet] = []
                func mergePending() throws {
                    guard !pending.isEmpty else { return }
                    let batch = try validate(pending)
                    let engine = try MergeEngine(schema: schema, connection: connection, isLocal: false)
                    for changeSet in batch.changeSets { try merge(changeSet, of: batch, with: engine, on: connection) }
                    try engine.materialize()
                    pending.removeAll(keepingCapacity: true)
                }
                try ChangeSetTable.forEachChangeSet(on: connection) { changeSet in
                    pending.append(changeSet)
                    if pending.count == 1_000 { try mergePending() }
                }
                try mergePending()
                try ConflictTable.removeRows(startingAfter: lastJournalEntry, on: connection)
            }
        }
    }
}

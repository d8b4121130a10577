import Foundation
import LocalStoreCore

extension SyncReplica {
    /// The replica a server keeps of a dataset: it refuses what its schema does not know instead
    /// of keeping it, since a server's schema is the newest any client registered.
    convenience init(serving store: ObjectStore) throws {
        try self.init(store: store, wallClock: HybridLogicalClock.wallClockMilliseconds, newReplicaID: UUID(), serving: true)
    }

    /// How many change sets this store applied only in part, because they name entities,
    /// attributes, relationships or values its schema does not know (a newer app's). They are
    /// kept whole; opening the store with a schema that knows more applies the rest.
    public func keptChangeSetCount() throws -> Int {
        try withConnection { try KeptChangeSetTable.count(on: $0) }
    }

    /// Applies `changeSet` of `batch` with `engine`: the part this schema knows, recording the
    /// change set as kept when that is not all of it. `keptObjects` are the objects whose
    /// creation was kept (loaded from the store, `nil` until needed): links to them are kept too.
    func merge(_ changeSet: ChangeSet, of batch: ValidatedBatch, with engine: MergeEngine, keptObjects: inout Set<UUID>?,
               on connection: SQLiteConnection) throws {
        let applicable = try knownOperations(of: changeSet, applicable: batch.applicablePart(of: changeSet), keptObjects: &keptObjects, on: connection)
        // A change set of sets only has no links to kept objects to leave out: validation's finding holds.
        try engine.apply(applicable, onlyLastWriterWinsSets: batch.runsOfSets.contains(changeSet.dot))
        if applicable.operations.count != changeSet.operations.count {
            try KeptChangeSetTable.record(changeSet.dot, schemaVersionHash: store.schemaDocument.versionHash, on: connection)
        }
    }

    /// What this replica applies of `changeSet`, given `applicable`, the part its schema knows:
    /// on a replica that keeps what it does not know, the objects created by what is left out are
    /// recorded as kept, and links to kept objects are left out too.
    private func knownOperations(of changeSet: ChangeSet, applicable: ChangeSet, keptObjects: inout Set<UUID>?,
                                 on connection: SQLiteConnection) throws -> ChangeSet {
        var applicable = applicable
        if projection.keepsUnknown {
            // Only a change set the schema knows in part can create objects of an unknown entity.
            let leftOut = applicable.operations.count == changeSet.operations.count ? [] : projection.objectsLeftOut(of: changeSet)
            try recordKeptObjects(leftOut, keptObjects: &keptObjects, on: connection)
            if let kept = keptObjects { SyncReplica.removeLinks(toKept: kept, from: &applicable.operations) }
        }
        return applicable
    }

    /// Adds `leftOut`, objects whose creation this replica keeps without applying it, to
    /// `keptObjects` (loaded from the store first if `nil`) and to the store.
    func recordKeptObjects(_ leftOut: [UUID], keptObjects: inout Set<UUID>?, on connection: SQLiteConnection) throws {
        if keptObjects == nil { keptObjects = try KeptChangeSetTable.keptObjects(on: connection) }
        guard !leftOut.isEmpty else { return }
        keptObjects?.formUnion(leftOut)
        try KeptChangeSetTable.recordKeptObjects(leftOut, on: connection)
    }

    /// Removes from `operations` the links, unlinks and positions naming an object in `kept`.
    static func removeLinks(toKept kept: Set<UUID>, from operations: inout [Operation]) {
        guard !kept.isEmpty else { return }
        operations.removeAll { operation in
            switch operation {
            case .link(_, let id, _, let other), .unlink(_, let id, _, let other, _), .position(_, let id, _, let other, _):
                kept.contains(id) || kept.contains(other)
            default: false
            }
        }
    }

    /// Merges the whole history again under the store's schema when the merged tables were
    /// derived under another one and that matters:
    ///
    /// - change sets were applied in part by another schema (the app was upgraded since);
    /// - the schema renames entities, attributes or relationships (the merged tables name them as
    ///   the change sets did);
    /// - the schema lacks something the tables were derived under (a file made by a newer app,
    ///   such as a server's snapshot, opened by an older one): what it lacks is then kept.
    ///
    /// The merge result is a function of the set of change sets, so what an older schema left out
    /// takes effect exactly as it did on replicas that knew it all along. One transaction: a
    /// failure leaves the file as it was.
    ///
    /// Conflicts found again are not journaled a second time (the journal keeps its entries),
    /// and rows of objects no change set created (saved before the store was set up for sync)
    /// are left alone. Other schema changes (additions only) keep the merged tables as they are,
    /// and with them what a migration stage wrote into the rows.
    func mergeHistoryAgainIfSchemaChanged() throws {
        let schema = store.schemaDocument
        try withConnection { connection in
            let merged = try SyncStateTable.mergedSchema(on: connection)
            guard merged?.versionHash != schema.versionHash else { return }
            try connection.inTransaction {
                let lacksSomething: Bool
                switch merged.map(schema.compatibility(with:)) {
                case .subset?, .incompatible?: lacksSomething = true
                case .identical?, .additive?, nil: lacksSomething = false
                }
                if try lacksSomething || SchemaRenames(from: merged, to: schema).renamesSomething
                    || KeptChangeSetTable.hasEntries(notAppliedBy: schema.versionHash, on: connection) {
                    // Merging again starts from nothing: after compaction the change sets it would
                    // start from are gone, and rebuilding from the rest would lose their effects.
                    let compacted = try CompactionTable.compactedVector(on: connection)
                    guard compacted.entries.isEmpty else {
                        throw SyncError(.historyCompacted, """
                            \(connection.path) must merge its history again under schema \(schema.versionHash) (merged under \
                            \(merged?.versionHash ?? "none"): renames, or change sets kept for a newer schema), but it compacted its \
                            history up to \(compacted); bootstrap it from a server's snapshot
                            """)
                    }
                    try mergeHistoryAgain(on: connection)
                }
                try SyncStateTable.setMergedSchema(schema, on: connection)
            }
        }
    }

    /// Rebuilds the merged tables and the entity rows of synced objects from the stored change
    /// sets, inside the caller's transaction.
    private func mergeHistoryAgain(on connection: SQLiteConnection) throws {
        try SyncReplica.requireWholeHistory(on: connection)
        let lastJournalEntry = try ConflictJournal.lastNumber(on: connection)
        for entity in schema.entities {
            for id in try ObjectMetadataTable.identifiers(of: entity.name, on: connection) {
                try entity.rows.deleteRow(id, on: connection)
            }
        }
        // Objects recorded under an entity's older name have their rows under its name now.
        for (older, current) in projection.renamedEntities {
            guard let entity = schema.entity(current) else { continue }
            for id in try ObjectMetadataTable.identifiers(of: older, on: connection) {
                try entity.rows.deleteRow(id, on: connection)
            }
        }
        try SyncTables.removeDerivedState(on: connection)
        // Merged in batches, so that memory does not grow with the history.
        var pending: [ChangeSet] = []
        var keptObjects: Set<UUID>? = []
        func mergePending() throws {
            guard !pending.isEmpty else { return }
            let batch = try validate(pending)
            let engine = try MergeEngine(schema: schema, connection: connection, keepsJournal: keepsConflictJournal)
            for changeSet in batch.changeSets { try merge(changeSet, of: batch, with: engine, keptObjects: &keptObjects, on: connection) }
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

import Foundation
import LocalStoreCore

/// What a store that starts again from a snapshot needs of its replica: the user's unpushed
/// change sets re-applied as new local edits, and the replica taking the identity of the
/// contents that replaced its file.
extension SyncReplica {
    /// Commits the operations of `changeSet` (another replica's, typically this store's own
    /// before it started again from a snapshot) as a new local change set of this replica, in
    /// one transaction, merging them as ``edit(_:)`` merges its edits: the result is what the
    /// user's edit does on top of what this store holds now, and conflicts are journaled as usual.
    /// Operations naming an object this store forgot (deleted concurrently, its history compacted)
    /// are journaled instead of replayed (CONTRACT.md §10, "Replaying onto a store that forgot").
    /// Returns the new change set, or `nil` when `changeSet` has no operations left to replay.
    @discardableResult
    public func replayLocally(_ changeSet: ChangeSet) throws -> ChangeSet? {
        guard !changeSet.operations.isEmpty else { return nil }
        let hub = store.changeHub
        return try hub.publishing { ticket, storeChange in try withConnection { connection in
            try connection.inTransaction {
                let engine = try MergeEngine(schema: schema, connection: connection, keepsJournal: keepsConflictJournal)
                engine.storeChangeRecord = hub.hasSubscribers ? StoreChangeRecord() : nil
                // What names an object the store forgot (deleted, its history compacted) cannot be
                // merged or pushed: it is journaled instead of replayed.
                let separated = try engine.separatingForgottenObjects(changeSet.operations)
                try engine.journalForgotten(separated, of: changeSet)
                guard !separated.kept.isEmpty else {
                    try engine.flushJournal()
                    return nil
                }
                let replayed = try ChangeSetTable.commitLocal(separated.kept, wallClock: wallClock(), on: connection)
                let findings = try validator.validate(replayed)
                try engine.apply(replayed, onlyLastWriterWinsSets: findings.onlyLastWriterWinsSets)
                try engine.materialize()
                if let record = engine.storeChangeRecord {
                    storeChange = record.storeChange(origin: .recordEdit)
                    ticket = hub.reserveTicket()
                }
                return replayed
            }
        } }
    }

    /// Takes the replica ID the store file holds now, after its contents were replaced by those
    /// of another store file (``SyncClient/rebootstrap()``). Local saves read the ID from the file
    /// in their own transaction, so a save committed right after the replacement is recorded
    /// under the new ID already.
    func adoptReplacedContents() throws {
        let replica = try withConnection { connection in
            guard let replica = try SyncStateTable.replicaID(on: connection) else {
                throw SyncError(.notSyncable, "\(connection.path) has no replica ID after its contents were replaced")
            }
            return replica
        }
        identity.withLock { $0 = replica }
    }
}

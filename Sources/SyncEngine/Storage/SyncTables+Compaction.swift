import Foundation
import LocalStoreCore

extension SyncTables {
    /// A query of the `(replica, seq)` of the change sets a merge reads again after their
    /// operations are gone: those that deleted something, voided or not (a delete root's vector
    /// says which edges its deleter had seen, its HLC stamps journal entries), and those that
    /// created objects with uniqueness values (their vectors say whether two creations were concurrent).
    static let changeSetsLookedUpAgainQuery = [
        DeleteTable.deletingChangeSetsQuery,
        VoidedDeleteTable.voidedChangeSetsQuery,
        ObjectMetadataTable.creatingChangeSetsQuery(of: UniqueMergeTable.objectsWithCreationValuesQuery),
    ].joined(separator: " UNION ")

    /// Drops the history below `stable` that no future merge can consult (see
    /// ``SyncReplica/compactHistory(stable:droppingDeletedObjects:)`` for the rules and why each holds), inside the
    /// caller's transaction. `stable` must already be lowered to what this store may use; with
    /// `droppingDeletedObjects` false, the tombstones, stamps and positions of deleted objects stay.
    static func compactHistory(stable: VersionVector, droppingDeletedObjects: Bool, on connection: SQLiteConnection) throws -> SyncReplica.HistoryCompaction {
        var report = SyncReplica.HistoryCompaction(stable: stable)
        guard !stable.entries.isEmpty else { return report }
        try CompactionTable.withStableVector(stable, on: connection) { stableTable in
            let settled = ChangeSetTable.settled(below: stableTable)
            // What a future merge looks up of a dropped change set stays: its HLC and vector.
            let kept = try CompactionTable.keep(settled, lookedUp: changeSetsLookedUpAgainQuery, on: connection)
            report.changeSetStampsKept = kept.count
            let removed = try ChangeSetTable.remove(settled, on: connection)
            report.changeSets = removed.count
            report.bytes += removed.bytes - kept.bytes
            if droppingDeletedObjects {
                try compactMergedState(below: stableTable, rememberingForgottenBelow: nil, into: &report, on: connection)
                try recordForgottenBelow(stable, stableTable: stableTable, on: connection)
            }
        }
        var compacted = try CompactionTable.compactedVector(on: connection)
        compacted.merge(stable)
        try CompactionTable.setCompactedVector(compacted, on: connection)
        if report.droppedRows > 0 { try CompactionTable.setLastCompaction(report, on: connection) }
        return report
    }

    /// What syncd's store drops of its merged state when it compacts its log below `stable`
    /// (lowered to the store's vector), inside the caller's transaction: what a replica's
    /// compaction drops of deleted objects and removed edges, unless `droppingDeletedObjects` is
    /// false; the identifiers of forgotten objects that no active replica holds a record of any
    /// more (`forgottenEverywhereBelow`, the meet of what they reported, `nil` while one has not:
    /// see ``ServerForgottenObjectTable``); and the conflict journal a syncd of an earlier release
    /// kept (syncd keeps none now).
    static func compactServerState(stable: VersionVector, droppingDeletedObjects: Bool, forgottenEverywhereBelow: VersionVector?,
                                   on connection: SQLiteConnection) throws -> ServerStateCompaction {
        let usable = SyncReplica.meet(stable, try VersionVectorTable.vector(on: connection))
        var compaction = ServerStateCompaction(mergedState: SyncReplica.HistoryCompaction(stable: usable))
        compaction.journalEntries = try ConflictTable.count(after: 0, on: connection)
        if compaction.journalEntries > 0 { try ConflictTable.removeAll(on: connection) }
        if droppingDeletedObjects, !usable.entries.isEmpty {
            try CompactionTable.withStableVector(usable, on: connection) { stableTable in
                try compactMergedState(below: stableTable, rememberingForgottenBelow: usable, into: &compaction.mergedState, on: connection)
            }
        }
        if let forgottenEverywhereBelow {
            compaction.identifiersReleased = try ServerForgottenObjectTable.release(forgottenEverywhereBelow: forgottenEverywhereBelow, on: connection)
        }
        return compaction
    }

    /// What ``compactServerState(stable:droppingDeletedObjects:forgottenEverywhereBelow:on:)`` dropped.
    struct ServerStateCompaction {
        /// What the merged state dropped, by the rules of a replica's compaction.
        var mergedState: SyncReplica.HistoryCompaction
        /// Entries of a conflict journal an earlier release kept.
        var journalEntries = 0
        /// Identifiers of forgotten objects released: no active replica holds their objects.
        var identifiersReleased = 0
    }

    /// Records, after a replica's compaction below the vector in `stableTable` (`stable`), that it
    /// holds no object deleted at or below it by a delete that is explicit and not void, when
    /// that is so: every object a server forgot below `stable` is then gone from this store too
    /// (it reports the vector on its pulls, see ``ServerForgottenObjectTable``). A store that
    /// keeps such an object (its delete may be re-judged, or a uniqueness merge names it) keeps
    /// the vector it recorded before, which stays true: no record of an object deleted below it
    /// can come back, since every change set still to arrive is causally after the delete.
    private static func recordForgottenBelow(_ stable: VersionVector, stableTable: String, on connection: SQLiteConnection) throws {
        let holdsSettledDelete = try CompactionTable.withSettledObjects(on: connection) { settledTable in
            try DeleteTable.insertSettledDeletes(into: settledTable, below: stableTable, on: connection)
            return try connection.rows("SELECT 1 FROM \(settledTable) LIMIT 1").first != nil
        }
        guard !holdsSettledDelete else { return }
        var forgotten = try CompactionTable.forgottenBelow(on: connection) ?? VersionVector()
        forgotten.merge(stable)
        try CompactionTable.setForgottenBelow(forgotten, on: connection)
    }

    /// Drops what no merge to come asks about of deleted objects (their tombstones, stamps and
    /// positions, then every trace of those whose deletes no merge can re-judge) and of removed
    /// edges, below the stable vector in `stableTable`. All rest on one premise: no change set
    /// still to arrive writes to or links an object deleted for good, which a replica on an older
    /// schema may break (it may not apply a delete of an entity it knows under another name), so
    /// callers skip this while one is active. With `rememberingForgottenBelow` (a server's store:
    /// the stable vector of `stableTable`), the identifiers of the objects forgotten stay
    /// (``ServerForgottenObjectTable``).
    private static func compactMergedState(below stableTable: String, rememberingForgottenBelow: VersionVector?,
                                           into report: inout SyncReplica.HistoryCompaction, on connection: SQLiteConnection) throws {
        try CompactionTable.withUnsettledObjects(on: connection) { unsettledTable in
            // First the objects whose deletes a change set above the vector may judge otherwise
            // elsewhere: their last values may be needed again.
            try EdgeTable.insertObjectsWithDeletesJudgedAboveStable(stableTable, into: unsettledTable, on: connection)
            try dropDeletedObjects(below: stableTable, except: unsettledTable, into: &report, on: connection)
            // Then every object whose delete a merge may still undo or re-judge here.
            try DeleteTable.insertUnsettledObjects(into: unsettledTable, below: stableTable, on: connection)
            let edges = try EdgeTable.removeSettledRemovals(below: stableTable, unsettled: unsettledTable, on: connection)
            report.removedEdges = edges.edges
            report.bytes += edges.bytes
            try forgetSettledObjects(below: stableTable, unsettled: unsettledTable, rememberingForgottenBelow: rememberingForgottenBelow,
                                     into: &report, on: connection)
        }
    }

    /// Forgets the objects deleted for good whose deletes no merge to come can re-judge: their
    /// creation rows, delete records, edges (removed or hidden), uniqueness and counter records
    /// go, and so do the kept stamps of change sets no remaining record names.
    ///
    /// An object is forgotten when every delete record of it is explicit, at or below the stable
    /// vector and not void (no cascade a merge added, which later edges re-judge), when neither it
    /// nor an object it is linked to is in `unsettledTable` (its delete may be judged otherwise
    /// above the vector, or a merge may still undo or re-judge it), when no uniqueness merge names
    /// it, and when each of its delete roots deleted only objects forgotten with it. Every change
    /// set still to arrive is causally after its delete and was written where the delete stood,
    /// so none can void it, write to it, link it or be concurrent with its creation: a merge would
    /// find nothing to re-judge in what is dropped, and a store that keeps it ends the same.
    private static func forgetSettledObjects(below stableTable: String, unsettled unsettledTable: String, rememberingForgottenBelow: VersionVector?,
                                             into report: inout SyncReplica.HistoryCompaction, on connection: SQLiteConnection) throws {
        try CompactionTable.withSettledObjects(on: connection) { forgettable in
            try DeleteTable.insertSettledDeletes(into: forgettable, below: stableTable, on: connection)
            try CompactionTable.removeObjects(in: unsettledTable, from: forgettable, on: connection)
            try ObjectMetadataTable.keepOnlyWithoutRow(in: forgettable, on: connection)
            try EdgeTable.keepOnlyObjectsWithoutEdges(toAnyIn: unsettledTable, in: forgettable, on: connection)
            try UniqueMergeTable.keepOnlyUnmerged(in: forgettable, on: connection)
            try DeleteTable.keepOnlyWholeRoots(in: forgettable, on: connection)
            if let rememberingForgottenBelow {
                try ServerForgottenObjectTable.insert(objectsIn: forgettable, forgottenBelow: rememberingForgottenBelow, on: connection)
            }
            let edges = try EdgeTable.remove(touching: forgettable, on: connection)
            let deleteRecordBytes = try DeleteTable.remove(objectsIn: forgettable, on: connection)
            report.bytes += edges.bytes + deleteRecordBytes
            try UniqueMergeTable.removeCreationValues(ofObjectsIn: forgettable, on: connection)
            try CounterTable.remove(objectsIn: forgettable, on: connection)
            let objects = try ObjectMetadataTable.remove(objectsIn: forgettable, on: connection)
            report.forgottenObjects = objects.objects
            report.forgottenEdges = edges.edges
            report.bytes += objects.bytes
            report.bytes += try CompactionTable.removeStamps(notIn: changeSetsLookedUpAgainQuery, on: connection)
        }
    }

    /// Drops the tombstones, stamps and positions of objects deleted for good below the stable
    /// vector in `stableTable`, except those in `undecidedTable` (columns `entity, id`), counting them in `report`.
    private static func dropDeletedObjects(below stableTable: String, except undecidedTable: String,
                                           into report: inout SyncReplica.HistoryCompaction, on connection: SQLiteConnection) throws {
        try CompactionTable.withSettledObjects(on: connection) { settledTable in
            // Deleted objects whose delete can never be undone: an explicit delete (not a cascade a
            // merge added, which later edges re-judge) at or below the stable vector whose root is
            // not void, judged so on the change sets at or below the vector (every store holds
            // those, and every change set still to come was written on top of them). Every future
            // change set is causally after the delete, and was written where it stood.
            try DeleteTable.insertSettledDeletes(into: settledTable, below: stableTable, on: connection)
            try CompactionTable.removeObjects(in: undecidedTable, from: settledTable, on: connection)
            try ObjectMetadataTable.keepOnlyTombstoned(in: settledTable, on: connection)
            // The last values stay only to bring the object back when its delete is voided.
            let tombstones = try ObjectMetadataTable.clearTombstones(ofObjectsIn: settledTable, on: connection)
            report.tombstones = tombstones.tombstones
            report.bytes += tombstones.bytes
            // Stamps decide between a write and a concurrent one, and nothing can write to the object again.
            let stamps = try FieldStampTable.remove(objectsIn: settledTable, on: connection)
            report.bytes += stamps.bytes
            report.fieldStamps = stamps.stamps
            // Positions order live members of live owners; the object is neither again.
            let positions = try PositionTable.remove(objectsIn: settledTable, on: connection)
            report.bytes += positions.bytes
            report.positions = positions.positions
        }
    }
}

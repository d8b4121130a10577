import Codecs
import Foundation
import LocalStoreCore

extension MergeEngine {
    /// A `set` of a last-writer-wins attribute, with what ``LastWriterWinsResolver`` judges it by.
    struct LastWriterWinsSet {
        /// The write's change set's stamp and vector, and the attribute's name.
        var judged: LastWriterWinsResolver.Write
        /// The write's change set in the held run and its operation there (journal entries of a
        /// run are numbered in that order, see ``SetRun``); unused outside a run.
        var position: (changeSet: Int32, operation: Int32)
        var attribute: SyncSchema.Attribute
        var values: [SQLValue]
    }

    /// Judges `writes` (in change set order) on `object` by ``LastWriterWinsResolver`` and writes
    /// the outcome (see ``apply(_:of:to:in:known:survivor:)``).
    func applyLastWriterWins(_ writes: [LastWriterWinsSet], to object: ObjectKey, in entity: SyncSchema.Entity, known: ObjectInfo) throws {
        if known.storedFieldStamps == nil { try loadFieldStamps(object.entity, of: [object.id: known]) }
        let state = try lastWriterWinsState(of: object, known: known)
        let outcome = LastWriterWinsResolver(keepsJournal: keepsJournal).judge(writes.lazy.map { $0.judged }, on: state)
        try apply(outcome, of: writes, to: object, in: entity, known: known, survivor: state.survivor)
    }

    /// What ``LastWriterWinsResolver`` judges writes to `object` by: its creation, its stamps
    /// (stored ones must be read: ``ObjectInfo/storedFieldStamps``), and when the journal is
    /// kept, the deletes in force that remove it and the survivor of a uniqueness merge.
    func lastWriterWinsState(of object: ObjectKey, known: ObjectInfo) throws -> LastWriterWinsResolver.Object {
        var state = LastWriterWinsResolver.Object(creation: known.creation, storedStamps: known.storedFieldStamps ?? FieldStamps(),
                                                  pendingStamps: known.pendingFieldStamps)
        if keepsJournal {
            if known.mayBeDeleted { state.deletes = try deletesInForce(of: object) }
            if !mirror.mergedDuplicates.isEmpty { state.survivor = mirror.mergedDuplicates[object] }
        }
        return state
    }

    /// Writes what ``LastWriterWinsResolver`` judged of `writes` on `object`: the journal entries
    /// first, while the object still holds what a `held` side shows, then the winning values and
    /// stamps, kept in `known` until ``flushPendingWrites(keepingJournal:)``.
    func apply(
        _ outcome: LastWriterWinsResolver.Outcome, of writes: [LastWriterWinsSet], to object: ObjectKey, in entity: SyncSchema.Entity,
        known: ObjectInfo, survivor: UUID?
    ) throws {
        for entry in outcome.entries {
            // Fields read in place rather than the write copied: this runs once per lost write.
            let attribute = writes[entry.write].attribute
            func side(_ side: LastWriterWinsResolver.Side) throws -> JournalSide {
                switch side.value {
                case .none: return JournalSide(value: .none, stamp: side.stamp)
                case .written(let index): return self.side(values: writes[index].values, side.stamp)
                case .held: return try currentSide(of: attribute, object: object, known: known, side.stamp)
                case .survivor(let survivor): return self.side("\"\(survivor.storageText)\"", side.stamp)
                }
            }
            setRun.position = writes[entry.write].position
            let (kind, detail): (ConflictEntry.Kind, JournalDetail) = switch entry.reason {
            case .concurrentWrites: (.attribute, .concurrentAttributeWrites)
            case .deletedConcurrently: (.updateVersusDelete, MergeEngine.updateOfDeletedDetail(object, attribute: attribute.name))
            case .mergedDuplicate:
                (.uniqueMerged, MergeEngine.writeToMergedDuplicateDetail(object, attribute: attribute.name, survivor: survivor ?? object.id))
            }
            try journal(kind, entity: object.entity, object: object.id, property: attribute.name,
                        winner: try side(entry.winner), loser: try side(entry.loser), cause: writes[entry.write].judged.stamp.dot, detail: detail)
        }
        for index in outcome.winners {
            let winner = writes[index]
            notePendingWrite(object, known)
            known.pendingFieldStamps[winner.attribute.name] = winner.judged.stamp
            try write(winner.values, to: winner.attribute, of: object, in: entity, known: known)
        }
    }

    /// The roots of the deletes of `kind` in force (not void) that remove `object`.
    func deleteRootsInForce(of object: ObjectKey, _ kind: DeleteTable.Kind = .any) throws -> [DeleteRoot] {
        try DeleteTable.roots(deleting: object, kind, on: connection).filter { !mirror.voided.contains($0) }
    }

    /// The deletes in force (not void) that remove `object`, each with the stamp of its change set.
    func deletesInForce(of object: ObjectKey) throws -> [(dot: Dot, stamp: Stamp)] {
        try deleteRootsInForce(of: object).map { root in
            (root.dot, Stamp(hlc: try hlc(of: root.dot), replica: root.dot.replica, seq: root.dot.seq))
        }
    }

    /// The sentence of an `update_vs_delete` entry.
    static func updateOfDeletedDetail(_ object: ObjectKey, attribute: String) -> JournalDetail {
        .text("\(object.entity) \(object.id) was deleted concurrently with an update of \(attribute): the delete won")
    }

    /// The sentence of a `unique_merged` entry for a write to a merged duplicate.
    static func writeToMergedDuplicateDetail(_ object: ObjectKey, attribute: String, survivor: UUID) -> JournalDetail {
        .text("\(object.entity).\(attribute) of \(object.id) was written after \(object.id) was merged into \(survivor) for equal unique values; the write is kept on the merged object only")
    }
}

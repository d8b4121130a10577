import Foundation
import LocalStoreCore

extension SyncReplica {
    /// How much sync history a store file holds next to its objects: what a long-lived store
    /// accumulates until ``SyncReplica/compactHistory(stable:droppingDeletedObjects:)`` drops what is stable.
    public struct HeldHistory: Sendable, Equatable {
        /// This replica's change sets not sent yet.
        public var pending: Int
        /// This replica's change sets sent, not yet acknowledged by the server.
        public var sent: Int
        /// This replica's change sets the server stored.
        public var acknowledged: Int
        /// Change sets received from other replicas.
        public var remote: Int
        /// Deletes recorded (explicit and by cascade, in force or voided).
        public var deleteRecords: Int
        /// Objects without a row that keep their last values (deleted objects, and objects
        /// known only from a change set that has not created them here yet).
        public var tombstones: Int
        /// Stamps of the last write to an attribute.
        public var fieldStamps: Int
        /// Relationship edge additions (links), removed ones included.
        public var edgeAdditions: Int
        /// Removals of edge additions (by unlinks, and by further deletes that removed one again).
        public var edgeRemovals: Int
        /// Entries of the conflict journal.
        public var journalEntries: Int
        /// Change sets applied only in part, kept for a newer schema (``SyncReplica/keptChangeSetCount()``).
        public var keptForNewerSchema: Int = 0
        /// The join of the stable vectors the store was compacted with (empty when it never was):
        /// change sets at or below it may be gone (``SyncReplica/compactHistory(stable:droppingDeletedObjects:)``).
        public var compactedThrough = VersionVector()
        /// The vector below which the store holds no deleted object, which its pulls report to the
        /// server (``SyncReplica/forgottenBelow()``); `nil` until a compaction found none.
        public var forgottenBelow: VersionVector?
        /// What the last compaction that dropped anything dropped, `nil` before the first.
        public var lastCompaction: HistoryCompaction?
        /// Bytes of the store file in use (entity tables included; free pages excluded).
        public var fileBytes: Int64

        /// Every change set the store holds.
        public var changeSets: Int { pending + sent + acknowledged + remote }
    }

    /// How much sync history the store file holds (counted now; a few queries over the sync tables).
    public func heldHistory() throws -> HeldHistory {
        try withConnection { try SyncTables.heldHistory(on: $0) }
    }
}

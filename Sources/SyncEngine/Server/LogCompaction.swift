import Foundation

/// What ``DatasetEngine/compactLog(stable:)`` removed, and where the log starts now.
///
/// The compaction point is the end of the longest log prefix whose change sets are all covered
/// by the stable vector: every active replica has them, so no pull needs them again. The
/// entries of that prefix leave the log and their change sets leave the store, except each
/// replica's latest change set (whose vector proves what the replica has to a pull from before
/// the compaction point), which is kept whole. Of the change sets the merged state still refers
/// to (a delete's, whose vector decides which references the delete had seen; the creation of
/// an object with unique values, whose vector decides which creations were concurrent), the HLC
/// and vector stay, so that later merges decide exactly as before.
public struct CompactionReport: Sendable, Equatable {
    /// Log entries compacted now.
    public var entriesRemoved: Int
    /// Change sets deleted from the store now.
    public var changeSetsRemoved: Int
    /// Change sets of compacted entries kept whole: each is its author's latest.
    public var changeSetsKept: Int
    /// Of the change sets deleted now, those whose HLC and vector stay because the merged state
    /// refers to them (a delete's, a creation with unique values).
    public var changeSetStampsKept: Int = 0
    /// The bytes of the deleted change sets' stored columns (operations, vector, authenticator),
    /// net of the stamps kept: what the store file can reuse. The file shrinks by the freed pages, see ``fileBytesFreed``.
    public var payloadBytesRemoved: Int64
    /// How many bytes smaller the dataset's store file and its WAL are after the compaction than
    /// before it (SQLite storage, and a PostgreSQL instance's cache): the freed pages go back to
    /// the file system. 0 when nothing was compacted.
    public var fileBytesFreed: Int64 = 0
    /// What the store's merged state dropped with the log, by the rules of a replica's history
    /// compaction (``SyncReplica/compactHistory(stable:droppingDeletedObjects:)``): the
    /// tombstones, stamps and positions of objects deleted for good and the removed edges no
    /// merge to come asks about. Nothing while the dataset's schema renames something (an app
    /// on the older schema may still link an object deleted under the new name).
    public var mergedState = SyncReplica.HistoryCompaction(stable: VersionVector())
    /// Compacted entries folded into the log's floor now: every active replica had pulled past
    /// them, so the server keeps no cursor, dot or digest of each any more, only the floor they form.
    public var entriesFolded: Int = 0
    /// Identifiers of forgotten objects the server stopped remembering now: every active
    /// replica reported that it holds no object deleted at or below the compaction that forgot
    /// them (see <doc:ServerStorage>, "Forgotten identifiers").
    public var identifiersReleased: Int = 0
    /// Entries of a conflict journal that a syncd of an earlier release kept (syncd keeps none:
    /// every replica journals what it loses itself), removed by this compaction.
    public var journalEntriesRemoved: Int = 0
    /// The compaction point after this compaction: the last compacted entry's cursor and the
    /// digest of the log up to it (cursor 0 while nothing was ever compacted). A pull naming a
    /// cursor at or after it is answered as before; one before it only when the puller
    /// provably has every compacted entry after its cursor.
    public var logStart: LogPosition

    /// A report with these fields.
    public init(entriesRemoved: Int, changeSetsRemoved: Int, changeSetsKept: Int, payloadBytesRemoved: Int64, logStart: LogPosition,
                fileBytesFreed: Int64 = 0) {
        self.fileBytesFreed = fileBytesFreed
        self.entriesRemoved = entriesRemoved
        self.changeSetsRemoved = changeSetsRemoved
        self.changeSetsKept = changeSetsKept
        self.payloadBytesRemoved = payloadBytesRemoved
        self.logStart = logStart
    }
}

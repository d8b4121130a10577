import Foundation
import LocalStoreCore

/// What a ``SyncClient`` is doing and how its last sync went; a value, so it can be shown or
/// compared freely. Read ``SyncClient/status`` or follow ``SyncClient/statusUpdates()``.
public struct SyncStatus: Sendable, Equatable {
    /// Whether a sync is running now.
    public var isSyncing: Bool
    /// Local change sets the server has not acknowledged yet.
    public var pendingCount: Int
    /// When the last sync that completed without error finished.
    public var lastSuccessfulSync: Date?
    /// Why the last sync failed; `nil` after a successful one.
    public var lastError: SyncClientError?
    /// What the last successful sync did.
    public var lastReport: SyncReport?

    /// A status with these values; a client starts idle, with its store's pending count.
    public init(isSyncing: Bool = false, pendingCount: Int = 0, lastSuccessfulSync: Date? = nil,
                lastError: SyncClientError? = nil, lastReport: SyncReport? = nil) {
        self.isSyncing = isSyncing
        self.pendingCount = pendingCount
        self.lastSuccessfulSync = lastSuccessfulSync
        self.lastError = lastError
        self.lastReport = lastReport
    }
}

/// What one ``SyncClient/sync()`` (or push, or pull) did.
public struct SyncReport: Sendable, Equatable {
    /// Whether the schema was registered with the server during this sync.
    public var registeredSchema: Bool = false
    /// Local change sets the server stored now.
    public var pushed: Int = 0
    /// Local change sets the server already had (an earlier push whose answer was lost).
    public var alreadyOnServer: Int = 0
    /// Push requests sent.
    public var pushBatches: Int = 0
    /// Remote change sets applied to the store.
    public var pulled: Int = 0
    /// Pulled change sets the store already had.
    public var pulledAlreadyApplied: Int = 0
    /// Pull pages received.
    public var pages: Int = 0
    /// Objects whose stored rows changed by the pull: refresh contexts with them
    /// (`context.refresh(objectIDs:)`).
    public var changedObjectIDs: Set<UUID> = []
    /// Conflict journal entries the pull added.
    public var newConflicts: Int = 0
    /// The oldest conflict journal entries removed after the pull to keep the journal at
    /// ``SyncClient/Configuration/conflictRetention``; 0 when it keeps every entry.
    public var conflictsRemoved: Int = 0
    /// The pull cursor after this sync (the last log position fully applied).
    public var cursor: String = "0"
    /// Local change sets still not acknowledged afterwards.
    public var pendingAfter: Int = 0
    /// Replicas whose change sets this sync could not relay to a server restored from a backup:
    /// the server lost their keys, so it stores their change sets (and those that depend on
    /// them) only when those replicas push again themselves.
    public var unrelayedAuthors: [ReplicaID] = []
    /// Set when the server refused this replica (`replica_retired`, `history_compacted`) and
    /// the store started again from a snapshot under a new replica ID: every object may have
    /// changed, so refresh every context (``changedObjectIDs`` does not list them).
    public var rebootstrap: Rebootstrap?
    /// What the store dropped of its history after the pull, below the server's stable vector
    /// (``SyncClient/Configuration/historyCompaction``); `nil` when that vector had not moved.
    public var compaction: SyncReplica.HistoryCompaction?

    /// What starting again from a snapshot did (``SyncClient/rebootstrap()``).
    public struct Rebootstrap: Sendable, Equatable {
        /// The replica ID the server refused.
        public var retiredReplica: ReplicaID
        /// The store's new replica ID.
        public var newReplica: ReplicaID
        /// Unpushed change sets replayed as new local change sets of ``newReplica``.
        public var replayed: Int
    }

    /// A report of a sync that has done nothing yet.
    public init() {}
}

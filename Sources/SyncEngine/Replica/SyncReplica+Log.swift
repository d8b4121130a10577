import Foundation
import LocalStoreCore

extension SyncReplica {
    /// A change set stored in the replica, with its outbox status (``OutboxStatus/remote`` for
    /// other replicas' change sets).
    public struct LoggedChangeSet: Sendable, Equatable {
        /// The change set.
        public var changeSet: ChangeSet
        /// Where it stands in the outbox, or ``OutboxStatus/remote``.
        public var status: OutboxStatus
    }

    /// Every change set this replica holds, local and remote, in `(HLC, replica ID)` order
    /// (which respects causality); at most `limit` of the newest when given.
    public func changeSetLog(limit: Int? = nil) throws -> [LoggedChangeSet] {
        try withConnection { connection in
            try ChangeSetTable.log(limit: limit, on: connection).map { LoggedChangeSet(changeSet: $0.changeSet, status: $0.status) }
        }
    }
}

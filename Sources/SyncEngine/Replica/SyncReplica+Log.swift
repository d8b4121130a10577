import Foundation
import LocalStoreCore

extension SyncReplica {
    /// A change set stored in the replica, with its outbox status (``OutboxStatus/remote`` for
    /// other replicas' change sets).
    public struct LoggedChangeSet: Sendable, Equatable {
        public var changeSet: ChangeSet
        public var status: OutboxStatus
    }

    /// Every change set this replica holds, local and remote, in `(HLC, replica ID)` order
    /// (which respects causality); at most `limit` of the newest when given.
    public func changeSetLog(limit: Int? = nil) throws -> [LoggedChangeSet] {
        try withConnection { connection in
            var sql = "SELECT replica, seq, hlc, vector, operations, status FROM _sync_changeset ORDER BY hlc DESC, replica DESC"
            var arguments: [SQLValue] = []
            if let limit {
                sql += " LIMIT ?"
                arguments.append(.integer(Int64(limit)))
            }
            return try connection.rows(sql, arguments).reversed().map { row in
                guard case .text(let status) = row[5], let outboxStatus = OutboxStatus(rawValue: status) else {
                    throw SyncError(.notSyncable, "a stored change set has an unknown status")
                }
                return LoggedChangeSet(changeSet: try SyncTables.decodeChangeSet(row), status: outboxStatus)
            }
        }
    }
}

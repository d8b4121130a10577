import Foundation
import LocalStoreCore

/// A dataset engine that merges a change set a slice of operations at a time, so that a large
/// upload is never decoded whole (see "Large change sets" in `Protocol/README.md`).
public protocol SlicedChangeSetApplying {
    /// Pushes the one change set `slices` holds as ``DatasetEngine/apply(_:pushedBy:)`` pushes a
    /// batch holding it alone: the same checks, the same author verification, one transaction.
    func apply(slices: some ChangeSetSlices, pushedBy pusher: ReplicaCredentials?) throws -> DatasetApplyResult
}

extension SQLiteDatasetEngine: SlicedChangeSetApplying {
    /// Merges the change set in slices (``SyncReplica/apply(slices:)``), records the push, checks
    /// the author against the operations as they are stored, and logs it, all in one transaction.
    public func apply(slices: some ChangeSetSlices, pushedBy pusher: ReplicaCredentials?) throws -> DatasetApplyResult {
        let result = try replica.apply(slices: slices) { connection, header, operations in
            if let pusher { try recordPush(by: pusher.replica, of: [header], on: connection) }
            try ChangeSetAuthenticator.verify(
                operations == nil ? [] : [header], pushedBy: pusher,
                registeredKey: { try ServerReplicaKeyTable.key(of: $0, on: connection) },
                register: { try ServerReplicaKeyTable.register($0, on: connection) },
                isAuthentic: { changeSet, key in
                    operations.map { ChangeSetAuthenticator.isAuthentic(changeSet, operations: $0, key: key) } ?? false
                })
            if operations != nil { try ServerLogTable.append([header], on: connection) }
        }
        return try answer(to: result)
    }
}

import Codecs
import Foundation
import LocalStoreCore

/// The replica registry of a dataset kept in one store file (`_server_replica`).
extension SQLiteDatasetEngine {
    /// Refuses a retired pusher and records what it pushed, inside the push's transaction.
    func recordPush(by pusher: ReplicaID, of changeSets: [ChangeSet], on connection: SQLiteConnection) throws {
        let existing = try ServerReplicaTable.record(of: pusher, on: connection)
        let updated = try ReplicaRegistry.contact(existing, replica: pusher, pushed: ReplicaRegistry.vector(of: changeSets),
                                                  policy: replicaPolicy) { _, _ in VersionVector() }
        guard let updated else { return }
        try ServerReplicaTable.save(updated, on: connection)
        stableVectorCache.invalidate()
    }

    /// Reads the replica's record and writes it back only when the contact changed it.
    public func recordPull(by replica: ReplicaID, after cursor: Int64, unpushed: UnpushedBounds, forgotten: VersionVector?) throws {
        try self.replica.withConnection { connection in
            let existing = try ServerReplicaTable.record(of: replica, on: connection)
            let updated = try ReplicaRegistry.contact(existing, replica: replica, pulledAfter: cursor, unpushed: unpushed, forgotten: forgotten,
                                                      policy: replicaPolicy) { after, through in
                try ServerLogTable.vector(after: after, through: through, on: connection)
            }
            guard let updated else { return }
            try ServerReplicaTable.save(updated, on: connection)
            stableVectorCache.invalidate()
        }
    }

    /// Every record of `_server_replica`.
    public func replicas() throws -> [ReplicaRecord] {
        try replica.withConnection { try ServerReplicaTable.records(on: $0) }
    }

    /// Marks the replica retired in `_server_replica`.
    public func retire(_ replica: ReplicaID) throws {
        try self.replica.withConnection { try ServerReplicaTable.retire(replica, at: replicaPolicy.now(), on: $0) }
        stableVectorCache.invalidate()
    }

    /// The meet of the active replicas' settled vectors, from `_server_replica`, lowered below
    /// the stored change sets above it that do not cover it.
    public func stableVector() throws -> VersionVector {
        let now = replicaPolicy.now()
        return try stableVectorCache.vector(at: now) {
            try stableVector(of: try replicas(), at: now, horizon: replicaPolicy.horizon)
        }
    }

    /// ``ReplicaRegistry/stableVector(of:datasetVector:at:horizon:firstAbove:)`` of `records` over
    /// this store's change sets, capped by its vector.
    package func stableVector(of records: [ReplicaRecord], at now: Date, horizon: TimeInterval) throws -> VersionVector {
        try replica.withConnection { connection in
            try ReplicaRegistry.stableVector(of: records, datasetVector: try VersionVectorTable.vector(on: connection), at: now,
                                             horizon: horizon) { replica, seq in
                try ChangeSetTable.firstVector(of: replica, after: seq, on: connection)
            }
        }
    }
}

import Foundation
import SyncEngine

extension DatasetStore {
    /// Pushes the one change set of `batch` as ``push(_:pushedBy:)`` pushes a body holding it,
    /// merging it a slice of operations at a time when the dataset's engine can
    /// (``SlicedChangeSetApplying``), and whole otherwise.
    package func push(slices batch: ChangeSetBatchFile, pushedBy pusher: ReplicaCredentials?) throws -> PushResult {
        _ = try requireEngine()
        try checkClockSkew([batch.header])
        return try pushUnderWriteLock { engine in
            guard let sliced = engine as? any SlicedChangeSetApplying else {
                return try engine.apply(engine.validate(batch.decodeWhole()), pushedBy: pusher)
            }
            return try sliced.apply(slices: batch, pushedBy: pusher)
        }
    }
}

import Foundation

extension SyncClient {
    /// Pulls a change set a page handed out by reference: its parts go to a temporary file, one
    /// part in memory at a time, and a batch holding one change set is merged a slice of
    /// operations at a time (``SyncReplica/apply(slices:)``), never decoded whole.
    func pullLargeChangeSet(_ reference: LargeChangeSetReference, into report: inout SyncReport) async throws(SyncClientError) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("objectsync-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await transport.downloadLargeChangeSet(reference, to: path)
        let replica = replica
        let batch = try await local { try ChangeSetBatchFile(path: path) }
        let result: SyncReplica.MergeResult = try await local {
            batch.headers.count == 1 ? try replica.apply(slices: batch) : try replica.apply(batch.decodeWhole())
        }
        report.pulled += result.applied.count
        report.pulledAlreadyApplied += result.alreadyApplied.count
        report.changedObjectIDs.formUnion(result.changedObjectIDs)
        guard !result.applied.isEmpty else { return }
        // As for a page: attribute-only updates are written in place, so every object the
        // change set names changed.
        let named: Set<UUID> = try await local {
            var named: Set<UUID> = []
            if batch.headers.count == 1 {
                try batch.forEachSlice { for operation in $0 { named.formUnion(SyncClient.objectIDs(operation)) } }
            } else {
                for changeSet in try batch.decodeWhole() {
                    for operation in changeSet.operations { named.formUnion(SyncClient.objectIDs(operation)) }
                }
            }
            return named
        }
        report.changedObjectIDs.formUnion(named)
    }
}

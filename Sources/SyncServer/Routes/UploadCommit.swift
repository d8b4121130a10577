import Foundation
import SyncEngine

/// The push an upload's commit makes (see "Large change sets" in `Protocol/README.md`).
///
/// The parts are written, one at a time, to a file next to the dataset's store while their
/// SHA-256 is computed; the file is mapped and read as a change-set batch without decoding it
/// whole. A batch holding one change set, the case of a large save, is merged a slice of
/// operations at a time (``DatasetStore/push(slices:pushedBy:)``), so the server holds about one
/// slice of it, never the whole body nor the whole operation list. A batch of several change
/// sets is pushed as `POST .../changesets` pushes it.
enum UploadCommit {
    static func push(upload id: String, of staging: TransferStaging, to dataset: DatasetStore, pushedBy pusher: ReplicaCredentials?,
                     _ context: RouteContext) throws -> Data {
        let directory = dataset.directory.appendingPathComponent("commits")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("\(UUID().uuidString).json").path
        guard FileManager.default.createFile(atPath: path, contents: nil), let output = FileHandle(forWritingAtPath: path) else {
            throw SyncError(.notSyncable, "cannot create \(path) to assemble upload \(id)")
        }
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            defer { try? output.close() }
            try TransferRoutes.staged { try staging.forEachAssembledPart(of: id) { try output.write(contentsOf: $0) } }
        }
        let batch = try ChangeSetBatchFile(path: path)
        guard batch.headers.count == 1 else {
            return try ChangeSetRoutes.push(try Data(contentsOf: URL(fileURLWithPath: path)), to: dataset, pushedBy: pusher, context)
        }
        return ChangeSetRoutes.answer(to: try dataset.push(slices: batch, pushedBy: pusher), of: dataset, context)
    }
}

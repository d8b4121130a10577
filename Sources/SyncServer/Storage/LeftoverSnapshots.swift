import Foundation

extension DatasetRegistry {
    /// Removes the snapshot copies (`datasets/<name>/snapshot-*.sqlite` and their journals) a
    /// server that stopped in the middle of a snapshot left behind; returns how many files.
    ///
    /// Runs when the service starts, before any request: a copy is only ever in use while the
    /// request that made it runs, so at that point every one is garbage. One server per data
    /// directory is assumed (as everywhere else).
    @discardableResult
    package static func removeLeftoverSnapshots(in dataDirectory: URL) -> Int {
        let manager = FileManager.default
        let datasets = dataDirectory.appendingPathComponent("datasets")
        var removed = 0
        for dataset in (try? manager.contentsOfDirectory(atPath: datasets.path)) ?? [] {
            let directory = datasets.appendingPathComponent(dataset)
            for file in (try? manager.contentsOfDirectory(atPath: directory.path)) ?? [] where isSnapshotCopy(file) {
                if (try? manager.removeItem(at: directory.appendingPathComponent(file))) != nil { removed += 1 }
            }
        }
        return removed
    }

    /// Whether `file` is named like a snapshot copy: `snapshot-<anything>.sqlite`, or that with
    /// `-journal`, `-wal` or `-shm` appended.
    private static func isSnapshotCopy(_ file: String) -> Bool {
        guard file.hasPrefix("snapshot-") else { return false }
        return ["", "-journal", "-wal", "-shm"].contains { file.hasSuffix(".sqlite" + $0) }
    }
}

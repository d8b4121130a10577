import Foundation
import SyncEngine

extension SyncService {
    /// Compacts the log of every dataset stored under the data directory (with shared storage:
    /// every dataset this instance has served, since every instance compacts on its schedule)
    /// below the vector ``SyncServiceConfiguration/stableVector`` gives for it, records each
    /// compaction in the metrics and the log, and returns what each did (datasets without a
    /// schema, or for which no stable vector is known, are left out).
    @discardableResult
    public func compactLogs() -> [String: Result<CompactionReport, any Error>] {
        guard configuration.stableVector != nil else { return [:] }
        let names: [String]
        if configuration.databaseURL == nil {
            let directory = DatasetRegistry.datasetsDirectory(in: configuration.dataDirectory)
            names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        } else {
            names = registry.knownDatasets().map(\.name)
        }
        var reports: [String: Result<CompactionReport, any Error>] = [:]
        for name in names.sorted() where DatasetRegistry.isValidName(name) {
            do {
                guard let report = try compactLog(of: name) else { continue }
                reports[name] = .success(report)
                configuration.log?("compaction dataset=\(name) entries=\(report.entriesRemoved) changesets=\(report.changeSetsRemoved) kept=\(report.changeSetsKept) stampsKept=\(report.changeSetStampsKept) bytes=\(report.payloadBytesRemoved) tombstones=\(report.mergedState.tombstones) removedEdges=\(report.mergedState.removedEdges) forgottenObjects=\(report.mergedState.forgottenObjects) identifiersReleased=\(report.identifiersReleased) journalEntries=\(report.journalEntriesRemoved) mergedStateBytes=\(report.mergedState.bytes) fileBytesFreed=\(report.fileBytesFreed) entriesFolded=\(report.entriesFolded) logStart=\(report.logStart.cursor)")
            } catch {
                reports[name] = .failure(error)
                configuration.log?("compaction dataset=\(name) failed: \(error)")
            }
        }
        return reports
    }

    /// Runs ``compactLogs()`` every ``SyncServiceConfiguration/compactionInterval`` until the
    /// returned task is cancelled; `nil` when no interval or stable vector is configured.
    public func scheduleCompaction() -> Task<Void, Never>? {
        guard let interval = configuration.compactionInterval, configuration.stableVector != nil else { return nil }
        return Task.detached { [self] in
            while true {
                do { try await Task.sleep(for: interval) } catch { return }
                // Off the cooperative threads: a compaction is minutes of blocking SQLite work at worst.
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    DispatchQueue.global(qos: .utility).async {
                        self.compactLogs()
                        done.resume()
                    }
                }
            }
        }
    }
}

extension SyncService {
    /// Compacts `dataset`'s log below the vector ``SyncServiceConfiguration/stableVector``
    /// gives for it, recording it in the metrics; `nil` when the dataset has no schema or no
    /// stable vector is known.
    ///
    /// - Throws: a `SyncError`, `StoreError` or `PostgreSQLError` from the dataset's engine.
    public func compactLog(of dataset: String) throws -> CompactionReport? {
        guard DatasetRegistry.isValidName(dataset), let stableVector = configuration.stableVector,
              let report = try registry.dataset(dataset).compactLog(stableVector: stableVector) else { return nil }
        metrics.recordCompaction(dataset: dataset, report: report)
        return report
    }
}

import Foundation
import SyncEngine

/// The datasets under `DIR/datasets`, opened lazily on first use and kept open.
///
/// Thread-safe: any number of requests may ask for datasets at once; each ``DatasetStore``
/// serializes its own writes.
package final class DatasetRegistry: @unchecked Sendable {
    // @unchecked: `datasets` is only accessed while holding `lock`.
    package let dataDirectory: URL
    private let maxClockSkew: Double
    private let clock: @Sendable () -> UInt64
    /// Each dataset in `DIR/datasets/<name>/store.sqlite`, or in a shared PostgreSQL database.
    private let engines: any DatasetEngineProvider
    /// Whether other processes append to the datasets' logs too (shared storage).
    private let logIsShared: Bool
    private let lock = NSLock()
    private var datasets: [String: DatasetStore] = [:]

    /// - Parameters:
    ///   - engines: where the datasets are kept; `nil`: SQLite store files under `DIR/datasets`.
    ///   - logIsShared: whether other processes write the same datasets (see ``DatasetStore``).
    package init(dataDirectory: URL, maxClockSkew: Double,
                 clock: @escaping @Sendable () -> UInt64 = HybridLogicalClock.wallClockMilliseconds,
                 engines: (any DatasetEngineProvider)? = nil, logIsShared: Bool = false) {
        self.dataDirectory = dataDirectory
        self.maxClockSkew = maxClockSkew
        self.clock = clock
        self.engines = engines ?? SQLiteDatasetEngineProvider(directory: DatasetRegistry.datasetsDirectory(in: dataDirectory))
        self.logIsShared = logIsShared
    }

    /// `DIR/datasets`: one directory per dataset, for its store file or cache and its snapshots in flight.
    package static func datasetsDirectory(in dataDirectory: URL) -> URL {
        dataDirectory.appendingPathComponent("datasets")
    }

    /// Whether `name` is a valid dataset name: 1-64 characters of `[A-Za-z0-9._-]`, not starting with `.`.
    package static func isValidName(_ name: String) -> Bool {
        guard (1...64).contains(name.utf8.count), name.first != "." else { return false }
        return name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }

    /// The names of the datasets opened so far.
    package func openedNames() -> [String] {
        lock.lock()
        defer { lock.unlock() }
        return Array(datasets.keys)
    }

    /// The dataset called `name` (which must be valid); it may not have a schema yet.
    package func dataset(_ name: String) -> DatasetStore {
        precondition(DatasetRegistry.isValidName(name), "dataset names are validated before they reach the registry")
        lock.lock()
        defer { lock.unlock() }
        if let dataset = datasets[name] { return dataset }
        let dataset = DatasetStore(name: name, directory: DatasetRegistry.datasetsDirectory(in: dataDirectory).appendingPathComponent(name),
                                   engines: engines, maxClockSkew: maxClockSkew, clock: clock, logIsShared: logIsShared)
        datasets[name] = dataset
        return dataset
    }
}

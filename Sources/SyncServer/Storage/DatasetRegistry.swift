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
    /// Each dataset in `DIR/datasets/<name>/store.sqlite`.
    private let engines: SQLiteDatasetEngineProvider
    private let lock = NSLock()
    private var datasets: [String: DatasetStore] = [:]

    package init(dataDirectory: URL, maxClockSkew: Double,
                 clock: @escaping @Sendable () -> UInt64 = HybridLogicalClock.wallClockMilliseconds) {
        self.dataDirectory = dataDirectory
        self.maxClockSkew = maxClockSkew
        self.clock = clock
        engines = SQLiteDatasetEngineProvider(directory: dataDirectory.appendingPathComponent("datasets"))
    }

    /// Whether `name` is a valid dataset name: 1-64 characters of `[A-Za-z0-9._-]`, not starting with `.`.
    package static func isValidName(_ name: String) -> Bool {
        guard (1...64).contains(name.utf8.count), name.first != "." else { return false }
        return name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }

    /// The dataset called `name` (which must be valid); it may not have a schema yet.
    package func dataset(_ name: String) -> DatasetStore {
        precondition(DatasetRegistry.isValidName(name), "dataset names are validated before they reach the registry")
        lock.lock()
        defer { lock.unlock() }
        if let dataset = datasets[name] { return dataset }
        let dataset = DatasetStore(name: name, directory: engines.directory(of: name), engines: engines, maxClockSkew: maxClockSkew, clock: clock)
        datasets[name] = dataset
        return dataset
    }
}

import Foundation

/// The path of a store file that does not exist yet, under the system's temporary directory; the
/// file and its WAL files are removed when the value goes away.
public final class TemporaryStoreFile {
    /// The file's path.
    public let path: String

    /// A path named `prefix-<UUID>.sqlite`.
    public init(prefix: String = "store") {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString).sqlite").path
    }

    deinit { Self.remove(path) }

    /// Removes the store file at `path` with its `-wal` and `-shm` companions.
    public static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

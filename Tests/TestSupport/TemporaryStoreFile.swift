import Foundation

/// The path of a store file that does not exist yet, under the system's temporary directory; the
/// file and its WAL files are removed when the value goes away.
public final class TemporaryStoreFile {
    /// Where the file goes.
    public enum Location: Sendable {
        /// The system's temporary directory.
        case temporaryDirectory
        /// A memory-backed file system (`/dev/shm`) when the machine has a writable one, else the
        /// temporary directory: for runs that make thousands of stores to test merging, not
        /// durability, and would otherwise spend their time waiting for the disk.
        case memoryBackedIfAvailable
    }

    /// The file's path.
    public let path: String

    /// A path named `prefix-<UUID>.sqlite` in `location`.
    public init(prefix: String = "store", in location: Location = .temporaryDirectory) {
        let directory = switch location {
        case .temporaryDirectory: FileManager.default.temporaryDirectory.path
        case .memoryBackedIfAvailable: TemporaryStoreFile.memoryBackedDirectory ?? FileManager.default.temporaryDirectory.path
        }
        path = directory + "/\(prefix)-\(UUID().uuidString).sqlite"
    }

    deinit { Self.remove(path) }

    /// Removes the store file at `path` with its `-wal` and `-shm` companions.
    public static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    private static let memoryBackedDirectory: String? = FileManager.default.isWritableFile(atPath: "/dev/shm") ? "/dev/shm" : nil
}

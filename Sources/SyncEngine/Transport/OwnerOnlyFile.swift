import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files that hold a secret (a store with a saved bearer token, a token file): readable and
/// writable by their owner only (mode `0600`), whatever the process's umask.
public enum OwnerOnlyFile {
    /// The mode such files get.
    public static let mode: mode_t = 0o600

    /// Creates an empty file at `path` with mode `0600` if none exists, and gives an existing one
    /// that mode. SQLite gives the `-wal` and `-shm` files it creates later the database file's
    /// mode, so creating a store's file this way first keeps them private too.
    public static func create(atPath path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw OwnerOnlyFile.error("create", path) }
        defer { close(descriptor) }
        // The umask may have taken bits away at creation; fchmod is not subject to it.
        guard fchmod(descriptor, mode) == 0 else { throw OwnerOnlyFile.error("restrict", path) }
    }

    /// Gives the store file at `path` and its `-wal`, `-shm` and `-journal` files (those that
    /// exist) mode `0600`.
    public static func restrictStore(atPath path: String) throws {
        for file in [path, path + "-wal", path + "-shm", path + "-journal"] {
            if chmod(file, mode) != 0 && errno != ENOENT { throw OwnerOnlyFile.error("restrict", file) }
        }
    }

    private static func error(_ action: String, _ path: String) -> CocoaError {
        let code = errno
        return CocoaError(.fileWriteNoPermission, userInfo: [
            NSFilePathErrorKey: path,
            NSLocalizedDescriptionKey: "cannot \(action) \(path) with mode 0600: \(String(cString: strerror(code)))",
        ])
    }
}

import Foundation

/// A new directory under the system's temporary directory, removed with everything in it when
/// the value goes away.
public final class TemporaryDirectory {
    /// The directory's path.
    public let path: String

    /// The directory's URL.
    public var url: URL { URL(fileURLWithPath: path, isDirectory: true) }

    /// Creates the directory, named `prefix-<UUID>`.
    public init(prefix: String = "tests") throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The path of `name` inside the directory (nothing is created).
    public func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }
}

import Foundation

/// An executable that `swift build` put next to the test bundle (`.build/<triple>/debug/`):
/// `syncd`, `sync` or `SyncCrashHelper`.
public enum BuiltProduct {
    /// The executable named `name`, or the path in the environment variable `override` when it is
    /// set; throws, naming where it looked, when the product was not built.
    public static func url(named name: String, override: String? = nil) throws -> URL {
        if let override, let path = ProcessInfo.processInfo.environment[override] { return URL(fileURLWithPath: path) }
        var starts = Bundle.allBundles.map(\.bundleURL).filter { $0.pathExtension == "xctest" }
        starts += [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])]
        if let executable = Bundle.main.executableURL { starts.append(executable) }
        var looked: [String] = []
        for start in starts {
            // The test runner may be a symlink, a bundle directory or a binary inside one.
            var directory = start.resolvingSymlinksInPath().deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = directory.appendingPathComponent(name)
                looked.append(candidate.path)
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                   FileManager.default.isExecutableFile(atPath: candidate.path) {
                    return candidate
                }
                directory.deleteLastPathComponent()
            }
        }
        throw ProductProcessError("'\(name)' is not built next to the tests (looked at \(looked)); build it with `swift build`"
            + (override.map { " or set \($0)" } ?? ""))
    }
}

import Foundation
import LocalStoreCore
import SyncEngine

/// A `sync` subcommand: its name, help and what it does.
struct Command: Sendable {
    var name: String
    /// One line for `sync --help`.
    var summary: String
    /// Full help text for `sync <name> --help`.
    var help: String
    /// Options taking a value (without dashes); `store` is always accepted.
    var options: Set<String> = []
    /// Options without a value.
    var flags: Set<String> = []
    /// Runs the command with the parsed arguments and the store path.
    var run: @Sendable (Arguments, String) async throws -> Void
}

/// Writing to stdout and stderr.
enum Output {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Prints a usage error and returns its exit status (2).
    static func usage(_ error: UsageError) -> Int32 {
        if let command = error.command {
            Self.error("sync \(command): \(error.message)\nRun 'sync \(command) --help' for usage.")
        } else {
            Self.error("sync: \(error.message)\nRun 'sync --help' for usage.")
        }
        return 2
    }

    /// A sentence for an error from SyncKit or LocalStore.
    static func describe(_ error: any Error) -> String {
        String(describing: error)
    }

    /// JSON text with sorted keys and unescaped slashes, on one line.
    static func json(_ value: Any) -> String {
        guard JSONSerialization.isValidJSONObject(value) || value is String || value is NSNumber || value is NSNull,
              let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed])
        else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A date as ISO 8601 with milliseconds, UTC.
    static func date(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// A version vector as JSON: `{"<replica>": seq, ...}`.
    static func vector(_ vector: VersionVector) -> String {
        json(Dictionary(uniqueKeysWithValues: vector.entries.map { ($0.key.uuidString, NSNumber(value: $0.value)) }))
    }
}

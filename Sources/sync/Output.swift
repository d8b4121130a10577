import Codecs
import Foundation
import LocalStoreCore
import SyncEngine

/// Writing to stdout and stderr.
enum Output {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// A sentence for an error from SyncKit or LocalStore.
    static func describe(_ error: any Error) -> String {
        String(describing: error)
    }

    /// A date as ISO 8601 with milliseconds, UTC.
    static func date(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// A version vector as JSON: `{"<replica>": seq, ...}`.
    static func vector(_ vector: VersionVector) -> JSONValue {
        .object(Dictionary(uniqueKeysWithValues: vector.entries.map { ($0.key.uuidString, JSONValue.unsignedInteger($0.value)) }))
    }
}

import Foundation

/// A JSON string as ``JSONReader`` found it: a view of the input's bytes when it had no escapes
/// (the usual case, no copy), or its decoded bytes when it had some.
///
/// Keys and fixed values (`"op": "set"`) are compared against names with ``matches(_:)`` and
/// UUIDs parsed with ``uuid`` without ever making a `String`. A view points into the input, so
/// it must not outlive the ``JSONReader/read(bytes:_:)`` call that produced it.
package struct JSONStringValue {
    /// The string's bytes inside the input, when it had no escapes.
    private let raw: UnsafeBufferPointer<UInt8>
    /// The decoded bytes, when it had escapes.
    private let decoded: [UInt8]?

    package init(raw: UnsafeBufferPointer<UInt8>) {
        self.raw = raw
        decoded = nil
    }

    package init(decoded: [UInt8]) {
        raw = UnsafeBufferPointer(start: nil, count: 0)
        self.decoded = decoded
    }

    /// Calls `body` with the string's UTF-8 bytes (already checked to be valid).
    @inline(__always)
    package func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        if let decoded { return try decoded.withUnsafeBufferPointer(body) }
        return try body(raw)
    }

    /// Whether the string is exactly `name`.
    @inline(__always)
    package func matches(_ name: StaticString) -> Bool {
        withBytes { bytes in
            name.withUTF8Buffer { expected in
                guard bytes.count == expected.count else { return false }
                for index in 0..<bytes.count where bytes[index] != expected[index] { return false }
                return true
            }
        }
    }

    /// The string.
    package var string: String {
        withBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// The UUID the string spells (`8-4-4-4-12` hex digits, either case), or `nil`.
    package var uuid: UUID? {
        withBytes { UUID(storageTextBytes: $0) }
    }

    /// The string quoted for an error message, shortened if long.
    package var quoted: String {
        let text = string
        return "'" + (text.count > 60 ? String(text.prefix(60)) + "…" : text) + "'"
    }
}

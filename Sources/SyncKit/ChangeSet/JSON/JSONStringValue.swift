import Foundation

/// A JSON string as ``JSONReader`` found it: a view of the input's bytes when it had no escapes
/// (the usual case, no copy), or its decoded bytes when it had some.
///
/// Keys and fixed values (`"op": "set"`) are compared against names with ``matches(_:)`` and
/// UUIDs parsed with ``uuid`` without ever making a `String`. A view points into the input, so
/// it must not outlive the ``JSONReader/read(bytes:_:)`` call that produced it.
struct JSONStringValue {
    /// The string's bytes inside the input, when it had no escapes.
    private let raw: UnsafeBufferPointer<UInt8>
    /// The decoded bytes, when it had escapes.
    private let decoded: [UInt8]?

    init(raw: UnsafeBufferPointer<UInt8>) {
        self.raw = raw
        decoded = nil
    }

    init(decoded: [UInt8]) {
        raw = UnsafeBufferPointer(start: nil, count: 0)
        self.decoded = decoded
    }

    /// Calls `body` with the string's UTF-8 bytes (already checked to be valid).
    @inline(__always)
    func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        if let decoded { return try decoded.withUnsafeBufferPointer(body) }
        return try body(raw)
    }

    /// Whether the string is exactly `name`.
    @inline(__always)
    func matches(_ name: StaticString) -> Bool {
        withBytes { bytes in
            name.withUTF8Buffer { expected in
                guard bytes.count == expected.count else { return false }
                for index in 0..<bytes.count where bytes[index] != expected[index] { return false }
                return true
            }
        }
    }

    /// The string.
    var string: String {
        withBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// The UUID the string spells (`8-4-4-4-12` hex digits, either case), or `nil`.
    var uuid: UUID? {
        withBytes(JSONStringValue.parseUUID)
    }

    /// The string quoted for an error message, shortened if long.
    var quoted: String {
        let text = string
        return "'" + (text.count > 60 ? String(text.prefix(60)) + "…" : text) + "'"
    }

    /// Parses `8-4-4-4-12` hex digits (either case) into a UUID, as `UUID(uuidString:)` does
    /// (though stricter: it lets whitespace into the digits).
    static func parseUUID(_ bytes: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard bytes.count == 36, let base = bytes.baseAddress, base[8] == UInt8(ascii: "-"), base[13] == UInt8(ascii: "-"),
              base[18] == UInt8(ascii: "-"), base[23] == UInt8(ascii: "-") else { return nil }
        // OR of all digit values: above 15 if any byte was not a hex digit. Checked once at the
        // end, so that the fixed positions below run without branches.
        var combined: UInt8 = 0
        let value: uuid_t = (
            hexByte(base, 0, &combined), hexByte(base, 2, &combined), hexByte(base, 4, &combined), hexByte(base, 6, &combined),
            hexByte(base, 9, &combined), hexByte(base, 11, &combined), hexByte(base, 14, &combined), hexByte(base, 16, &combined),
            hexByte(base, 19, &combined), hexByte(base, 21, &combined), hexByte(base, 24, &combined), hexByte(base, 26, &combined),
            hexByte(base, 28, &combined), hexByte(base, 30, &combined), hexByte(base, 32, &combined), hexByte(base, 34, &combined))
        return combined < 16 ? UUID(uuid: value) : nil
    }

    /// The byte two hex digits at `position` spell; ORs their values into `combined`.
    @inline(__always)
    private static func hexByte(_ base: UnsafePointer<UInt8>, _ position: Int, _ combined: inout UInt8) -> UInt8 {
        let high = hexValue(base[position]), low = hexValue(base[position + 1])
        combined |= high | low
        return high << 4 | low
    }

    /// A hex digit's value (either case), or 0xFF for any other byte.
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8 {
        let digit = byte &- UInt8(ascii: "0")
        if digit < 10 { return digit }
        // Setting bit 5 folds 'A'-'F' onto 'a'-'f'.
        let letter = (byte | 0x20) &- UInt8(ascii: "a")
        return letter < 6 ? letter &+ 10 : 0xFF
    }
}

import Foundation

/// Writes JSON as UTF-8 bytes into one growing buffer.
///
/// Change capture, the `_sync_changeset` columns and the wire format all go through this
/// instead of `JSONEncoder`, which spent most of a save's time boxing every field into
/// containers and formatting numbers through `String`. The caller drives the structure
/// (``beginObject()``, ``writeKey(_:)-(StaticString)``, a value, ..., ``endObject()``) and the
/// writer puts the commas in; there is no whitespace.
///
/// The output is byte-identical to `JSONEncoder` with `.sortedKeys` (plus
/// `.withoutEscapingSlashes` unless `escapingSlashes`), provided the caller writes object keys in
/// byte order, which is the order `.sortedKeys` uses for ASCII keys. That is what keeps the
/// protocol's bytes, and the JSON already in existing stores, unchanged.
///
/// ```swift
/// var writer = JSONWriter()
/// writer.beginObject()
/// writer.writeKey("real")
/// try writer.writeDouble(1.5)
/// writer.endObject()
/// writer.string // {"real":1.5}
/// ```
struct JSONWriter {
    /// The UTF-8 output written so far.
    private(set) var bytes: [UInt8] = []
    /// Whether `/` is written `\/`, as `JSONEncoder` does without `.withoutEscapingSlashes`
    /// (the stored JSON columns were written that way).
    private let escapesSlashes: Bool
    /// Whether the next key or array element needs a comma before it.
    private var needsComma = false

    /// - Parameters:
    ///   - capacity: bytes to reserve up front; a good guess saves the buffer's regrowth copies.
    ///   - escapingSlashes: write `/` as `\/` (`JSONEncoder`'s default) rather than as is.
    init(reservingCapacity capacity: Int = 256, escapingSlashes: Bool = false) {
        bytes.reserveCapacity(capacity)
        escapesSlashes = escapingSlashes
    }

    /// The output as a string (JSON written here is always valid UTF-8).
    var string: String { String(decoding: bytes, as: UTF8.self) }

    /// The output as `Data`.
    var data: Data { Data(bytes) }

    // MARK: Structure

    /// Starts an object; write keys and values, then ``endObject()``.
    mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// Ends the innermost object.
    mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Starts an array; write its elements, then ``endArray()``.
    mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    /// Ends the innermost array.
    mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes an object key that needs no escaping (the format's fixed ASCII names), then `:`.
    mutating func writeKey(_ name: StaticString) {
        assert(JSONWriter.isPlainKey(name), "\(name) needs escaping: use writeKey(_: String)")
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        append(name)
        append("\":")
        needsComma = false
    }

    /// Writes any string as an object key, escaped, then `:`.
    mutating func writeKey(_ name: String) {
        writeString(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Writes a UUID as an object key (upper case, as `uuidString`), then `:`.
    mutating func writeKey(_ uuid: UUID) {
        writeUUID(uuid)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    // MARK: Values

    /// Writes `null`.
    mutating func writeNull() {
        separate()
        append("null")
        needsComma = true
    }

    /// Writes `true` or `false`.
    mutating func writeBool(_ value: Bool) {
        separate()
        append(value ? "true" : "false")
        needsComma = true
    }

    /// Writes an unsigned integer in decimal.
    mutating func writeUnsignedInteger(_ value: UInt64) {
        separate()
        appendDigits(of: value)
        needsComma = true
    }

    /// Writes a signed integer in decimal.
    mutating func writeInteger(_ value: Int64) {
        separate()
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        appendDigits(of: value.magnitude)
        needsComma = true
    }

    /// Writes a finite double as its shortest decimal form that reads back to the same bits,
    /// the way `JSONEncoder` does (`1.0` as `1`, `1e+300`, `5e-324`, `-0.0` as `-0`).
    ///
    /// - Throws: `EncodingError.invalidValue` for infinities and NaN, which JSON cannot express
    ///   (`JSONEncoder` refuses them too).
    mutating func writeDouble(_ value: Double) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: [], debugDescription: "the real \(value) is not finite: JSON has no representation for it"))
        }
        separate()
        // Swift's description is the shortest round-tripping form; JSONEncoder drops its ".0".
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
        needsComma = true
    }

    /// Writes a string, escaped per RFC 8259 exactly as `JSONEncoder` escapes it: `\"`, `\\`,
    /// `\b \f \n \r \t`, other control characters as `\u00xx`, everything else as is.
    mutating func writeString(_ text: String) {
        separate()
        var text = text
        text.withUTF8 { appendQuoted($0) }
        needsComma = true
    }

    /// Writes a string that needs no escaping (one of the format's fixed ASCII words).
    mutating func writeString(literal: StaticString) {
        assert(JSONWriter.isPlainKey(literal), "\(literal) needs escaping: use writeString(_:)")
        separate()
        bytes.append(UInt8(ascii: "\""))
        append(literal)
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// Writes a UUID as a string, upper case like `uuidString`, without making that string.
    mutating func writeUUID(_ uuid: UUID) {
        separate()
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 38) { output in
            withUnsafeBytes(of: uuid.uuid) { uuidBytes in
                output[0] = UInt8(ascii: "\"")
                var position = 1
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        output[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    output[position] = JSONWriter.hexDigit(uuidBytes[index] >> 4)
                    output[position + 1] = JSONWriter.hexDigit(uuidBytes[index] & 0x0F)
                    position += 2
                }
                output[37] = UInt8(ascii: "\"")
            }
            bytes.append(contentsOf: UnsafeBufferPointer(output))
        }
        needsComma = true
    }

    /// Writes bytes as a base64 string (standard alphabet, padded), as `JSONEncoder` writes `Data`
    /// through `base64EncodedString()`. Base64's `/` is escaped too when `escapingSlashes`.
    mutating func writeBase64(_ data: Data) {
        separate()
        data.base64EncodedData().withUnsafeBytes { raw in raw.withMemoryRebound(to: UInt8.self) { appendQuoted($0) } }
        needsComma = true
    }

    // MARK: Helpers

    /// Appends a literal's bytes as they are.
    @inline(__always)
    private mutating func append(_ literal: StaticString) {
        literal.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// The comma before an array element (an object's values follow their key, which wrote it).
    @inline(__always)
    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    private mutating func appendDigits(of value: UInt64) {
        if value < 10 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
            return
        }
        // At most 20 digits, written from the end of a stack buffer.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var position = 20
            var rest = value
            repeat {
                position -= 1
                digits[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest != 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[position...]))
        }
    }

    /// Appends `text` quoted; runs that need no escape go in one copy each, so the common string
    /// (no quotes, backslashes or control characters) is a single append.
    private mutating func appendQuoted(_ text: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        var runStart = 0
        for index in 0..<text.count {
            let byte = text[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || (byte == UInt8(ascii: "/") && escapesSlashes) else {
                continue
            }
            if runStart < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart..<index])) }
            appendEscape(for: byte)
            runStart = index + 1
        }
        if runStart < text.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart...])) }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendEscape(for byte: UInt8) {
        let short: UInt8
        switch byte {
        case UInt8(ascii: "\""): short = UInt8(ascii: "\"")
        case UInt8(ascii: "\\"): short = UInt8(ascii: "\\")
        case UInt8(ascii: "/"): short = UInt8(ascii: "/")
        case 0x08: short = UInt8(ascii: "b")
        case 0x0C: short = UInt8(ascii: "f")
        case 0x0A: short = UInt8(ascii: "n")
        case 0x0D: short = UInt8(ascii: "r")
        case 0x09: short = UInt8(ascii: "t")
        default:
            // JSONEncoder writes the other control characters as \u00xx with lower-case hex.
            append("\\u00")
            bytes.append(JSONWriter.lowerHexDigit(byte >> 4))
            bytes.append(JSONWriter.lowerHexDigit(byte & 0x0F))
            return
        }
        bytes.append(UInt8(ascii: "\\"))
        bytes.append(short)
    }

    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "A") &+ (nibble &- 10)
    }

    @inline(__always)
    private static func lowerHexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "a") &+ (nibble &- 10)
    }

    /// Whether a key or word can be written without escaping (checked in debug builds only).
    private static func isPlainKey(_ name: StaticString) -> Bool {
        name.withUTF8Buffer { buffer in
            buffer.allSatisfy { $0 >= 0x20 && $0 < 0x80 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") && $0 != UInt8(ascii: "/") }
        }
    }
}

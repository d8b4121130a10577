import Foundation

/// Writes JSON as UTF-8 bytes into one growing buffer.
///
/// Change capture, the ``ChangeSetTable`` columns and the wire format all go through this
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
/// The buffer is raw memory the writer owns, not an `Array`: appending to an array checks
/// uniqueness and capacity on every call, which cost more than the JSON itself. Hence also
/// `~Copyable`: a copy would share the memory.
///
/// ```swift
/// var writer = JSONWriter()
/// writer.beginObject()
/// writer.writeKey("real")
/// try writer.writeDouble(1.5)
/// writer.endObject()
/// writer.string // {"real":1.5}
/// ```
package struct JSONWriter: ~Copyable {
    /// The output: `count` initialized bytes of `capacity`.
    private var storage: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// How many bytes are written.
    package private(set) var count = 0
    /// Whether `/` is written `\/`, as `JSONEncoder` does without `.withoutEscapingSlashes`
    /// (the stored JSON columns were written that way).
    private let escapesSlashes: Bool
    /// Whether the next key or array element needs a comma before it.
    private var needsComma = false

    /// - Parameters:
    ///   - capacity: bytes to reserve up front; a good guess saves the buffer's regrowth copies.
    ///   - escapingSlashes: write `/` as `\/` (`JSONEncoder`'s default) rather than as is.
    package init(reservingCapacity capacity: Int = 256, escapingSlashes: Bool = false) {
        self.capacity = max(capacity, 64)
        storage = .allocate(capacity: self.capacity)
        escapesSlashes = escapingSlashes
    }

    deinit {
        storage.deallocate()
    }

    /// The output so far; valid while the writer is (see ``ByteWriter/withBytes(_:)``).
    private var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: storage, count: count) }

    /// The output as a string (JSON written here is always valid UTF-8).
    package var string: String { String(decoding: bytes, as: UTF8.self) }

    /// The output as `Data` (a copy).
    package var data: Data { Data(buffer: bytes) }

    // MARK: Structure

    /// Starts an object; write keys and values, then ``endObject()``.
    package mutating func beginObject() { open(UInt8(ascii: "{")) }

    /// Ends the innermost object.
    package mutating func endObject() { close(UInt8(ascii: "}")) }

    /// Starts an array; write its elements, then ``endArray()``.
    package mutating func beginArray() { open(UInt8(ascii: "[")) }

    /// Ends the innermost array.
    package mutating func endArray() { close(UInt8(ascii: "]")) }

    private mutating func open(_ bracket: UInt8) {
        reserve(2)
        separate()
        put(bracket)
        needsComma = false
    }

    private mutating func close(_ bracket: UInt8) {
        reserve(1)
        put(bracket)
        needsComma = true
    }

    /// Writes an object key that needs no escaping (the format's fixed ASCII names), then `:`.
    package mutating func writeKey(_ name: StaticString) {
        writeString(literal: name)
        endKey()
    }

    /// Writes any string as an object key, escaped, then `:`.
    package mutating func writeKey(_ name: String) {
        writeString(name)
        endKey()
    }

    /// Writes a UUID as an object key (upper case, as `uuidString`), then `:`.
    package mutating func writeKey(_ uuid: UUID) {
        writeUUID(uuid)
        endKey()
    }

    /// The `:` after a key written as a string; the value that follows needs no comma.
    private mutating func endKey() {
        reserve(1)
        put(UInt8(ascii: ":"))
        needsComma = false
    }

    // MARK: Values

    /// Writes `null`.
    package mutating func writeNull() {
        writeRaw("null")
    }

    /// Writes `true` or `false`.
    package mutating func writeBool(_ value: Bool) {
        writeRaw(value ? "true" : "false")
    }

    /// Writes an unsigned integer in decimal.
    package mutating func writeUnsignedInteger(_ value: UInt64) {
        reserve(21)
        separate()
        putDigits(of: value)
        needsComma = true
    }

    /// Writes a signed integer in decimal.
    package mutating func writeInteger(_ value: Int64) {
        reserve(22)
        separate()
        if value < 0 { put(UInt8(ascii: "-")) }
        putDigits(of: value.magnitude)
        needsComma = true
    }

    /// Writes a finite double as its shortest decimal form that reads back to the same bits,
    /// the way `JSONEncoder` does (`1.0` as `1`, `1e+300`, `5e-324`, `-0.0` as `-0`).
    ///
    /// - Throws: `EncodingError.invalidValue` for infinities and NaN, which JSON cannot express
    ///   (`JSONEncoder` refuses them too).
    package mutating func writeDouble(_ value: Double) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: [], debugDescription: "the real \(value) is not finite: JSON has no representation for it"))
        }
        // Swift's description is the shortest round-tripping form; JSONEncoder drops its ".0".
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        text.withUTF8 { digits in
            reserve(digits.count + 1)
            separate()
            put(digits)
        }
        needsComma = true
    }

    /// Writes a string, escaped per RFC 8259 exactly as `JSONEncoder` escapes it: `\"`, `\\`,
    /// `\b \f \n \r \t`, other control characters as `\u00xx`, everything else as is.
    package mutating func writeString(_ text: String) {
        var text = text
        text.withUTF8 { putQuoted($0) }
        needsComma = true
    }

    /// Writes a string that needs no escaping (one of the format's fixed ASCII words).
    package mutating func writeString(literal: StaticString) {
        assert(JSONWriter.isPlain(literal), "\(literal) needs escaping: use writeString(_:)")
        literal.withUTF8Buffer { word in
            reserve(word.count + 3)
            separate()
            put(UInt8(ascii: "\""))
            put(word)
            put(UInt8(ascii: "\""))
        }
        needsComma = true
    }

    /// Writes a UUID as a string, upper case like `uuidString`, without making that string.
    package mutating func writeUUID(_ uuid: UUID) {
        reserve(39)
        separate()
        let output = storage + count
        output[0] = UInt8(ascii: "\"")
        UUIDText.write(uuid, to: output + 1)
        output[37] = UInt8(ascii: "\"")
        count += 38
        needsComma = true
    }

    /// Writes bytes as a base64 string (standard alphabet, padded), as `JSONEncoder` writes `Data`
    /// through `base64EncodedString()`. Base64's `/` is escaped too when `escapingSlashes`.
    package mutating func writeBase64(_ data: Data) {
        data.base64EncodedData().withUnsafeBytes { raw in raw.withMemoryRebound(to: UInt8.self) { putQuoted($0) } }
        needsComma = true
    }

    /// Writes bytes that are already a JSON value (a body or column written earlier), as they are.
    mutating func writeEncoded(_ json: Data) {
        json.withUnsafeBytes { raw in
            raw.withMemoryRebound(to: UInt8.self) { bytes in
                reserve(bytes.count + 1)
                separate()
                put(bytes)
            }
        }
        needsComma = true
    }

    // MARK: Buffer

    /// Writes a value that is a fixed ASCII word (`null`, `true`).
    private mutating func writeRaw(_ word: StaticString) {
        word.withUTF8Buffer { word in
            reserve(word.count + 1)
            separate()
            put(word)
        }
        needsComma = true
    }

    /// Makes room for `extra` more bytes; the `put` functions that follow do not check.
    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(toHold: count + extra) }
    }

    private mutating func grow(toHold needed: Int) {
        storage = grownBuffer(storage, count: count, capacity: &capacity, toHold: needed)
    }

    /// The comma before an array element (an object's values follow their key, which wrote it).
    /// Needs one reserved byte.
    @inline(__always)
    private mutating func separate() {
        if needsComma { put(UInt8(ascii: ",")) }
    }

    @inline(__always)
    private mutating func put(_ byte: UInt8) {
        storage[count] = byte
        count += 1
    }

    /// Copies `run`. Most runs are a few bytes (names, words, short values), for which two
    /// overlapping loads and stores beat a call to `memmove`.
    @inline(__always)
    private mutating func put(_ run: UnsafeBufferPointer<UInt8>) {
        guard let base = run.baseAddress else { return }
        let length = run.count
        let source = UnsafeRawPointer(base)
        let target = UnsafeMutableRawPointer(storage + count)
        switch length {
        case 0:
            return
        case 1...3:
            target.storeBytes(of: base[0], as: UInt8.self)
            target.storeBytes(of: base[length / 2], toByteOffset: length / 2, as: UInt8.self)
            target.storeBytes(of: base[length - 1], toByteOffset: length - 1, as: UInt8.self)
        case 4...8:
            let head = source.loadUnaligned(as: UInt32.self), tail = source.loadUnaligned(fromByteOffset: length - 4, as: UInt32.self)
            target.storeBytes(of: head, as: UInt32.self)
            target.storeBytes(of: tail, toByteOffset: length - 4, as: UInt32.self)
        case 9...16:
            let head = source.loadUnaligned(as: UInt64.self), tail = source.loadUnaligned(fromByteOffset: length - 8, as: UInt64.self)
            target.storeBytes(of: head, as: UInt64.self)
            target.storeBytes(of: tail, toByteOffset: length - 8, as: UInt64.self)
        default:
            target.copyMemory(from: source, byteCount: length)
        }
        count += length
    }

    /// Writes `value`'s decimal digits; needs 20 reserved bytes.
    private mutating func putDigits(of value: UInt64) {
        if value < 10 {
            put(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
            return
        }
        var digits = 0
        var rest = value
        while rest != 0 {
            digits += 1
            rest /= 10
        }
        rest = value
        for position in stride(from: count + digits - 1, through: count, by: -1) {
            storage[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        }
        count += digits
    }

    /// Writes `text` quoted and escaped. Runs that need no escape are copied whole, so the usual
    /// string (no quotes, backslashes or control characters) is one copy; it is checked eight
    /// bytes at a time.
    private mutating func putQuoted(_ text: UnsafeBufferPointer<UInt8>) {
        // Room for the plain case; escapes reserve more as they come.
        reserve(text.count + 3)
        separate()
        put(UInt8(ascii: "\""))
        guard let base = text.baseAddress else {
            put(UInt8(ascii: "\""))
            return
        }
        var runStart = 0
        var blockStart = 0
        while blockStart < text.count {
            let blockEnd = min(blockStart + 8, text.count)
            var word: UInt64
            if blockEnd - blockStart == 8 {
                word = UnsafeRawPointer(base + blockStart).loadUnaligned(as: UInt64.self)
            } else {
                // The last few bytes, padded with a byte that needs no escape ('A').
                word = 0x4141_4141_4141_4141
                withUnsafeMutableBytes(of: &word) { $0.copyMemory(from: UnsafeRawBufferPointer(start: base + blockStart, count: blockEnd - blockStart)) }
            }
            if JSONWriter.anyByteNeedsEscape(word, slashes: escapesSlashes) {
                for index in blockStart..<blockEnd {
                    let byte = base[index]
                    guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || (byte == UInt8(ascii: "/") && escapesSlashes) else {
                        continue
                    }
                    put(UnsafeBufferPointer(start: base + runStart, count: index - runStart))
                    // An escape is at most 6 bytes where the byte took 1; keep the rest's room too.
                    reserve(6 + text.count - index)
                    putEscape(for: byte)
                    runStart = index + 1
                }
            }
            blockStart = blockEnd
        }
        put(UnsafeBufferPointer(start: base + runStart, count: text.count - runStart))
        put(UInt8(ascii: "\""))
    }

    /// Whether any of the eight bytes in `word` must be escaped: a control character, `"`, `\`,
    /// or `/` when `slashes`. Each test is the classic "has a zero byte" bit trick; none has
    /// false positives, which is all an "any" question needs.
    @inline(__always)
    private static func anyByteNeedsEscape(_ word: UInt64, slashes: Bool) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        var found = (word &- ones &* 0x20) & ~word & highBits
        found |= JSONWriter.zeroBytes(word ^ (ones &* UInt64(UInt8(ascii: "\""))))
        found |= JSONWriter.zeroBytes(word ^ (ones &* UInt64(UInt8(ascii: "\\"))))
        if slashes { found |= JSONWriter.zeroBytes(word ^ (ones &* UInt64(UInt8(ascii: "/")))) }
        return found != 0
    }

    /// Non-zero if any byte of `word` is zero.
    @inline(__always)
    package static func zeroBytes(_ word: UInt64) -> UInt64 {
        (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080
    }

    /// Writes the escape of one byte; needs 6 reserved bytes.
    private mutating func putEscape(for byte: UInt8) {
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
            put(UInt8(ascii: "\\"))
            put(UInt8(ascii: "u"))
            put(UInt8(ascii: "0"))
            put(UInt8(ascii: "0"))
            put(JSONWriter.lowerHexDigit(byte >> 4))
            put(JSONWriter.lowerHexDigit(byte & 0x0F))
            return
        }
        put(UInt8(ascii: "\\"))
        put(short)
    }

    @inline(__always)
    private static func lowerHexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "a") &+ (nibble &- 10)
    }

    /// Whether a key or word can be written without escaping (checked in debug builds only).
    private static func isPlain(_ name: StaticString) -> Bool {
        name.withUTF8Buffer { buffer in
            buffer.allSatisfy { $0 >= 0x20 && $0 < 0x80 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") && $0 != UInt8(ascii: "/") }
        }
    }
}

import Foundation

/// A strict pull reader over a JSON document's UTF-8 bytes.
///
/// The code decoding a document asks for what it expects next (``beginObject()`` then
/// ``nextKey()`` in a loop, ``readString()``, ``readUnsignedInteger()``, ...) and builds its own
/// types directly, with no intermediate tree or `Codable` containers: that is what makes it
/// several times faster than `JSONDecoder` on change sets.
///
/// Strict means RFC 8259 and nothing more: no trailing commas, no leading zeros, no bare
/// control characters or invalid escapes or lone surrogates in strings, valid UTF-8, nothing
/// but whitespace after the document, and integers that fit the type asked for (a number with
/// a fraction or an exponent is not an integer). A leading UTF-8 byte order mark is skipped, as
/// RFC 8259 allows. Every error is a ``JSONReadError`` giving the byte offset; the decoding
/// code adds the path.
///
/// ```swift
/// let values = try JSONReader.read(text) { reader in try reader.readSQLValues() }
/// ```
package struct JSONReader {
    /// What kind of value comes next, from its first byte.
    package enum ValueKind {
        case object, array, string, number, bool, null
    }

    /// How deep ``skipValue()`` follows nested values before refusing, so that a hostile
    /// document cannot exhaust the stack.
    package static let maximumDepth = 512

    /// The document. Only valid during ``read(bytes:_:)``, which is why readers exist only inside it.
    package let input: UnsafeBufferPointer<UInt8>
    /// The next byte to read. Settable for the scanning code in the other `JSONReader+` files;
    /// code decoding documents only reads it (for error offsets).
    package var offset: Int
    /// Set right after `{` or `[`: the next ``nextKey()`` or ``nextElement()`` must not expect a comma.
    private var justOpened = false

    private init(input: UnsafeBufferPointer<UInt8>) {
        self.input = input
        let byteOrderMark = input.count >= 3 && input[0] == 0xEF && input[1] == 0xBB && input[2] == 0xBF
        offset = byteOrderMark ? 3 : 0
    }

    // MARK: Documents

    /// Reads one document from `bytes` with `body`, then checks that nothing but whitespace follows.
    package static func read<Result>(bytes: UnsafeBufferPointer<UInt8>, _ body: (inout JSONReader) throws -> Result) throws -> Result {
        var reader = JSONReader(input: bytes)
        let result = try body(&reader)
        reader.skipWhitespace()
        guard reader.offset == bytes.count else {
            throw reader.failure("expected the end of the document, found \(reader.found)")
        }
        return result
    }

    /// Reads one document from `data` with `body`; see ``read(bytes:_:)``.
    package static func read<Result>(_ data: Data, _ body: (inout JSONReader) throws -> Result) throws -> Result {
        try data.withUnsafeBytes { raw in
            try raw.withMemoryRebound(to: UInt8.self) { try read(bytes: $0, body) }
        }
    }

    /// Reads one document from `text` (its UTF-8, without copying a native string) with `body`.
    package static func read<Result>(_ text: String, _ body: (inout JSONReader) throws -> Result) throws -> Result {
        var text = text
        return try text.withUTF8 { try read(bytes: $0, body) }
    }

    // MARK: Structure

    /// Consumes the `{` that starts an object; then call ``nextKey()`` until it returns `nil`.
    /// Returns the offset of the `{`, for errors about the object as a whole.
    @discardableResult
    package mutating func beginObject() throws -> Int {
        skipWhitespace()
        guard offset < input.count, input[offset] == UInt8(ascii: "{") else { throw failure("expected an object, found \(found)") }
        offset += 1
        justOpened = true
        return offset - 1
    }

    /// The next key of the current object, positioned on its value (which the caller must read
    /// or skip), or `nil` after consuming the object's `}`.
    package mutating func nextKey() throws -> JSONStringValue? {
        skipWhitespace()
        if justOpened {
            justOpened = false
            if offset < input.count, input[offset] == UInt8(ascii: "}") {
                offset += 1
                return nil
            }
        } else {
            guard offset < input.count else { throw failure("expected ',' or '}', found the end of the input") }
            switch input[offset] {
            case UInt8(ascii: ","):
                offset += 1
                skipWhitespace()
            case UInt8(ascii: "}"):
                offset += 1
                return nil
            default:
                throw failure("expected ',' or '}' after an object member, found \(found)")
            }
        }
        guard offset < input.count, input[offset] == UInt8(ascii: "\"") else { throw failure("expected a key (a string), found \(found)") }
        let key = try scanString()
        skipWhitespace()
        guard offset < input.count, input[offset] == UInt8(ascii: ":") else { throw failure("expected ':' after a key, found \(found)") }
        offset += 1
        return key
    }

    /// Consumes the `[` that starts an array; then call ``nextElement()`` until it returns `false`.
    package mutating func beginArray() throws {
        skipWhitespace()
        guard offset < input.count, input[offset] == UInt8(ascii: "[") else { throw failure("expected an array, found \(found)") }
        offset += 1
        justOpened = true
    }

    /// Whether another element of the current array follows (the caller must then read or
    /// skip it); `false` after consuming the array's `]`.
    package mutating func nextElement() throws -> Bool {
        skipWhitespace()
        if justOpened {
            justOpened = false
            if offset < input.count, input[offset] == UInt8(ascii: "]") {
                offset += 1
                return false
            }
            return true
        }
        guard offset < input.count else { throw failure("expected ',' or ']', found the end of the input") }
        switch input[offset] {
        case UInt8(ascii: ","):
            offset += 1
            return true
        case UInt8(ascii: "]"):
            offset += 1
            return false
        default:
            throw failure("expected ',' or ']' after an array element, found \(found)")
        }
    }

    /// What the next value is, without consuming it; `nil` if no value can start here.
    package mutating func peekKind() -> ValueKind? {
        skipWhitespace()
        guard offset < input.count else { return nil }
        switch input[offset] {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        default: return nil
        }
    }

    /// Skips the next value, whatever it is, checking it as strictly as if it were read.
    package mutating func skipValue() throws {
        try skipValue(depth: 0)
    }

    private mutating func skipValue(depth: Int) throws {
        guard depth < JSONReader.maximumDepth else { throw failure("values nest deeper than \(JSONReader.maximumDepth) levels") }
        switch peekKind() {
        case .object:
            try beginObject()
            while try nextKey() != nil { try skipValue(depth: depth + 1) }
        case .array:
            try beginArray()
            while try nextElement() { try skipValue(depth: depth + 1) }
        case .string:
            _ = try scanString()
        case .number:
            _ = try scanNumber()
        case .bool:
            _ = try readBool()
        case .null:
            guard consumeLiteral("null") else { throw failure("expected a value, found \(found)") }
        case nil:
            throw failure("expected a value, found \(found)")
        }
    }

    // MARK: Literals and strings

    /// Consumes `null` if it comes next. Fields where `null` means absent (as `Codable`'s
    /// `decodeIfPresent` treats it) call this before reading the value.
    package mutating func readNullIfPresent() -> Bool {
        skipWhitespace()
        return consumeLiteral("null")
    }

    /// Reads `true` or `false`.
    package mutating func readBool() throws -> Bool {
        skipWhitespace()
        if consumeLiteral("true") { return true }
        if consumeLiteral("false") { return false }
        throw failure("expected true or false, found \(found)")
    }

    /// Reads a string.
    package mutating func readString() throws -> String {
        try readStringValue().string
    }

    /// Reads a string as a view of its bytes, which only lives as long as this reader: for
    /// comparing it with known names, or parsing it, without making a `String`.
    package mutating func readStringValue() throws -> JSONStringValue {
        skipWhitespace()
        guard offset < input.count, input[offset] == UInt8(ascii: "\"") else { throw failure("expected a string, found \(found)") }
        return try scanString()
    }

    /// Reads a UUID string (either case), parsing the hex digits straight from the input.
    package mutating func readUUID() throws -> UUID {
        skipWhitespace()
        let start = offset
        // The usual case: 36 plain characters between quotes.
        if start + 37 < input.count, input[start] == UInt8(ascii: "\""), input[start + 37] == UInt8(ascii: "\""),
           let uuid = UUID(storageTextBytes: UnsafeBufferPointer(rebasing: input[(start + 1)..<(start + 37)])) {
            offset = start + 38
            return uuid
        }
        let text = try readStringValue()
        guard let uuid = text.uuid else { throw JSONReadError(message: "\(text.quoted) is not a UUID", offset: start) }
        return uuid
    }

    // MARK: Position and errors

    /// An error about the input at the current offset.
    package func failure(_ message: String) -> JSONReadError {
        JSONReadError(message: message, offset: offset)
    }

    /// What the input holds at the current offset, for error messages: `a string`, `'}'`, ...
    package var found: String {
        guard offset < input.count else { return "the end of the input" }
        let byte = input[offset]
        switch byte {
        case UInt8(ascii: "\""): return "a string"
        case UInt8(ascii: "{"): return "an object"
        case UInt8(ascii: "["): return "an array"
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return "a number"
        case _ where hasLiteral("true"): return "true"
        case _ where hasLiteral("false"): return "false"
        case _ where hasLiteral("null"): return "null"
        case 0x21...0x7E: return "'\(Character(Unicode.Scalar(byte)))'"
        default: return "the byte 0x\(String(byte, radix: 16, uppercase: true))"
        }
    }

    @inline(__always)
    package mutating func skipWhitespace() {
        while offset < input.count {
            switch input[offset] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): offset += 1
            default: return
            }
        }
    }

    /// Moves past `literal` if the input continues with it.
    private mutating func consumeLiteral(_ literal: StaticString) -> Bool {
        guard hasLiteral(literal) else { return false }
        offset += literal.utf8CodeUnitCount
        return true
    }

    private func hasLiteral(_ literal: StaticString) -> Bool {
        literal.withUTF8Buffer { expected in
            guard offset + expected.count <= input.count else { return false }
            for index in 0..<expected.count where input[offset + index] != expected[index] { return false }
            return true
        }
    }
}

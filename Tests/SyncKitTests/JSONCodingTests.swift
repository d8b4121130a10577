import Codecs
import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport
import Testing

/// SyncKit's own JSON writer and reader: values round-trip exactly, the bytes are those
/// `JSONEncoder` writes, and the reader refuses everything RFC 8259 does not allow, saying what
/// and where.
@Suite struct JSONCodingTests {
    // MARK: Helpers

    /// What the writer makes of one SQL value.
    private func written(_ value: SQLValue, escapingSlashes: Bool = false) throws -> Data {
        var writer = JSONWriter(escapingSlashes: escapingSlashes)
        try writer.writeSQLValue(value)
        return writer.data
    }

    private func readSQLValue(_ data: Data) throws -> SQLValue {
        try JSONReader.read(data) { try $0.readSQLValue() }
    }

    /// The error reading `json` with `read` throws; records an issue if it reads fine.
    private func rejection(_ json: String, _ read: (inout JSONReader) throws -> Void) -> JSONReadError? {
        rejection(Data(json.utf8), read)
    }

    private func rejection(_ data: Data, _ read: (inout JSONReader) throws -> Void) -> JSONReadError? {
        do {
            try JSONReader.read(data, read)
            Issue.record("\(String(decoding: data, as: UTF8.self)) was accepted")
            return nil
        } catch let error as JSONReadError {
            return error
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    // MARK: Round trips

    static let doubles: [Double] = [
        0.1, 1e300, -0.0, 0, .leastNonzeroMagnitude, 1, 2, -1.5, 1e15, 1e16, 1e21, 1e22, 1e-7, 0.0001, 123456.789, .pi, 0.30000000000000004,
        9_007_199_254_740_994, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNormalMagnitude, 2.5e-308, 100,
    ]

    @Test(arguments: doubles)
    func realsReadBackBitExactAndAreWrittenAsJSONEncoderWritesThem(_ value: Double) throws {
        let data = try written(.real(value))
        #expect(data == (try ReferenceWireFormat.encoder().encode(SQLValue.real(value))))
        guard case .real(let decoded) = try readSQLValue(data) else {
            Issue.record("\(value) did not read back as a real")
            return
        }
        #expect(decoded.bitPattern == value.bitPattern, "\(value) read back as \(decoded)")
    }

    @Test func randomRealsReadBackBitExact() throws {
        var random = SeededGenerator(seed: 7)
        for _ in 0..<5_000 {
            let value = Double(bitPattern: random.next())
            guard value.isFinite else { continue }
            let data = try written(.real(value))
            guard case .real(let decoded) = try readSQLValue(data) else {
                Issue.record("\(value) did not read back as a real")
                return
            }
            #expect(decoded.bitPattern == value.bitPattern, "\(value): \(String(decoding: data, as: UTF8.self)) read back as \(decoded)")
        }
    }

    @Test func nonFiniteRealsAreRefusedLikeJSONEncoderRefusesThem() {
        for value in [Double.nan, .infinity, -.infinity] {
            #expect(throws: EncodingError.self) { _ = try written(.real(value)) }
        }
    }

    @Test(arguments: [Int64.min, .max, 0, -1, 1, 9, 10, -10, 99, 100, 1 << 53, -(1 << 53) - 1, 1_234_567_890_123])
    func integersRoundTripAndMatchJSONEncoder(_ value: Int64) throws {
        let data = try written(.integer(value))
        #expect(data == (try ReferenceWireFormat.encoder().encode(SQLValue.integer(value))))
        #expect(try readSQLValue(data) == .integer(value))
    }

    @Test(arguments: [UInt64.max, 0, 9, 10, UInt64(Int64.max), UInt64(Int64.max) + 1, 10_000_000_000_000_000_000])
    func unsignedIntegersRoundTrip(_ value: UInt64) throws {
        var writer = JSONWriter()
        writer.writeUnsignedInteger(value)
        #expect(writer.string == String(value))
        #expect(try JSONReader.read(writer.data) { try $0.readUnsignedInteger() } == value)
    }

    static let strings = [
        "", "plain", "quote \" inside", "back\\slash", "a/b </script>", "tab\there", "line\nfeed\r\n", "\u{0}\u{1}\u{8}\u{b}\u{c}\u{1f}",
        "delete \u{7f}", "é ñ ü", "日本語", "emoji 😀 family 👩‍👩‍👧", "\u{2028}\u{2029}", "\u{feff}bom", "mixed \"/\\\n😀\u{0}",
        String((0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) }),
    ]

    @Test(arguments: strings)
    func stringsRoundTripAndAreEscapedAsJSONEncoderEscapesThem(_ text: String) throws {
        for escapingSlashes in [false, true] {
            let data = try written(.text(text), escapingSlashes: escapingSlashes)
            #expect(data == (try ReferenceWireFormat.encoder(escapingSlashes: escapingSlashes).encode(text)), "\(text.debugDescription)")
            #expect(try readSQLValue(data) == .text(text))
        }
    }

    @Test func randomStringsAreEscapedAsJSONEncoderEscapesThem() throws {
        var random = SeededGenerator(seed: 11)
        let ranges: [ClosedRange<UInt32>] = [0...0x7F, 0...0x1F, 0x80...0x7FF, 0x800...0xD7FF, 0xE000...0xFFFF, 0x10000...0x10FFFF]
        for _ in 0..<500 {
            var text = ""
            for _ in 0..<Int.random(in: 0...12, using: &random) {
                let range = ranges.randomElement(using: &random)!
                text.unicodeScalars.append(Unicode.Scalar(UInt32.random(in: range, using: &random))!)
            }
            var writer = JSONWriter()
            writer.writeString(text)
            #expect(writer.data == (try ReferenceWireFormat.encoder().encode(text)), "\(text.debugDescription)")
            #expect(try JSONReader.read(writer.data) { try $0.readString() } == text)
        }
    }

    /// Both sides look at eight bytes at a time: put each kind of special byte at every place
    /// of strings around those block boundaries.
    @Test func specialBytesAreFoundAtEveryPosition() throws {
        for length in 1..<26 {
            for position in 0..<length {
                for special in ["\"", "\\", "/", "\n", "\u{1}", "\u{1f}", "é", "😀"] {
                    var characters = Array(repeating: "x", count: length)
                    characters[position] = special
                    let text = characters.joined()
                    for escapingSlashes in [false, true] {
                        let data = try written(.text(text), escapingSlashes: escapingSlashes)
                        #expect(data == (try ReferenceWireFormat.encoder(escapingSlashes: escapingSlashes).encode(text)), "\(text.debugDescription)")
                        #expect(try readSQLValue(data) == .text(text), "\(text.debugDescription)")
                    }
                }
            }
        }
    }

    @Test func blobsRoundTripAsBase64() throws {
        // 0xFF 0xFF is "//8=": base64 has slashes, which the stored columns' format escapes.
        for bytes in [[], [0], [0, 1, 255], [255, 255], Array(0...255), Array(repeating: 0xAB, count: 1_001)] as [[UInt8]] {
            for escapingSlashes in [false, true] {
                let data = try written(.blob(Data(bytes)), escapingSlashes: escapingSlashes)
                #expect(data == (try ReferenceWireFormat.encoder(escapingSlashes: escapingSlashes).encode(SQLValue.blob(Data(bytes)))))
                #expect(try readSQLValue(data) == .blob(Data(bytes)))
            }
        }
    }

    @Test func uuidsAreWrittenUpperCaseAndReadInEitherCase() throws {
        let uuid = UUID(uuidString: "0A1B2C3D-4E5F-4A6B-8C7D-9E0F1A2B3C4D")!
        var writer = JSONWriter()
        writer.writeUUID(uuid)
        #expect(writer.string == "\"\(uuid.uuidString)\"")
        for spelling in [uuid.uuidString, uuid.uuidString.lowercased(), "0A1B2C3D-4E5F-4A6B-8C7D-9E0F1A2B3C4\\u0044"] {
            #expect(try JSONReader.read("\"\(spelling)\"") { try $0.readUUID() } == uuid)
        }
    }

    @Test func uuidsParseExactlyWhenEveryDigitIsHex() throws {
        let valid = Array("0A1B2C3D-4E5F-4A6B-8C7D-9E0F1A2B3C4D".utf8)
        let dashes = [8, 13, 18, 23]
        // Every byte value at every position: accepted exactly when the result is still hex
        // digits with dashes in their places (stricter than UUID(uuidString:), which lets
        // whitespace into the digits).
        for position in 0..<36 {
            for value in UInt8.min...UInt8.max {
                var bytes = valid
                bytes[position] = value
                let isHex = (0x30...0x39).contains(value) || (0x41...0x46).contains(value) || (0x61...0x66).contains(value)
                let expected = (dashes.contains(position) ? value == UInt8(ascii: "-") : isHex)
                    ? UUID(uuidString: String(decoding: bytes, as: UTF8.self)) : nil
                #expect(bytes.withUnsafeBufferPointer { UUID(storageTextBytes: $0) } == expected, "byte \(value) at \(position)")
            }
        }
        var random = SeededGenerator(seed: 3)
        for _ in 0..<1_000 {
            let uuid = random.uuid()
            for text in [uuid.uuidString, uuid.uuidString.lowercased()] {
                #expect(Array(text.utf8).withUnsafeBufferPointer { UUID(storageTextBytes: $0) } == uuid)
            }
        }
    }

    // MARK: What the reader accepts

    @Test func whitespaceByteOrderMarkEscapedKeysAndUnknownKeysAreAccepted() throws {
        let json = "\u{feff} \n\t[ 1 , \"a\\/b\" , null ,{ \"unknown\" : [ {\"x\": [true, false, null, -1.5e-3]} ], \"re\\u0061l\" : 2 } ,\r\n {\"blob\":\"AAE=\"} ] \n"
        let values = try JSONReader.read(json) { try $0.readSQLValues() }
        #expect(values == [.integer(1), .text("a/b"), .null, .real(2), .blob(Data([0, 1]))])
    }

    @Test func escapesDecodeIncludingSurrogatePairs() throws {
        let json = #""\"\\\/\b\f\n\r\t\u0041\u00e9\u20AC\ud83d\ude00\u0000""#
        #expect(try JSONReader.read(json) { try $0.readString() } == "\"\\/\u{8}\u{c}\n\r\tAé€😀\u{0}")
    }

    @Test func realsAcceptEveryNumberForm() throws {
        let cases: [(String, Double)] = [("1E2", 100), ("-0", -0.0), ("0.5e+1", 5), ("1e-400", 0), ("123456789012345678901234567890", 1.2345678901234568e29)]
        for (text, expected) in cases {
            let value = try JSONReader.read("{\"real\": \(text)}") { try $0.readSQLValue() }
            guard case .real(let decoded) = value else {
                Issue.record("\(text) did not read as a real")
                continue
            }
            #expect(decoded.bitPattern == expected.bitPattern, "\(text)")
        }
        #expect(try JSONReader.read("-9223372036854775808") { try $0.readInteger() } == .min)
    }

    // MARK: What the reader refuses

    /// A document, how it is read, and the error expected: its message and byte offset.
    struct Refusal: CustomStringConvertible, Sendable {
        enum Reading: Sendable { case unsigned, signed, double, string, bool, values, value, skip }
        var json: String
        var reading: Reading
        var message: String
        var offset: Int
        var path = "top level"
        var description: String { json.debugDescription }
    }

    static let refusals: [Refusal] = [
        Refusal(json: "01", reading: .unsigned, message: "numbers must not have leading zeros", offset: 0),
        Refusal(json: " -01", reading: .signed, message: "numbers must not have leading zeros", offset: 1),
        Refusal(json: "-1", reading: .unsigned, message: "expected an unsigned integer, found a negative number", offset: 0),
        Refusal(json: "18446744073709551616", reading: .unsigned, message: "18446744073709551616 is out of the range of an unsigned 64-bit integer", offset: 0),
        Refusal(json: "9223372036854775808", reading: .signed, message: "9223372036854775808 is out of the range of a signed 64-bit integer", offset: 0),
        Refusal(json: "-9223372036854775809", reading: .signed, message: "-9223372036854775809 is out of the range of a signed 64-bit integer", offset: 0),
        Refusal(json: "1.0", reading: .unsigned, message: "expected an integer, found 1.0, which has a fraction or an exponent", offset: 0),
        Refusal(json: "1e2", reading: .signed, message: "expected an integer, found 1e2, which has a fraction or an exponent", offset: 0),
        Refusal(json: "-", reading: .signed, message: "a number needs digits after its '-'", offset: 1),
        Refusal(json: "1.", reading: .double, message: "a number needs digits after its '.'", offset: 2),
        Refusal(json: ".5", reading: .double, message: "expected a number, found '.'", offset: 0),
        Refusal(json: "1e+", reading: .double, message: "a number needs digits in its exponent", offset: 3),
        Refusal(json: "1e400", reading: .double, message: "1e400 is out of the range of a double", offset: 0),
        Refusal(json: "\"x\\qy\"", reading: .string, message: "'\\q' is not a valid escape", offset: 2),
        Refusal(json: "\"\\ud800\"", reading: .string, message: "lone surrogate \\uD800", offset: 1),
        Refusal(json: "\"\\ud800\\u0041\"", reading: .string, message: "lone surrogate \\uD800", offset: 1),
        Refusal(json: "\"ab\\udc00\"", reading: .string, message: "lone surrogate \\uDC00: a low surrogate must follow a high one", offset: 3),
        Refusal(json: "\"\\u12\"", reading: .string, message: "'\\u' must be followed by four hex digits", offset: 1),
        Refusal(json: "\"abc", reading: .string, message: "the string that starts here has no closing quote", offset: 0),
        Refusal(json: "\"a\tb\"", reading: .string, message: "control character U+0009 must be escaped inside a string", offset: 2),
        Refusal(json: "tru", reading: .bool, message: "expected true or false, found 't'", offset: 0),
        Refusal(json: "[1,]", reading: .values, message: "expected null, an integer, a string, {\"real\": x} or {\"blob\": \"<base64>\"}, found ']'", offset: 3, path: "[1]"),
        Refusal(json: "[1 2]", reading: .values, message: "expected ',' or ']' after an array element, found a number", offset: 3),
        Refusal(json: "[1", reading: .values, message: "expected ',' or ']', found the end of the input", offset: 2),
        Refusal(json: "[null] x", reading: .values, message: "expected the end of the document, found 'x'", offset: 7),
        Refusal(json: "[true]", reading: .values, message: "expected null, an integer, a string, {\"real\": x} or {\"blob\": \"<base64>\"}, found true", offset: 1, path: "[0]"),
        Refusal(json: "[1.5]", reading: .values, message: "which has a fraction or an exponent (a real is written {\"real\": x})", offset: 1, path: "[0]"),
        Refusal(json: "{\"blob\": \"!!\"}", reading: .value, message: "the blob is not base64", offset: 9, path: "blob"),
        Refusal(json: "{\"real\": 1, \"blob\": \"AA==\"}", reading: .value, message: "a SQL value object must have only one of 'real' and 'blob'", offset: 20),
        Refusal(json: "{\"real\": null, \"other\": 1}", reading: .value, message: "found an object with neither", offset: 0),
        Refusal(json: "{\"real\": \"1\"}", reading: .value, message: "expected a number, found a string", offset: 9, path: "real"),
        Refusal(json: "{\"real\" 1}", reading: .value, message: "expected ':' after a key, found a number", offset: 8),
        Refusal(json: "{real: 1}", reading: .value, message: "expected a key (a string), found 'r'", offset: 1),
        Refusal(json: "", reading: .value, message: "expected null, an integer, a string, {\"real\": x} or {\"blob\": \"<base64>\"}, found the end of the input", offset: 0),
        Refusal(json: String(repeating: "[", count: 600), reading: .skip, message: "values nest deeper than 512 levels", offset: 512),
    ]

    @Test(arguments: refusals)
    func malformedInputIsRefusedWithWhatAndWhere(_ refusal: Refusal) {
        let error = rejection(refusal.json) { reader in
            switch refusal.reading {
            case .unsigned: _ = try reader.readUnsignedInteger()
            case .signed: _ = try reader.readInteger()
            case .double: _ = try reader.readDouble()
            case .string: _ = try reader.readString()
            case .bool: _ = try reader.readBool()
            case .values: _ = try reader.readSQLValues()
            case .value: _ = try reader.readSQLValue()
            case .skip: try reader.skipValue()
            }
        }
        #expect(error?.message.contains(refusal.message) == true, "\(error?.description ?? "no error")")
        #expect(error?.offset == refusal.offset, "\(error?.description ?? "no error")")
        #expect(error?.pathDescription == refusal.path, "\(error?.description ?? "no error")")
    }

    @Test(arguments: [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80], [0x80]] as [[UInt8]])
    func invalidUTF8InStringsIsRefused(_ bytes: [UInt8]) {
        let data = Data([UInt8(ascii: "\""), UInt8(ascii: "a")] + bytes + [UInt8(ascii: "\"")])
        let error = rejection(data) { _ = try $0.readString() }
        #expect(error?.message.hasPrefix("invalid UTF-8") == true, "\(error?.description ?? "no error")")
        #expect(error?.offset == 2)
        // In a key that is skipped, too: nothing invalid gets through unread.
        let key = rejection(Data([UInt8(ascii: "{")]) + data + Data(":1}".utf8)) { reader in
            try reader.beginObject()
            while try reader.nextKey() != nil { try reader.skipValue() }
        }
        #expect(key?.message.hasPrefix("invalid UTF-8") == true)
    }

    @Test func pathsAreWrittenAsInCode() {
        let error = JSONReadError(message: "m", offset: 9, path: [.key("changeSets"), .index(3), .key("operations"), .index(7), .key("values"), .index(0)])
        #expect(error.pathDescription == "changeSets[3].operations[7].values[0]")
        #expect(error.description == "changeSets[3].operations[7].values[0]: m")
        #expect(JSONReadError(message: "m", offset: 0, path: [.index(2)]).pathDescription == "[2]")
        #expect(JSONReadError(message: "m", offset: 4).description == "top level: m (at byte 4)")
    }
}

import Foundation

/// Reads what ``ByteWriter`` writes, strictly: reading past the end, an over-long varint, text
/// that is not UTF-8 or an unknown tag throws an error giving the offset.
struct ByteReader {
    /// Why bytes could not be read, and where.
    struct Failure: Error, CustomStringConvertible {
        let offset: Int
        let reason: String
        var description: String { "at byte \(offset): \(reason)" }
    }

    private let bytes: [UInt8]
    private(set) var offset: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var isAtEnd: Bool { offset == bytes.count }

    func failure(_ reason: String) -> Failure { Failure(offset: offset, reason: reason) }

    private mutating func take(_ count: Int, for what: String) throws -> ArraySlice<UInt8> {
        guard count >= 0, count <= bytes.count - offset else {
            throw failure("\(what) needs \(count) byte(s), \(bytes.count - offset) left")
        }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }

    mutating func readByte() throws -> UInt8 {
        try take(1, for: "a byte").first!
    }

    mutating func readBool() throws -> Bool {
        switch try readByte() {
        case 0: return false
        case 1: return true
        case let other: throw Failure(offset: offset - 1, reason: "\(other) is not a flag (0 or 1)")
        }
    }

    mutating func readVarint() throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte()
            guard shift < 64, shift < 63 || byte <= 1 else { throw failure("a variable-length integer is longer than 64 bits") }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    mutating func readFixed64() throws -> UInt64 {
        var value: UInt64 = 0
        for (index, byte) in try take(8, for: "a 64-bit integer").enumerated() { value |= UInt64(byte) << (8 * UInt64(index)) }
        return value
    }

    mutating func readUUID() throws -> UUID {
        let raw = Array(try take(16, for: "a UUID"))
        return UUID(uuid: (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                           raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]))
    }

    private mutating func readLength(of what: String) throws -> Int {
        let length = try readVarint()
        guard length <= UInt64(bytes.count - offset) else { throw failure("\(what) of \(length) bytes runs past the end") }
        return Int(length)
    }

    mutating func readString() throws -> String {
        let start = offset
        let utf8 = try take(try readLength(of: "a string"), for: "a string")
        guard let text = String(validating: utf8, as: UTF8.self) else {
            throw Failure(offset: start, reason: "a string is not valid UTF-8")
        }
        return text
    }

    mutating func readOptionalString() throws -> String? {
        try readBool() ? try readString() : nil
    }

    mutating func readSQLValue() throws -> SQLValue {
        let tagOffset = offset
        guard let tag = ByteWriter.SQLValueTag(rawValue: try readByte()) else {
            throw Failure(offset: tagOffset, reason: "\(bytes[tagOffset]) is not an SQL value tag")
        }
        switch tag {
        case .null: return .null
        case .integer: return .integer(Int64(bitPattern: try readFixed64()))
        case .real: return .real(Double(bitPattern: try readFixed64()))
        case .text: return .text(try readString())
        case .blob: return .blob(Data(try take(try readLength(of: "a blob"), for: "a blob")))
        }
    }
}

import Foundation

/// Appends a compact binary encoding to a byte array: fixed-width little-endian integers,
/// LEB128 variable-length integers, UUIDs as their 16 bytes, length-prefixed UTF-8 strings and
/// tagged SQL values. ``ByteReader`` reads what it writes.
///
/// For data SyncKit keeps in bulk and reads rarely (the conflict journal): a stale merge writes
/// an entry per losing write, and this costs a fraction of the same entry as JSON text.
struct ByteWriter {
    private(set) var bytes: [UInt8]

    init(reservingCapacity capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    var count: Int { bytes.count }

    mutating func writeByte(_ byte: UInt8) {
        bytes.append(byte)
    }

    mutating func writeBool(_ value: Bool) {
        bytes.append(value ? 1 : 0)
    }

    /// LEB128: seven bits per byte, low bits first; small numbers (sequence numbers, lengths) take one or two bytes.
    mutating func writeVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func writeFixed64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func writeUUID(_ uuid: UUID) {
        withUnsafeBytes(of: uuid.uuid) { bytes.append(contentsOf: $0) }
    }

    mutating func writeString(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            writeVarint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func writeOptionalString(_ text: String?) {
        writeBool(text != nil)
        if let text { writeString(text) }
    }

    /// One SQL value: a tag byte (``SQLValueTag``), then its payload.
    mutating func writeSQLValue(_ value: SQLValue) {
        switch value {
        case .null:
            writeByte(SQLValueTag.null.rawValue)
        case .integer(let number):
            writeByte(SQLValueTag.integer.rawValue)
            writeFixed64(UInt64(bitPattern: number))
        case .real(let number):
            writeByte(SQLValueTag.real.rawValue)
            writeFixed64(number.bitPattern)
        case .text(let text):
            writeByte(SQLValueTag.text.rawValue)
            writeString(text)
        case .blob(let data):
            writeByte(SQLValueTag.blob.rawValue)
            writeVarint(UInt64(data.count))
            bytes.append(contentsOf: data)
        }
    }

    /// The tags ``writeSQLValue(_:)`` writes before each value.
    enum SQLValueTag: UInt8 {
        case null = 0, integer, real, text, blob
    }
}

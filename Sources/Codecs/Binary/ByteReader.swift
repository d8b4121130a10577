import Foundation

/// Reads what ``ByteWriter`` wrote, checking every length against the input: damaged input
/// throws ``ByteReadError`` with the offset, it never reads out of bounds.
///
/// The bytes are borrowed: use the reader only inside the closure that lent them.
package struct ByteReader {
    private let base: UnsafeRawPointer?
    package let count: Int
    /// Where the next read starts.
    package private(set) var offset = 0

    package init(_ bytes: UnsafeRawBufferPointer) {
        base = bytes.baseAddress
        count = bytes.count
    }

    package var isAtEnd: Bool { offset == count }

    /// Bytes not read yet.
    package var remaining: Int { count - offset }

    package func failure(_ message: String, at position: Int? = nil) -> ByteReadError {
        ByteReadError(message: message, offset: position ?? offset)
    }

    package mutating func readByte() throws -> UInt8 {
        guard offset < count, let base else { throw failure("unexpected end of data") }
        let byte = base.load(fromByteOffset: offset, as: UInt8.self)
        offset += 1
        return byte
    }

    /// Reads an unsigned LEB128 varint of at most 64 bits.
    package mutating func readVarint() throws -> UInt64 {
        let start = offset
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte()
            // The tenth byte may only hold the 64th bit.
            guard shift < 63 || byte <= 1 else { throw failure("a varint is longer than 64 bits", at: start) }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    /// Reads a zigzag-encoded signed varint.
    package mutating func readSignedVarint() throws -> Int64 {
        let raw = try readVarint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    /// Reads a varint that counts things of at least `minimumSize` bytes each still to come, so
    /// a damaged count fails here rather than reserving memory for billions of elements.
    package mutating func readCount(of what: String, minimumSize: Int = 1) throws -> Int {
        let start = offset
        let value = try readVarint()
        guard value <= UInt64(remaining / max(minimumSize, 1)) else {
            throw failure("\(value) \(what) cannot fit in the \(remaining) bytes left", at: start)
        }
        return Int(value)
    }

    /// Reads eight bytes, least significant first.
    package mutating func readFixed64() throws -> UInt64 {
        let bytes = try readBytes(8)
        return UInt64(littleEndian: bytes.loadUnaligned(as: UInt64.self))
    }

    package mutating func readUUID() throws -> UUID {
        let bytes = try readBytes(16)
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: bytes) }
        return UUID(uuid: uuid)
    }

    /// The next `byteCount` bytes, borrowed like the input.
    package mutating func readBytes(_ byteCount: Int) throws -> UnsafeRawBufferPointer {
        guard byteCount <= remaining else { throw failure("\(byteCount) bytes are needed, \(remaining) are left") }
        let bytes = UnsafeRawBufferPointer(start: base.map { $0 + offset }, count: byteCount)
        offset += byteCount
        return bytes
    }

    /// Reads a varint length, then that many bytes.
    package mutating func readLengthPrefixed() throws -> UnsafeRawBufferPointer {
        try readBytes(try readCount(of: "bytes"))
    }

    /// Reads a length-prefixed string, which must be valid UTF-8.
    package mutating func readString() throws -> String {
        let start = offset
        let bytes = try readLengthPrefixed().assumingMemoryBound(to: UInt8.self)
        // Names and most values are ASCII, which is valid UTF-8 as it is; `String(decoding:)` is
        // specialized for UTF-8 where `String(validating:)` goes through generic code per call.
        if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw failure("a string is not valid UTF-8", at: start)
        }
        return text
    }
}

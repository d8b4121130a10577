import Foundation

/// Writes a compact binary form into one growing buffer: bytes, LEB128 varints, UUIDs as their
/// 16 bytes, length-prefixed UTF-8.
///
/// Used for the form change sets are stored in (``StoredOperations``). The buffer is raw memory
/// the writer owns, as in ``JSONWriter`` and for the same reason: an `Array`'s uniqueness and
/// capacity checks on every append cost more than the encoding. Hence `~Copyable`.
package struct ByteWriter: ~Copyable {
    private var storage: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// How many bytes are written.
    package private(set) var count = 0

    /// - Parameter capacity: bytes to reserve up front; a good guess saves regrowth copies.
    package init(reservingCapacity capacity: Int = 256) {
        self.capacity = max(capacity, 64)
        storage = .allocate(capacity: self.capacity)
    }

    deinit {
        storage.deallocate()
    }

    /// Calls `body` with the output so far. The pointer is valid only inside `body`: the writer
    /// is borrowed for that long, and a noncopyable value may be destroyed right after its last
    /// use, so a pointer taken out of it could outlive its buffer.
    package func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: storage, count: count))
    }

    /// The output as `Data` (a copy).
    package var data: Data { withBytes { Data($0) } }

    package mutating func writeByte(_ byte: UInt8) {
        reserve(1)
        storage[count] = byte
        count += 1
    }

    /// Writes `value` as an unsigned LEB128 varint: seven bits a byte, low bits first, the high
    /// bit set on every byte but the last (1 byte below 128, at most 10).
    package mutating func writeVarint(_ value: UInt64) {
        reserve(10)
        var rest = value
        while rest >= 0x80 {
            storage[count] = UInt8(truncatingIfNeeded: rest) | 0x80
            count += 1
            rest >>= 7
        }
        storage[count] = UInt8(truncatingIfNeeded: rest)
        count += 1
    }

    /// Writes a signed integer zigzag-encoded (0, -1, 1, -2, … as 0, 1, 2, 3, …), so small
    /// negative numbers stay short too.
    package mutating func writeSignedVarint(_ value: Int64) {
        writeVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// Writes the eight bytes of `value`, least significant first.
    package mutating func writeFixed64(_ value: UInt64) {
        reserve(8)
        (UnsafeMutableRawPointer(storage) + count).storeBytes(of: value.littleEndian, as: UInt64.self)
        count += 8
    }

    /// Writes a UUID's 16 bytes.
    package mutating func writeUUID(_ uuid: UUID) {
        reserve(16)
        withUnsafeBytes(of: uuid.uuid) { (UnsafeMutableRawPointer(storage) + count).copyMemory(from: $0.baseAddress!, byteCount: 16) }
        count += 16
    }

    /// Writes the byte count as a varint, then the bytes.
    package mutating func writeLengthPrefixed(_ run: UnsafeRawBufferPointer) {
        writeVarint(UInt64(run.count))
        writeBytes(run)
    }

    /// Writes the bytes as they are, without a length.
    package mutating func writeBytes(_ run: UnsafeRawBufferPointer) {
        guard let base = run.baseAddress, run.count > 0 else { return }
        reserve(run.count)
        (UnsafeMutableRawPointer(storage) + count).copyMemory(from: base, byteCount: run.count)
        count += run.count
    }

    /// Writes a string's UTF-8 bytes, length first.
    package mutating func writeString(_ text: String) {
        var text = text
        text.withUTF8 { writeLengthPrefixed(UnsafeRawBufferPointer($0)) }
    }

    private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(toHold: count + extra) }
    }

    private mutating func grow(toHold needed: Int) {
        storage = grownBuffer(storage, count: count, capacity: &capacity, toHold: needed)
    }
}

import Foundation

extension UUID {
    /// A new random identifier (RFC 9562 version 4, as `UUID()` makes), its 122 random bits
    /// from the system's cryptographically secure generator.
    ///
    /// On Linux, Foundation's `UUID()` opens, reads and closes `/dev/urandom` for every
    /// identifier, about 2 µs; a large insert draws one per new object, and that was a twentieth
    /// of its time. `SystemRandomNumberGenerator` reads the same kernel source with `getrandom`.
    package static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { bytes in
            bytes.storeBytes(of: generator.next() as UInt64, toByteOffset: 0, as: UInt64.self)
            bytes.storeBytes(of: generator.next() as UInt64, toByteOffset: 8, as: UInt64.self)
        }
        uuid.6 = uuid.6 & 0x0F | 0x40  // version 4
        uuid.8 = uuid.8 & 0x3F | 0x80  // variant 10 (RFC 9562)
        return UUID(uuid: uuid)
    }
}

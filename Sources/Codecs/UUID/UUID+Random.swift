import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension UUID {
    /// A new random identifier (RFC 9562 version 4, as `UUID()` makes), its 122 random bits
    /// from the system's cryptographically secure generator.
    ///
    /// On Linux, Foundation's `UUID()` opens, reads and closes `/dev/urandom` for every
    /// identifier, about 2 µs; a large insert draws one per new object. `getentropy` reads the
    /// same kernel source with one `getrandom` call for all sixteen bytes, where
    /// `SystemRandomNumberGenerator` makes one call per eight.
    package static func random() -> UUID {
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { bytes in
            if !fillWithEntropy(bytes) {
                var generator = SystemRandomNumberGenerator()
                bytes.storeBytes(of: generator.next() as UInt64, toByteOffset: 0, as: UInt64.self)
                bytes.storeBytes(of: generator.next() as UInt64, toByteOffset: 8, as: UInt64.self)
            }
        }
        uuid.6 = uuid.6 & 0x0F | 0x40  // version 4
        uuid.8 = uuid.8 & 0x3F | 0x80  // variant 10 (RFC 9562)
        return UUID(uuid: uuid)
    }

    /// Fills `bytes` (at most 256) from the system's entropy source in one call; false where
    /// that call is missing or fails, and the caller draws them another way.
    private static func fillWithEntropy(_ bytes: UnsafeMutableRawBufferPointer) -> Bool {
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        return getentropy(bytes.baseAddress!, bytes.count) == 0
        #else
        return false
        #endif
    }
}

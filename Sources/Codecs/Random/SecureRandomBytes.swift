/// Bytes from the system's cryptographically secure generator (`getrandom` on Linux,
/// `arc4random` on Apple platforms), for secrets such as replica keys and access tokens.
package enum SecureRandomBytes {
    /// `count` random bytes.
    package static func make(count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8]()
        bytes.reserveCapacity(count)
        // Eight bytes per draw: the generator yields 64 bits at a time.
        while bytes.count < count {
            var word = generator.next() as UInt64
            for _ in 0..<min(8, count - bytes.count) {
                bytes.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return bytes
    }
}

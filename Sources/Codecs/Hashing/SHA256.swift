/// SHA-256 (FIPS 180-4), for schema version hashes and token hashes.
///
/// Foundation on Linux has no CryptoKit and the product takes no packages, so this small,
/// test-vector-checked implementation is shared across the package's modules.
package struct SHA256 {
    private static let roundConstants: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    /// The 32-byte digest of `bytes`.
    package static func hash<Bytes: Collection>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finish()
    }

    /// The eight words of the hash so far (FIPS 180-4 §5.3.3 before any block).
    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)
    /// Bytes not yet hashed: less than one 64-byte block.
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    /// A hash of no bytes yet: ``update(_:)`` adds bytes, ``finish()`` gives the digest. A large
    /// upload is hashed a part at a time this way, never whole in memory.
    package init() {
        pending.reserveCapacity(64)
    }

    /// Adds `bytes` to the hashed message. Contiguous bytes (arrays, `Data`, buffers) are read
    /// where they are; others are copied once.
    package mutating func update<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if done == nil { Array(bytes).withUnsafeBytes { update($0) } }
    }

    /// Adds the bytes of `buffer` to the hashed message.
    package mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        length &+= UInt64(buffer.count)
        var offset = 0
        if !pending.isEmpty {
            let taken = min(64 - pending.count, buffer.count)
            pending.append(contentsOf: UnsafeRawBufferPointer(start: base, count: taken))
            offset = taken
            guard pending.count == 64 else { return }
            pending.withUnsafeBytes { compress(blocksAt: $0.baseAddress!, count: 1) }
            pending.removeAll(keepingCapacity: true)
        }
        let blocks = (buffer.count - offset) / 64
        if blocks > 0 { compress(blocksAt: base + offset, count: blocks) }
        offset += blocks * 64
        pending.append(contentsOf: UnsafeRawBufferPointer(start: base + offset, count: buffer.count - offset))
    }

    /// The 32-byte digest of the bytes added.
    package mutating func finish() -> [UInt8] {
        let bitLength = length &* 8
        var tail = pending
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        tail.withUnsafeBytes { compress(blocksAt: $0.baseAddress!, count: $0.count / 64) }
        pending.removeAll()
        let words = [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7]
        return words.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> UInt32(24 - $0 * 8)) } }
    }

    /// Hashes the `count` 64-byte blocks at `blocks`. The message schedule lives on the stack and
    /// the words are read straight from the bytes: hashing a change set of megabytes is a loop
    /// over memory, with no array to copy or check.
    private mutating func compress(blocksAt blocks: UnsafeRawPointer, count: Int) {
        SHA256.roundConstants.withUnsafeBufferPointer { constants in
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { words in
                for block in 0..<count {
                    let start = blocks + block * 64
                    for index in 0..<16 {
                        words[index] = UInt32(bigEndian: start.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self))
                    }
                    for index in 16..<64 {
                        let s0 = words[index - 15].rotatedRight(7) ^ words[index - 15].rotatedRight(18) ^ (words[index - 15] &>> 3)
                        let s1 = words[index - 2].rotatedRight(17) ^ words[index - 2].rotatedRight(19) ^ (words[index - 2] &>> 10)
                        words[index] = words[index - 16] &+ s0 &+ words[index - 7] &+ s1
                    }
                    var (a, b, c, d, e, f, g, h) = state
                    for index in 0..<64 {
                        let sum1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
                        let choice = (e & f) ^ (~e & g)
                        let temp1 = h &+ sum1 &+ choice &+ constants[index] &+ words[index]
                        let sum0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
                        let majority = (a & b) ^ (a & c) ^ (b & c)
                        let temp2 = sum0 &+ majority
                        (h, g, f, e, d, c, b, a) = (g, f, e, d &+ temp1, c, b, a, temp1 &+ temp2)
                    }
                    state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g, state.7 &+ h)
                }
            }
        }
    }

    /// The digest of `text`'s UTF-8 bytes as lowercase hex.
    ///
    /// Built in one string: the server hashes every request's token with it.
    package static func hexDigest(_ text: String) -> String {
        LowercaseHex.encode(hash(text.utf8))
    }
}

extension UInt32 {
    // Masking shifts: the counts are constants below 32, and Swift's checked shifts would test them.
    fileprivate func rotatedRight(_ count: UInt32) -> UInt32 { (self &>> count) | (self &<< (32 &- count)) }
}

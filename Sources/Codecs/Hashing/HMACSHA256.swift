/// HMAC-SHA256 (RFC 2104 over FIPS 180-4 SHA-256), for change-set authenticators.
package enum HMACSHA256 {
    /// SHA-256's block size in bytes.
    private static let blockSize = 64

    /// The 32-byte authentication code of `message` under `key`.
    package static func authenticationCode<Key: Collection, Message: Collection>(key: Key, message: Message) -> [UInt8]
    where Key.Element == UInt8, Message.Element == UInt8 {
        // Keys longer than a block are hashed first; shorter ones are padded with zeros (RFC 2104 §2).
        var blockKey = key.count > blockSize ? SHA256.hash(key) : Array(key)
        blockKey += [UInt8](repeating: 0, count: blockSize - blockKey.count)
        // The message, which may be megabytes, is hashed where it is rather than appended to the key.
        var inner = SHA256()
        inner.update(blockKey.map { $0 ^ 0x36 })
        inner.update(message)
        var outer = SHA256()
        outer.update(blockKey.map { $0 ^ 0x5c })
        outer.update(inner.finish())
        return outer.finish()
    }

    /// Whether `code` is `message`'s authentication code under `key`, compared in time that does
    /// not depend on where the bytes differ, so a forger learns nothing from how long a refusal takes.
    package static func isValid<Key: Collection, Message: Collection>(_ code: [UInt8], key: Key, message: Message) -> Bool
    where Key.Element == UInt8, Message.Element == UInt8 {
        constantTimeEqual(code, authenticationCode(key: key, message: message))
    }

    /// Whether two byte strings are equal, in time that depends only on their length (for keys
    /// and authentication codes, whose comparison must not tell a guesser how close it came).
    package static func constantTimeEqual(_ first: [UInt8], _ second: [UInt8]) -> Bool {
        guard first.count == second.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(first, second) { difference |= left ^ right }
        return difference == 0
    }
}

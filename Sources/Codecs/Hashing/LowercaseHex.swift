/// Bytes as lowercase hexadecimal text and back: how replica keys travel in headers and
/// change-set authenticators in JSON.
package enum LowercaseHex {
    /// Two lowercase hex digits per byte.
    package static func encode<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            for (index, byte) in bytes.enumerated() {
                buffer[index * 2] = HexDigit.lowercase(byte >> 4)
                buffer[index * 2 + 1] = HexDigit.lowercase(byte & 0x0f)
            }
            return bytes.count * 2
        }
    }

    /// The bytes of `text`, which must be an even number of hex digits (either case); `nil` otherwise.
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            let high = UUIDText.hexValue(utf8[index]), low = UUIDText.hexValue(utf8[index + 1])
            guard high | low < 16 else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}

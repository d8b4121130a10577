import Foundation

/// The text form object identifiers are stored in (`uuidString`'s: upper-case hex, 8-4-4-4-12),
/// written and parsed by hand.
///
/// On Linux, Foundation formats `uuidString` with `snprintf` and parses `UUID(uuidString:)` with
/// `sscanf`; saving and merging convert identifiers for every row and every metadata lookup, and
/// those two calls were a sixth of a merge's time.
extension UUID {
    /// The same text as `uuidString`, without formatted printing.
    package var storageText: String {
        withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { output in
                var position = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        output[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    let byte = bytes[index]
                    output[position] = UUIDText.hexDigits[Int(byte >> 4)]
                    output[position + 1] = UUIDText.hexDigits[Int(byte & 0x0F)]
                    position += 2
                }
                return 36
            }
        }
    }

    /// Whether `storageText` sorts before `other.storageText`, without making either string:
    /// upper-case hex digits sort as their values do, so the text order is the byte order.
    package func precedesInStorageOrder(_ other: UUID) -> Bool {
        let (left, right) = (uuid, other.uuid)
        let leftHigh = UUIDText.bigEndianWord(left.0, left.1, left.2, left.3, left.4, left.5, left.6, left.7)
        let rightHigh = UUIDText.bigEndianWord(right.0, right.1, right.2, right.3, right.4, right.5, right.6, right.7)
        if leftHigh != rightHigh { return leftHigh < rightHigh }
        return UUIDText.bigEndianWord(left.8, left.9, left.10, left.11, left.12, left.13, left.14, left.15)
            < UUIDText.bigEndianWord(right.8, right.9, right.10, right.11, right.12, right.13, right.14, right.15)
    }

    /// Parses the 8-4-4-4-12 hex form, in either case, as `UUID(uuidString:)` does; nil if `text`
    /// is anything else.
    package init?(storageText text: String) {
        var text = text
        guard let parsed = text.withUTF8({ UUIDText.parse($0) }) else { return nil }
        self.init(uuid: parsed)
    }

    /// Parses the 8-4-4-4-12 hex form from UTF-8 bytes.
    package init?(storageTextBytes bytes: UnsafeBufferPointer<UInt8>) {
        guard let parsed = UUIDText.parse(bytes) else { return nil }
        self.init(uuid: parsed)
    }
}

/// The conversions behind ``Foundation/UUID/storageText``.
enum UUIDText {
    static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// The eight bytes as one number, the first most significant (uuid_t is a tuple, not an array).
    @inline(__always)
    static func bigEndianWord(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8, _ b4: UInt8, _ b5: UInt8, _ b6: UInt8, _ b7: UInt8) -> UInt64 {
        var word = UInt64(b0) << 56 | UInt64(b1) << 48 | UInt64(b2) << 40 | UInt64(b3) << 32
        word |= UInt64(b4) << 24 | UInt64(b5) << 16 | UInt64(b6) << 8 | UInt64(b7)
        return word
    }

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> uuid_t? {
        guard bytes.count == 36,
              bytes[8] == UInt8(ascii: "-"), bytes[13] == UInt8(ascii: "-"),
              bytes[18] == UInt8(ascii: "-"), bytes[23] == UInt8(ascii: "-") else { return nil }
        var result: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let complete = withUnsafeMutableBytes(of: &result) { output -> Bool in
            var position = 0
            for index in 0..<16 {
                if position == 8 || position == 13 || position == 18 || position == 23 { position += 1 }
                guard let high = value(ofHexDigit: bytes[position]), let low = value(ofHexDigit: bytes[position + 1]) else { return false }
                output[index] = high << 4 | low
                position += 2
            }
            return true
        }
        return complete ? result : nil
    }

    private static func value(ofHexDigit digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
}

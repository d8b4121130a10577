import Foundation

/// The text form object identifiers are stored in (`uuidString`'s: upper-case hex, 8-4-4-4-12),
/// written and parsed by hand.
///
/// On Linux, Foundation formats `uuidString` with `snprintf` and parses `UUID(uuidString:)` with
/// `sscanf`; saving and merging convert identifiers for every row and every metadata lookup, and
/// those two calls were a sixth of a merge's time.
extension UUID {
    /// The same text as `uuidString`, without formatted printing: the form LocalStore stores
    /// identifiers in, and the form sync writes replica IDs in.
    public var storageText: String {
        String(unsafeUninitializedCapacity: 36) { output in
            UUIDText.write(self, to: output.baseAddress!)
            return 36
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
    public init?(storageText text: String) {
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
package enum UUIDText {
    /// Writes the 36 bytes of `uuid`'s text form at `output`: each byte's two digits and the
    /// dashes at fixed positions, so that nothing branches (the positions are those ``parse(_:)``
    /// reads).
    package static func write(_ uuid: UUID, to output: UnsafeMutablePointer<UInt8>) {
        let bytes = uuid.uuid
        // One group of the 8-4-4-4-12 form per line.
        writeByte(bytes.0, output, 0); writeByte(bytes.1, output, 2); writeByte(bytes.2, output, 4); writeByte(bytes.3, output, 6)
        output[8] = UInt8(ascii: "-")
        writeByte(bytes.4, output, 9); writeByte(bytes.5, output, 11)
        output[13] = UInt8(ascii: "-")
        writeByte(bytes.6, output, 14); writeByte(bytes.7, output, 16)
        output[18] = UInt8(ascii: "-")
        writeByte(bytes.8, output, 19); writeByte(bytes.9, output, 21)
        output[23] = UInt8(ascii: "-")
        writeByte(bytes.10, output, 24); writeByte(bytes.11, output, 26); writeByte(bytes.12, output, 28)
        writeByte(bytes.13, output, 30); writeByte(bytes.14, output, 32); writeByte(bytes.15, output, 34)
    }

    /// Writes `byte`'s two upper-case hex digits at `position`.
    @inline(__always)
    private static func writeByte(_ byte: UInt8, _ output: UnsafeMutablePointer<UInt8>, _ position: Int) {
        output[position] = HexDigit.uppercase(byte >> 4)
        output[position + 1] = HexDigit.uppercase(byte & 0x0F)
    }

    /// The eight bytes as one number, the first most significant (uuid_t is a tuple, not an array).
    @inline(__always)
    package static func bigEndianWord(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8, _ b4: UInt8, _ b5: UInt8, _ b6: UInt8, _ b7: UInt8) -> UInt64 {
        var word = UInt64(b0) << 56 | UInt64(b1) << 48 | UInt64(b2) << 40 | UInt64(b3) << 32
        word |= UInt64(b4) << 24 | UInt64(b5) << 16 | UInt64(b6) << 8 | UInt64(b7)
        return word
    }

    /// Parses `8-4-4-4-12` hex digits (either case), as `UUID(uuidString:)` does (though stricter:
    /// it lets whitespace into the digits).
    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> uuid_t? {
        guard bytes.count == 36, let base = bytes.baseAddress, base[8] == UInt8(ascii: "-"), base[13] == UInt8(ascii: "-"),
              base[18] == UInt8(ascii: "-"), base[23] == UInt8(ascii: "-") else { return nil }
        // OR of all digit values: above 15 if any byte was not a hex digit. Checked once at the
        // end, so that the fixed positions below run without branches.
        var combined: UInt8 = 0
        let value: uuid_t = (
            hexByte(base, 0, &combined), hexByte(base, 2, &combined), hexByte(base, 4, &combined), hexByte(base, 6, &combined),
            hexByte(base, 9, &combined), hexByte(base, 11, &combined), hexByte(base, 14, &combined), hexByte(base, 16, &combined),
            hexByte(base, 19, &combined), hexByte(base, 21, &combined), hexByte(base, 24, &combined), hexByte(base, 26, &combined),
            hexByte(base, 28, &combined), hexByte(base, 30, &combined), hexByte(base, 32, &combined), hexByte(base, 34, &combined))
        return combined < 16 ? value : nil
    }

    /// The byte two hex digits at `position` spell; ORs their values into `combined`.
    @inline(__always)
    private static func hexByte(_ base: UnsafePointer<UInt8>, _ position: Int, _ combined: inout UInt8) -> UInt8 {
        let high = hexValue(base[position]), low = hexValue(base[position + 1])
        combined |= high | low
        return high << 4 | low
    }

    /// A hex digit's value (either case), or 0xFF for any other byte.
    ///
    /// Without branches: in random identifiers a digit is a letter six times in sixteen, so a
    /// branch between the two readings would be mispredicted about every third digit. Both
    /// readings are computed and masks keep the one that applies.
    @inline(__always)
    package static func hexValue(_ byte: UInt8) -> UInt8 {
        let digit = byte &- UInt8(ascii: "0")
        // Setting bit 5 folds 'A'-'F' onto 'a'-'f'; 'a' reads as 10.
        let letter = (byte | 0x20) &- (UInt8(ascii: "a") &- 10)
        let isDigit: UInt8 = digit < 10 ? 0xFF : 0
        let isLetter: UInt8 = letter &- 10 < 6 ? 0xFF : 0
        return (digit & isDigit) | (letter & isLetter) | ~(isDigit | isLetter)
    }
}

/// Byte-level character classes for HTTP/1.1 syntax (RFC 9110 §5.6, RFC 9112).
///
/// The parser works on raw bytes rather than `Character`s: it is faster and it keeps hostile,
/// non-UTF-8 input from ever reaching Unicode-aware code paths.
package enum ASCII {
    package static let space: UInt8 = 0x20
    package static let tab: UInt8 = 0x09
    package static let carriageReturn: UInt8 = 0x0D
    package static let lineFeed: UInt8 = 0x0A
    package static let colon: UInt8 = 0x3A
    package static let semicolon: UInt8 = 0x3B
    package static let percent: UInt8 = 0x25
    package static let plus: UInt8 = 0x2B
    package static let questionMark: UInt8 = 0x3F
    package static let ampersand: UInt8 = 0x26
    package static let equals: UInt8 = 0x3D
    package static let slash: UInt8 = 0x2F
    package static let hash: UInt8 = 0x23

    /// `tchar` from RFC 9110 §5.6.2: the bytes allowed in methods and field names.
    package static func isTokenCharacter(_ byte: UInt8) -> Bool {
        tokenTable[Int(byte)]
    }

    /// Bytes allowed inside a field value: visible ASCII, space, tab and obs-text (0x80-0xFF).
    package static func isFieldValueCharacter(_ byte: UInt8) -> Bool {
        byte == tab || byte >= 0x20 && byte != 0x7F
    }

    /// Visible ASCII without space: the bytes allowed in a request target.
    package static func isTargetCharacter(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F
    }

    package static func isDigit(_ byte: UInt8) -> Bool {
        byte >= 0x30 && byte <= 0x39
    }

    /// The value of a hexadecimal digit, or `nil`.
    package static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }

    package static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }

    private static let tokenTable: [Bool] = (0..<256).map { value in
        let byte = UInt8(value)
        if byte >= 0x30 && byte <= 0x39 { return true }
        if byte >= 0x41 && byte <= 0x5A { return true }
        if byte >= 0x61 && byte <= 0x7A { return true }
        return "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
}

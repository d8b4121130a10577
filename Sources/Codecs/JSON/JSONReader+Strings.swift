/// Scanning strings: the closing quote, escapes, surrogate pairs and UTF-8 validity.
extension JSONReader {
    /// Reads the string whose opening quote is at `offset`. A string without escapes stays a
    /// view of the input (no copy); one with escapes is decoded into new bytes.
    package mutating func scanString() throws -> JSONStringValue {
        let quote = offset
        let start = offset + 1
        var position = start
        // OR of all bytes: the high bit says whether UTF-8 must be checked.
        var combined: UInt8 = 0
        // Eight bytes at a time up to the first quote, backslash or control character (the
        // input goes on after the string, so only its last few bytes are read one by one).
        if let base = input.baseAddress {
            var wide: UInt64 = 0
            let ones: UInt64 = 0x0101_0101_0101_0101
            while position + 8 <= input.count {
                // The first byte in the lowest bits, whatever the machine's byte order.
                let word = UInt64(littleEndian: UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self))
                let special = (word &- ones &* 0x20) & ~word & 0x8080_8080_8080_8080
                    | JSONWriter.zeroBytes(word ^ (ones &* UInt64(UInt8(ascii: "\""))))
                    | JSONWriter.zeroBytes(word ^ (ones &* UInt64(UInt8(ascii: "\\"))))
                if special == 0 {
                    wide |= word
                    position += 8
                    continue
                }
                // The lowest flagged byte is a real one (the bit tricks only misfire above a real
                // one): skip the plain bytes before it.
                let plain = special.trailingZeroBitCount / 8
                wide |= word & ((1 << (8 * UInt64(plain))) &- 1)
                position += plain
                break
            }
            if wide & 0x8080_8080_8080_8080 != 0 { combined = 0x80 }
        }
        while position < input.count {
            let byte = input[position]
            if byte == UInt8(ascii: "\"") {
                let bytes = UnsafeBufferPointer(rebasing: input[start..<position])
                if combined & 0x80 != 0 { try JSONReader.checkUTF8(bytes, startingAt: start) }
                offset = position + 1
                return JSONStringValue(raw: bytes)
            }
            if byte == UInt8(ascii: "\\") {
                offset = position
                return try scanEscapedString(from: start, quote: quote)
            }
            if byte < 0x20 { throw JSONReader.controlCharacter(byte, at: position) }
            combined |= byte
            position += 1
        }
        throw JSONReadError(message: "the string that starts here has no closing quote", offset: quote)
    }

    /// The rest of a string from its first backslash (at `offset`), decoded into new bytes.
    private mutating func scanEscapedString(from start: Int, quote: Int) throws -> JSONStringValue {
        var decoded = Array(UnsafeBufferPointer(rebasing: input[start..<offset]))
        decoded.reserveCapacity(2 * decoded.count + 16)
        while offset < input.count {
            let byte = input[offset]
            switch byte {
            case UInt8(ascii: "\""):
                // Escapes only produce valid UTF-8, so the string is valid if the raw bytes are.
                try JSONReader.checkUTF8(UnsafeBufferPointer(rebasing: input[start..<offset]), startingAt: start)
                offset += 1
                return JSONStringValue(decoded: decoded)
            case UInt8(ascii: "\\"):
                try appendEscape(to: &decoded)
            case 0..<0x20:
                throw JSONReader.controlCharacter(byte, at: offset)
            default:
                decoded.append(byte)
                offset += 1
            }
        }
        throw JSONReadError(message: "the string that starts here has no closing quote", offset: quote)
    }

    /// Decodes the escape at `offset` (its backslash) into `decoded`.
    private mutating func appendEscape(to decoded: inout [UInt8]) throws {
        guard offset + 1 < input.count else { throw failure("the string ends inside an escape") }
        let letter = input[offset + 1]
        let simple: UInt8
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): simple = letter
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "n"): simple = 0x0A
        case UInt8(ascii: "r"): simple = 0x0D
        case UInt8(ascii: "t"): simple = 0x09
        case UInt8(ascii: "u"):
            try appendUnicodeEscape(to: &decoded)
            return
        default:
            let shown = letter >= 0x21 && letter <= 0x7E ? String(Unicode.Scalar(letter)) : "0x" + String(letter, radix: 16, uppercase: true)
            throw failure("'\\\(shown)' is not a valid escape (JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX)")
        }
        decoded.append(simple)
        offset += 2
    }

    /// Decodes `\uXXXX` at `offset`, or a surrogate pair `\uD83D\uDE00`, into UTF-8.
    private mutating func appendUnicodeEscape(to decoded: inout [UInt8]) throws {
        guard let unit = hexQuad(at: offset + 2) else { throw failure("'\\u' must be followed by four hex digits") }
        var scalarValue = unit
        switch unit {
        case 0xD800...0xDBFF:
            guard offset + 7 < input.count, input[offset + 6] == UInt8(ascii: "\\"), input[offset + 7] == UInt8(ascii: "u"),
                  let low = hexQuad(at: offset + 8), (0xDC00...0xDFFF).contains(low) else {
                throw failure("lone surrogate \\u\(String(unit, radix: 16, uppercase: true)): a high surrogate must be followed by a \\u escape of a low surrogate")
            }
            scalarValue = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            offset += 6
        case 0xDC00...0xDFFF:
            throw failure("lone surrogate \\u\(String(unit, radix: 16, uppercase: true)): a low surrogate must follow a high one")
        default:
            break
        }
        offset += 6
        // Surrogates are excluded above, so this is a valid scalar: encode it as UTF-8.
        switch scalarValue {
        case ..<0x80:
            decoded.append(UInt8(scalarValue))
        case ..<0x800:
            decoded.append(0xC0 | UInt8(scalarValue >> 6))
            decoded.append(0x80 | UInt8(scalarValue & 0x3F))
        case ..<0x10000:
            decoded.append(0xE0 | UInt8(scalarValue >> 12))
            decoded.append(0x80 | UInt8((scalarValue >> 6) & 0x3F))
            decoded.append(0x80 | UInt8(scalarValue & 0x3F))
        default:
            decoded.append(0xF0 | UInt8(scalarValue >> 18))
            decoded.append(0x80 | UInt8((scalarValue >> 12) & 0x3F))
            decoded.append(0x80 | UInt8((scalarValue >> 6) & 0x3F))
            decoded.append(0x80 | UInt8(scalarValue & 0x3F))
        }
    }

    /// The value of four hex digits at `position`, or `nil`.
    private func hexQuad(at position: Int) -> UInt32? {
        guard position + 4 <= input.count else { return nil }
        var value: UInt32 = 0
        for index in position..<(position + 4) {
            let digit = UUIDText.hexValue(input[index])
            guard digit < 16 else { return nil }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    private static func controlCharacter(_ byte: UInt8, at position: Int) -> JSONReadError {
        let code = String(byte, radix: 16, uppercase: true)
        return JSONReadError(message: "control character U+\(code.count == 1 ? "000" : "00")\(code) must be escaped inside a string", offset: position)
    }

    /// Checks that `bytes` (which start at input offset `start`) are well-formed UTF-8: no
    /// overlong forms, surrogates or scalars above U+10FFFF (Unicode's table 3-7).
    package static func checkUTF8(_ bytes: UnsafeBufferPointer<UInt8>, startingAt start: Int) throws {
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int
            var secondRange: ClosedRange<UInt8> = 0x80...0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; secondRange = 0xA0...0xBF
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; secondRange = 0x80...0x9F
            case 0xF0: length = 4; secondRange = 0x90...0xBF
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; secondRange = 0x80...0x8F
            default: throw JSONReadError(message: "invalid UTF-8 (byte 0x\(String(lead, radix: 16, uppercase: true)))", offset: start + index)
            }
            guard index + length <= bytes.count, secondRange.contains(bytes[index + 1]) else {
                throw JSONReadError(message: "invalid UTF-8 (a truncated or overlong sequence)", offset: start + index)
            }
            for continuation in (index + 2)..<(index + length) where bytes[continuation] & 0xC0 != 0x80 {
                throw JSONReadError(message: "invalid UTF-8 (a truncated sequence)", offset: start + index)
            }
            index += length
        }
    }
}

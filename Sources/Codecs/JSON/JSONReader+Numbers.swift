/// Reading numbers: integers straight from their digits, with range checks; doubles
/// correctly rounded, so that what ``JSONWriter/writeDouble(_:)`` wrote reads back bit-exact.
extension JSONReader {
    /// Reads an integer from 0 to `UInt64.max`. A minus sign, a fraction or an exponent is an error.
    package mutating func readUnsignedInteger() throws -> UInt64 {
        skipWhitespace()
        if offset < input.count, input[offset] == UInt8(ascii: "-") {
            throw failure("expected an unsigned integer, found a negative number")
        }
        return try scanMagnitude(limit: .max, type: "an unsigned 64-bit integer")
    }

    /// Reads an integer from `Int64.min` to `Int64.max`. A fraction or an exponent is an error.
    package mutating func readInteger() throws -> Int64 {
        skipWhitespace()
        guard offset < input.count, input[offset] == UInt8(ascii: "-") else {
            return Int64(try scanMagnitude(limit: UInt64(Int64.max), type: "a signed 64-bit integer"))
        }
        offset += 1
        let magnitude = try scanMagnitude(limit: Int64.min.magnitude, type: "a signed 64-bit integer", start: offset - 1)
        return Int64(bitPattern: 0 &- magnitude)
    }

    /// Reads any number as the nearest double; one out of the double range is an error.
    package mutating func readDouble() throws -> Double {
        skipWhitespace()
        let start = offset
        let isShortInteger = try scanNumber()
        let negative = input[start] == UInt8(ascii: "-")
        if isShortInteger {
            // At most 15 digits: exact in a double, no need for the general conversion.
            var magnitude: UInt64 = 0
            for index in (negative ? start + 1 : start)..<offset { magnitude = magnitude &* 10 &+ UInt64(input[index] &- UInt8(ascii: "0")) }
            // Negating 0 gives -0.0, as "-0" must read.
            return negative ? -Double(magnitude) : Double(magnitude)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: input[start..<offset]), as: UTF8.self)
        // Double(_:) is correctly rounded (strtod), so shortest-form output reads back bit-exact.
        guard let value = Double(text), value.isFinite else {
            throw JSONReadError(message: "\(text) is out of the range of a double", offset: start)
        }
        return value
    }

    /// Checks the number at `offset` against JSON's grammar and moves past it. Returns whether
    /// it is an integer of at most 15 digits (no fraction, no exponent).
    @discardableResult
    package mutating func scanNumber() throws -> Bool {
        let start = offset
        if offset < input.count, input[offset] == UInt8(ascii: "-") { offset += 1 }
        guard offset < input.count, isDigit(input[offset]) else { throw failure("expected a number, found \(found)") }
        if input[offset] == UInt8(ascii: "0") {
            offset += 1
            if offset < input.count, isDigit(input[offset]) { throw JSONReadError(message: "numbers must not have leading zeros", offset: start) }
        } else {
            while offset < input.count, isDigit(input[offset]) { offset += 1 }
        }
        let integerEnd = offset
        if offset < input.count, input[offset] == UInt8(ascii: ".") {
            offset += 1
            guard offset < input.count, isDigit(input[offset]) else { throw failure("a number needs digits after its '.'") }
            while offset < input.count, isDigit(input[offset]) { offset += 1 }
        }
        if offset < input.count, input[offset] | 0x20 == UInt8(ascii: "e") {
            offset += 1
            if offset < input.count, input[offset] == UInt8(ascii: "+") || input[offset] == UInt8(ascii: "-") { offset += 1 }
            guard offset < input.count, isDigit(input[offset]) else { throw failure("a number needs digits in its exponent") }
            while offset < input.count, isDigit(input[offset]) { offset += 1 }
        }
        let digits = integerEnd - start - (input[start] == UInt8(ascii: "-") ? 1 : 0)
        return offset == integerEnd && digits <= 15
    }

    /// The digits of an integer at `offset` (after any sign), at most `limit`.
    /// - Parameter start: where the number starts (its sign), for error messages.
    private mutating func scanMagnitude(limit: UInt64, type: String, start: Int? = nil) throws -> UInt64 {
        let numberStart = start ?? offset
        guard offset < input.count, isDigit(input[offset]) else {
            if start != nil { throw failure("a number needs digits after its '-'") }
            throw failure("expected an integer, found \(found)")
        }
        var value: UInt64 = 0
        var overflow = false
        if input[offset] == UInt8(ascii: "0") {
            offset += 1
            if offset < input.count, isDigit(input[offset]) { throw JSONReadError(message: "numbers must not have leading zeros", offset: numberStart) }
        } else {
            while offset < input.count {
                let digit = input[offset] &- UInt8(ascii: "0")
                guard digit < 10 else { break }
                let (times, timesOverflow) = value.multipliedReportingOverflow(by: 10)
                let (sum, sumOverflow) = times.addingReportingOverflow(UInt64(digit))
                overflow = overflow || timesOverflow || sumOverflow
                value = sum
                offset += 1
            }
        }
        if offset < input.count, input[offset] == UInt8(ascii: ".") || input[offset] | 0x20 == UInt8(ascii: "e") {
            offset = numberStart
            _ = try? scanNumber()
            let text = String(decoding: UnsafeBufferPointer(rebasing: input[numberStart..<offset]), as: UTF8.self)
            throw JSONReadError(message: "expected an integer, found \(text), which has a fraction or an exponent", offset: numberStart)
        }
        guard !overflow, value <= limit else {
            let text = String(decoding: UnsafeBufferPointer(rebasing: input[numberStart..<offset]), as: UTF8.self)
            throw JSONReadError(message: "\(text) is out of the range of \(type)", offset: numberStart)
        }
        return value
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }
}

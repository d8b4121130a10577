/// One hexadecimal digit as an ASCII byte.
///
/// Computed, not looked up in a table: a table held in a global is reached through its lazy
/// initializer's check on every access, which per digit cost more than the digit.
package enum HexDigit {
    /// `0`–`9` then `A`–`F`, for `value` in 0...15.
    @inline(__always)
    package static func uppercase(_ value: UInt8) -> UInt8 { value &+ (value < 10 ? 48 : 55) }

    /// `0`–`9` then `a`–`f`, for `value` in 0...15.
    @inline(__always)
    package static func lowercase(_ value: UInt8) -> UInt8 { value &+ (value < 10 ? 48 : 87) }
}

/// One hexadecimal digit as an ASCII byte.
///
/// Computed, not looked up in a table: a table held in a global is reached through its lazy
/// initializer's check on every access, which per digit cost more than the digit. Computed
/// without branches: in random identifiers and digests a digit is a letter six times in sixteen,
/// so a branch between the two would be mispredicted about every third digit.
package enum HexDigit {
    /// `0`–`9` then `A`–`F`, for `value` in 0...15.
    @inline(__always)
    package static func uppercase(_ value: UInt8) -> UInt8 { value &+ 48 &+ isLetter(value) &* 7 }

    /// `0`–`9` then `a`–`f`, for `value` in 0...15.
    @inline(__always)
    package static func lowercase(_ value: UInt8) -> UInt8 { value &+ 48 &+ isLetter(value) &* 39 }

    /// 1 if `value` (0...15) is written as a letter, 0 if as a digit: `9 - value` wraps around,
    /// setting the top bit, exactly when `value` is above 9.
    @inline(__always)
    private static func isLetter(_ value: UInt8) -> UInt8 { (9 &- value) >> 7 }
}

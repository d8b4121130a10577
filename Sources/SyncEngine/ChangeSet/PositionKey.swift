import LocalStoreCore
/// Keys that order the members of an ordered relationship: strings compared byte by byte,
/// from which a key between any two can always be made.
///
/// Concurrent inserts at the same place may produce the same key; members then sort by the
/// `(HLC, replica ID)` of the change set that placed them, so every replica agrees.
enum PositionKey {
    private static let digits = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
    private static let base = digits.count

    private static func digitValue(_ byte: UInt8) -> Int {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return Int(byte - UInt8(ascii: "A")) + 10
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return Int(byte - UInt8(ascii: "a")) + 36
        default: return 0
        }
    }

    /// A key strictly between `lower` and `upper` (`nil`: unbounded). Never ends in `0`, so a
    /// key below any key can always be made.
    static func between(_ lower: String?, _ upper: String?) -> String {
        let low = Array((lower ?? "").utf8)
        let high = upper.map { Array($0.utf8) }
        var result: [UInt8] = []
        var bounded = high != nil
        var index = 0
        while true {
            let lowDigit = index < low.count ? digitValue(low[index]) : 0
            let highDigit = bounded ? (index < high!.count ? digitValue(high![index]) : 0) : base
            if highDigit - lowDigit > 1 {
                result.append(digits[(lowDigit + highDigit) / 2])
                return String(decoding: result, as: UTF8.self)
            }
            result.append(digits[lowDigit])
            if highDigit - lowDigit == 1 { bounded = false }
            index += 1
        }
    }

    /// `count` increasing keys strictly between `lower` and `upper`, short even for large counts
    /// (bisection, so lengths grow with the logarithm of `count`).
    static func keys(count: Int, between lower: String?, _ upper: String?) -> [String] {
        guard count > 0 else { return [] }
        var result: [String] = []
        result.reserveCapacity(count)
        func fill(_ count: Int, _ lower: String?, _ upper: String?) {
            guard count > 0 else { return }
            let middle = between(lower, upper)
            let left = (count - 1) / 2
            fill(left, lower, middle)
            result.append(middle)
            fill(count - 1 - left, middle, upper)
        }
        fill(count, lower, upper)
        return result
    }
}

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
    ///
    /// Keys from other replicas may hold any characters, and neighbours may be equal or out of
    /// order; when there is no room between the two in this alphabet, the key is made above
    /// `lower` alone (members with equal keys still sort by their change sets' `(HLC, replica)`),
    /// so a key is always found.
    static func between(_ lower: String?, _ upper: String?) -> String {
        let low = (lower ?? "").utf8.map(digitValue)
        var high = upper.map { $0.utf8.map(digitValue) }
        if let bound = high, !hasRoom(below: bound, above: low) { high = nil }
        var result: [UInt8] = []
        var index = 0
        while true {
            let lowDigit = index < low.count ? low[index] : 0
            let highDigit = high.map { index < $0.count ? $0[index] : 0 } ?? base
            if highDigit - lowDigit > 1 {
                result.append(digits[(lowDigit + highDigit) / 2])
                return String(decoding: result, as: UTF8.self)
            }
            result.append(digits[lowDigit])
            if highDigit - lowDigit == 1 { high = nil }
            index += 1
        }
    }

    /// Whether `high` is above `low` as digit strings, a missing digit counting as `0`: then
    /// a key exists between them.
    private static func hasRoom(below high: [Int], above low: [Int]) -> Bool {
        for index in 0..<max(high.count, low.count) {
            let highDigit = index < high.count ? high[index] : 0
            let lowDigit = index < low.count ? low[index] : 0
            if highDigit != lowDigit { return highDigit > lowDigit }
        }
        return false
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

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The IMF-fixdate for the current second (`Sun, 06 Nov 1994 08:49:37 GMT`), reformatted at
/// most once per second.
///
/// `DateFormatter` is far too slow for the per-request hot path, so the date is assembled from
/// `gmtime_r` fields by hand and shared between threads under a lock.
final class HTTPDateCache: @unchecked Sendable {
    // @unchecked: both stored vars are only touched while holding `lock`.
    private let lock = NSLock()
    private var cachedSecond: time_t = -1
    private var cachedBytes: [UInt8] = []

    /// The formatted current date as ASCII bytes.
    func currentDate() -> [UInt8] {
        let now = time(nil)
        lock.lock()
        defer { lock.unlock() }
        if now != cachedSecond {
            cachedSecond = now
            cachedBytes = Self.format(now)
        }
        return cachedBytes
    }

    static func format(_ seconds: time_t) -> [UInt8] {
        var clock = seconds
        var parts = tm()
        gmtime_r(&clock, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        var bytes: [UInt8] = []
        bytes.reserveCapacity(29)
        bytes.append(contentsOf: days[Int(parts.tm_wday) % 7].utf8)
        bytes.append(contentsOf: ", ".utf8)
        appendTwoDigits(Int(parts.tm_mday), to: &bytes)
        bytes.append(ASCII.space)
        bytes.append(contentsOf: months[Int(parts.tm_mon) % 12].utf8)
        bytes.append(ASCII.space)
        let year = Int(parts.tm_year) + 1900
        appendTwoDigits(year / 100, to: &bytes)
        appendTwoDigits(year % 100, to: &bytes)
        bytes.append(ASCII.space)
        appendTwoDigits(Int(parts.tm_hour), to: &bytes)
        bytes.append(ASCII.colon)
        appendTwoDigits(Int(parts.tm_min), to: &bytes)
        bytes.append(ASCII.colon)
        appendTwoDigits(Int(parts.tm_sec), to: &bytes)
        bytes.append(contentsOf: " GMT".utf8)
        return bytes
    }

    private static func appendTwoDigits(_ value: Int, to bytes: inout [UInt8]) {
        bytes.append(0x30 + UInt8(truncatingIfNeeded: (value / 10) % 10))
        bytes.append(0x30 + UInt8(truncatingIfNeeded: value % 10))
    }
}

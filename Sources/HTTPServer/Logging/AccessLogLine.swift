import Foundation
import Codecs

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The access-log line for one exchange:
/// `<ISO8601 time> <remote> <method> <path> <status> <bytes> <ms>ms`.
///
/// Built byte by byte because it runs once per request: `Date.formatted` and `String(format:)`
/// cost more than answering a request from cache does.
package enum AccessLogLine {
    /// The line for `summary` finished at `date`, without a newline. The method's and path's
    /// spaces and control characters are percent-escaped, so one request is always one line.
    package static func format(_ summary: HTTPRequestSummary, at date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(96 + summary.path.utf8.count)
        appendTimestamp(date, to: &bytes)
        bytes.append(ASCII.space)
        if summary.remoteAddress.isEmpty {
            bytes.append(UInt8(ascii: "-"))
        } else {
            bytes.append(contentsOf: summary.remoteAddress.utf8)
        }
        bytes.append(ASCII.space)
        appendEscaped(summary.method, to: &bytes)
        bytes.append(ASCII.space)
        appendEscaped(summary.path, to: &bytes)
        bytes.append(ASCII.space)
        appendDigits(summary.status, width: 1, to: &bytes)
        bytes.append(ASCII.space)
        appendDigits(summary.responseBytes, width: 1, to: &bytes)
        bytes.append(ASCII.space)
        appendMilliseconds(summary.duration, to: &bytes)
        bytes.append(contentsOf: "ms".utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `text` with bytes up to space and DEL written as `%XX`; other bytes, UTF-8 included, as is.
    package static func escaped(_ text: String) -> String {
        var bytes: [UInt8] = []
        appendEscaped(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func appendEscaped(_ text: String, to bytes: inout [UInt8]) {
        for byte in text.utf8 {
            if byte <= ASCII.space || byte == 0x7F {
                bytes.append(ASCII.percent)
                bytes.append(HexDigit.uppercase(byte >> 4))
                bytes.append(HexDigit.uppercase(byte & 0x0F))
            } else {
                bytes.append(byte)
            }
        }
    }

    /// `2023-11-14T22:13:20.000Z`: UTC, milliseconds truncated, as `Date.ISO8601FormatStyle`
    /// with fractional seconds writes it.
    private static func appendTimestamp(_ date: Date, to bytes: inout [UInt8]) {
        let interval = date.timeIntervalSince1970
        let wholeSeconds = interval.rounded(.down)
        var seconds = time_t(wholeSeconds)
        let milliseconds = min(999, max(0, Int((interval - wholeSeconds) * 1000)))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        appendDigits(Int(parts.tm_year) + 1900, width: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(Int(parts.tm_mon) + 1, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(Int(parts.tm_mday), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        appendDigits(Int(parts.tm_hour), width: 2, to: &bytes)
        bytes.append(ASCII.colon)
        appendDigits(Int(parts.tm_min), width: 2, to: &bytes)
        bytes.append(ASCII.colon)
        appendDigits(Int(parts.tm_sec), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        appendDigits(milliseconds, width: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// The duration in milliseconds with three decimals, rounded to the nearest microsecond.
    private static func appendMilliseconds(_ duration: Duration, to bytes: inout [UInt8]) {
        let (seconds, attoseconds) = duration.components
        let microseconds = max(0, seconds) * 1_000_000 + (max(0, attoseconds) + 500_000_000_000) / 1_000_000_000_000
        appendDigits(Int(clamping: microseconds / 1000), width: 1, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        appendDigits(Int(microseconds % 1000), width: 3, to: &bytes)
    }

    /// `value` (not negative) in decimal, zero-padded to at least `width` digits.
    private static func appendDigits(_ value: Int, width: Int, to bytes: inout [UInt8]) {
        let value = max(0, value)
        var divisor = 1
        var count = 1
        while count < width || value / divisor >= 10 {
            divisor *= 10
            count += 1
        }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}

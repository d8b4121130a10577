import Foundation
@testable import HTTPServer
import Testing

@testable import SyncServer

@Suite struct AccessLogLineTests {
    func summary(method: String = "GET", path: String = "/health", status: Int = 200, bytes: Int = 10,
                 duration: Duration = .microseconds(1500), remote: String = "127.0.0.1:4000") -> HTTPRequestSummary {
        HTTPRequestSummary(method: method, path: path, status: status, requestBytes: 1, responseBytes: bytes,
                           duration: duration, remoteAddress: remote)
    }

    @Test func timestampsMatchFoundationsISO8601WithMilliseconds() {
        var generator = SystemRandomNumberGenerator()
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let fixed: [Double] = [0, 1_700_000_000, 1_700_000_000.999, 951_782_400.5, 4_102_444_799.001]
        let random = (0..<500).map { _ in Double.random(in: 0..<4_102_444_800, using: &generator) }
        for seconds in fixed + random {
            // Whole milliseconds, so both sides agree on the digits without rounding questions.
            let date = Date(timeIntervalSince1970: (seconds * 1000).rounded(.down) / 1000 + 0.0001)
            let line = AccessLogLine.format(summary(), at: date)
            #expect(line.hasPrefix(date.formatted(style) + " "), "\(seconds): \(line)")
        }
    }

    @Test func durationsAreMillisecondsWithThreeDecimals() {
        let date = Date(timeIntervalSince1970: 0)
        let cases: [(Duration, String)] = [
            (.zero, "0.000ms"), (.microseconds(1500), "1.500ms"), (.nanoseconds(999), "0.001ms"),
            (.nanoseconds(1_234_567), "1.235ms"), (.seconds(2), "2000.000ms"), (.milliseconds(61_001), "61001.000ms"),
        ]
        for (duration, expected) in cases {
            #expect(AccessLogLine.format(summary(duration: duration), at: date).hasSuffix(" \(expected)"))
        }
    }

    @Test func fieldsAreInOrderAndControlCharactersAreEscapedSoALineStaysOneLine() {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(AccessLogLine.format(summary(), at: date) == "2023-11-14T22:13:20.000Z 127.0.0.1:4000 GET /health 200 10 1.500ms")
        #expect(AccessLogLine.format(summary(method: "-", path: "-", status: 400, bytes: 0, remote: ""), at: date)
            == "2023-11-14T22:13:20.000Z - - - 400 0 1.500ms")
        let hostile = summary(path: "/a b\r\nforged\t\u{7F}/ümlaut", bytes: 1234567)
        #expect(AccessLogLine.format(hostile, at: date)
            == "2023-11-14T22:13:20.000Z 127.0.0.1:4000 GET /a%20b%0D%0Aforged%09%7F/ümlaut 200 1234567 1.500ms")
        #expect(AccessLogLine.escaped("\u{0}x") == "%00x")
    }
}

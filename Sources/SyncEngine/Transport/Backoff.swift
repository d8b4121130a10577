import Foundation
import LocalStoreCore

/// How ``SyncClient`` waits between attempts of a request that failed for a reason that may
/// pass (a network error, a `5xx`, `408` or `429`): exponential growth, capped, with jitter.
///
/// The delay before retry `n` (1 for the first retry) is `min(maximum, initial * multiplier^(n-1))`,
/// of which the upper half is scaled by the jitter source ("equal jitter"): clients that failed
/// together do not retry together, yet each waits at least half the nominal delay.
///
/// ```swift
/// var backoff = Backoff(initial: .milliseconds(100), maximum: .seconds(10), maxAttempts: 6)
/// backoff.jitter = { 0.5 }            // deterministic, e.g. in tests
/// backoff.delay(beforeRetry: 3)       // 100 ms * 2^2 = 400 ms nominal -> 300 ms
/// ```
public struct Backoff: Sendable {
    /// The nominal delay before the first retry.
    public var initial: Duration
    /// The largest nominal delay.
    public var maximum: Duration
    /// Growth factor between consecutive retries (at least 1).
    public var multiplier: Double
    /// Attempts in total, the first one included; `1` means never retry.
    public var maxAttempts: Int
    /// A source of numbers in `0...1` scaling the jittered half of each delay. Defaults to the
    /// system random generator; inject a constant for reproducible timing.
    public var jitter: @Sendable () -> Double

    /// Creates a policy; the defaults retry 5 times over roughly 6 seconds at most.
    public init(
        initial: Duration = .milliseconds(200), maximum: Duration = .seconds(30), multiplier: Double = 2,
        maxAttempts: Int = 6, jitter: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) {
        self.initial = initial
        self.maximum = maximum
        self.multiplier = multiplier
        self.maxAttempts = maxAttempts
        self.jitter = jitter
    }

    /// A policy that never retries.
    public static var none: Backoff { Backoff(maxAttempts: 1) }

    /// The delay to wait before retry number `retry` (1 for the first retry).
    public func delay(beforeRetry retry: Int) -> Duration {
        let initialSeconds = Backoff.seconds(initial), maximumSeconds = Backoff.seconds(maximum)
        let exponent = Double(max(0, retry - 1))
        let nominal = min(maximumSeconds, initialSeconds * pow(max(1, multiplier), exponent))
        let fraction = min(1, max(0, jitter()))
        let seconds = nominal / 2 + nominal / 2 * fraction
        return .nanoseconds(Int64((seconds * 1e9).rounded()))
    }

    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}

import Dispatch

/// A monotonic clock in nanoseconds, for timeouts and request durations.
///
/// Wall-clock time can jump (NTP, manual changes); timeouts must not.
package enum MonotonicTime {
    package static func nanoseconds() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }
}

extension Duration {
    /// The duration in whole nanoseconds, clamped to zero for negative values.
    package var clampedNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (product, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? UInt64.max : product + UInt64(max(0, attoseconds) / 1_000_000_000)
    }
}

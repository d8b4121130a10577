import Foundation
import LocalStoreCore

/// A hybrid logical clock timestamp: milliseconds of physical time in the high 48 bits, a
/// logical counter in the low 16.
///
/// Timestamps order change sets: a replica's clock never goes backwards, and a change set's
/// timestamp is greater than that of every change set its author had applied. Ties between
/// concurrent writes break on `(HLC, replica ID)`.
public struct HLC: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The packed value.
    public var rawValue: UInt64

    /// A timestamp from its packed value.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// A timestamp from its parts.
    public init(milliseconds: UInt64, counter: UInt16) {
        rawValue = milliseconds << 16 | UInt64(counter)
    }

    /// Milliseconds since 1970.
    public var milliseconds: UInt64 { rawValue >> 16 }
    /// The logical counter.
    public var counter: UInt16 { UInt16(truncatingIfNeeded: rawValue) }

    public static func < (lhs: HLC, rhs: HLC) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "\(milliseconds).\(counter)" }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(UInt64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// Produces timestamps for one replica.
///
/// The wall clock is only read to stamp local change sets; merging never reads it.
public struct HybridLogicalClock: Sendable {
    /// The last timestamp issued or observed.
    public private(set) var latest: HLC

    /// A clock whose next timestamp comes after `latest`.
    public init(latest: HLC = HLC(rawValue: 0)) { self.latest = latest }

    /// A timestamp for a new local change set: after every earlier one, and close to `wallClock`.
    public mutating func tick(wallClockMilliseconds wallClock: UInt64) -> HLC {
        if wallClock > latest.milliseconds {
            latest = HLC(milliseconds: wallClock, counter: 0)
        } else if latest.counter == UInt16.max {
            // The counter is exhausted: borrow the next millisecond rather than wrap.
            latest = HLC(milliseconds: latest.milliseconds + 1, counter: 0)
        } else {
            latest = HLC(rawValue: latest.rawValue + 1)
        }
        return latest
    }

    /// Takes note of a timestamp from another replica, so the next local one is greater.
    public mutating func observe(_ remote: HLC) {
        if remote > latest { latest = remote }
    }

    /// Milliseconds since 1970 from the system clock.
    public static func wallClockMilliseconds() -> UInt64 {
        UInt64(max(0, Date().timeIntervalSince1970 * 1000))
    }
}

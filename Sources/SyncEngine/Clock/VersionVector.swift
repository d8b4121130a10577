import Codecs
import Foundation
import LocalStoreCore

/// Identifies a replica: random, permanent, chosen when its store is first set up for sync.
public typealias ReplicaID = UUID

/// One change set's identity: its author and its number among the author's change sets.
public struct Dot: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The replica that committed the change set.
    public var replica: ReplicaID
    /// The change set's number among its author's, counting from 1 without gaps.
    public var seq: UInt64

    /// The dot of change set `seq` of `replica`.
    public init(replica: ReplicaID, seq: UInt64) {
        self.replica = replica
        self.seq = seq
    }

    public static func < (lhs: Dot, rhs: Dot) -> Bool {
        lhs.replica != rhs.replica ? lhs.replica.precedesInStorageOrder(rhs.replica) : lhs.seq < rhs.seq
    }

    public var description: String { "\(replica.storageText):\(seq)" }
}

/// For every replica, the highest seq of its change sets that have been applied.
///
/// ```swift
/// var vector = VersionVector()
/// vector[replica] = 3
/// vector.covers(Dot(replica: replica, seq: 2)) // true
/// ```
public struct VersionVector: Hashable, Sendable, CustomStringConvertible {
    /// Replica -> highest applied seq. Replicas at 0 are not stored.
    public private(set) var entries: [ReplicaID: UInt64]

    /// A vector with these entries; entries at 0 are dropped.
    public init(_ entries: [ReplicaID: UInt64] = [:]) {
        self.entries = entries.filter { $0.value > 0 }
    }

    /// The highest seq of `replica` applied, 0 for none; setting 0 removes the entry.
    public subscript(replica: ReplicaID) -> UInt64 {
        get { entries[replica] ?? 0 }
        set { entries[replica] = newValue == 0 ? nil : newValue }
    }

    /// Whether the change set `dot` is among those this vector has seen.
    public func covers(_ dot: Dot) -> Bool { self[dot.replica] >= dot.seq }

    /// Whether this vector has seen everything `other` has.
    public func dominates(_ other: VersionVector) -> Bool {
        other.entries.allSatisfy { self[$0.key] >= $0.value }
    }

    /// The entry-wise maximum.
    public mutating func merge(_ other: VersionVector) {
        for (replica, seq) in other.entries where seq > self[replica] { self[replica] = seq }
    }

    /// Entries sorted by replica ID: the one order used wherever a vector is written out.
    public var sortedEntries: [(replica: ReplicaID, seq: UInt64)] {
        entries.map { ($0.key, $0.value) }.sorted { $0.replica.precedesInStorageOrder($1.replica) }
    }

    /// The entries of this vector that differ from `base`, for sending relative to a vector the receiver has.
    public func delta(from base: VersionVector) -> [ReplicaID: UInt64] {
        var delta: [ReplicaID: UInt64] = [:]
        for (replica, seq) in entries where base[replica] != seq { delta[replica] = seq }
        for (replica, _) in base.entries where entries[replica] == nil { delta[replica] = 0 }
        return delta
    }

    /// Rebuilds a vector from a base and a delta made by ``delta(from:)``.
    public static func applying(_ delta: [ReplicaID: UInt64], to base: VersionVector) -> VersionVector {
        var vector = base
        for (replica, seq) in delta { vector[replica] = seq }
        return vector
    }

    public var description: String {
        "[" + sortedEntries.map { "\($0.replica.uuidString.prefix(8)):\($0.seq)" }.joined(separator: ", ") + "]"
    }
}

import Foundation

/// The change sets of one merge batch as the engine sees them: the one whose operations are
/// applied now, which ones the batch applied, and the version vectors it met (its own change
/// sets', and those of stored change sets it read).
struct BatchChangeSets {
    /// The change set being applied, from ``begin(_:)`` on.
    private var applying: ChangeSet?
    /// The replica ``covers(_:)`` last looked up in the current change set's vector, and its seq.
    private var lastCoverage: (replica: ReplicaID, seq: UInt64)?
    /// The vectors of the batch's change sets and of stored ones read, by dot.
    var vectors: [Dot: VersionVector] = [:]
    /// The dots of the change sets the batch applied, so journal entries about counts name only
    /// what this batch brought (see `MergeEngine+Counts.swift`).
    private(set) var applied: Set<Dot> = []

    /// The change set whose operations are applied now.
    ///
    /// Setting it replaces the operations in view (a slice of the same change set, or its header
    /// alone) without counting a new change set; ``begin(_:)`` starts one.
    var current: ChangeSet {
        get {
            guard let applying else { preconditionFailure("MergeEngine: an operation was applied before its change set began") }
            return applying
        }
        set {
            applying = newValue
            lastCoverage = nil
        }
    }

    /// Makes `changeSet` the one whose operations are applied next, and one of the batch's.
    mutating func begin(_ changeSet: ChangeSet) {
        current = changeSet
        vectors[changeSet.dot] = changeSet.vector
        applied.insert(changeSet.dot)
    }

    /// Whether the current change set had seen `dot`. The last replica asked is remembered: the
    /// writes a change set replaces are mostly of one or two replicas, and a vector lookup hashes
    /// an identifier.
    mutating func covers(_ dot: Dot) -> Bool {
        if let lastCoverage, lastCoverage.replica == dot.replica { return lastCoverage.seq >= dot.seq }
        let seq = current.vector[dot.replica]
        lastCoverage = (dot.replica, seq)
        return seq >= dot.seq
    }
}

import Foundation

/// The part of a compacted log a server no longer keeps entry by entry: every entry up to
/// ``position``, summed up as the position and the vector of their dots.
///
/// A server keeps each compacted entry's cursor, dot and digest only while some active replica
/// may still pull from a cursor before it (see <doc:ServerStorage>, "Log compaction"): the
/// digests check a pull's `afterDigest`, the dots show which entries the puller provably has.
/// Once every active replica has pulled past an entry, only the floor remains of it. A pull
/// from a cursor below the floor can no longer be checked entry by entry; it reads on from the
/// compaction point only when the puller is known to have every entry the floor covers.
package struct LogFloor: Sendable, Equatable {
    /// The last entry the floor covers: its cursor and the digest of the log up to it.
    package var position: LogPosition
    /// The highest seq of each replica among the entries up to ``position``. A replica's change
    /// sets are logged in order, so these are exactly the entries' dots.
    package var vector: VersionVector

    /// A floor with these fields.
    package init(position: LogPosition, vector: VersionVector) {
        self.position = position
        self.vector = vector
    }

    /// The first entry up to the floor that a puller cannot be shown to have: one neither
    /// `puller` authored nor `known` covers (the seq right after `known`'s); `nil` when there is none.
    package func firstUnknown(to puller: ReplicaID?, known: VersionVector) -> Dot? {
        for (replica, seq) in vector.sortedEntries where replica != puller && known[replica] < seq {
            return Dot(replica: replica, seq: known[replica] + 1)
        }
        return nil
    }

    /// Where the check that a puller has every compacted entry after `cursor` reads on from the
    /// per-entry records: `cursor` itself above the floor; below it, the floor's cursor once the
    /// floor's entries passed the check, or the first of them the puller cannot be shown to have.
    package static func checkStart(_ floor: LogFloor?, after cursor: Int64, to puller: ReplicaID?,
                                   known: VersionVector) -> (cursor: Int64, unknown: Dot?) {
        guard let floor, cursor < floor.position.cursor else { return (cursor, nil) }
        return (floor.position.cursor, floor.firstUnknown(to: puller, known: known))
    }

    /// The cursor the floor rises to: the lowest cursor an active replica acknowledged, no
    /// higher than the compaction point; `nil` while no replica is active (then nothing tells
    /// where pullers stand, and the floor stays).
    package static func cursor(below point: Int64, records: [ReplicaRecord], policy: ReplicaPolicy) -> Int64? {
        let now = policy.now()
        let active = records.filter { $0.state(at: now, horizon: policy.horizon) == .active }
        guard let lowest = active.map(\.acknowledgedCursor).min() else { return nil }
        return min(point, lowest)
    }
}

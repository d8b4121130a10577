import Codecs
import Foundation

/// The rules that decide what a relationship shows from the edges in force: which target a
/// to-one holds, which members a `maxCount` hides, in which order an ordered to-many lists its
/// members. They read and write nothing: ``MergeEngine`` reads the edges in force and whether
/// their ends are alive (`MergeEngine+Edges.swift`), asks, and writes the rows, foreign keys,
/// join rows and positions that follow (`MergeEngine+Materialize.swift`,
/// `MergeEngine+Counts.swift`).
///
/// Each rule is a function of the edges in force and their stamps alone, never of the order in
/// which change sets arrived, so every replica that applied the same change sets shows the same.
enum RelationshipResolver {
    /// A live edge seen from one end: the object at the other end, and the stamp of the change
    /// set that added the edge.
    struct Claim: Equatable {
        var id: UUID
        var added: Stamp
    }

    /// The claim a to-one keeps (CONTRACT.md §3.4, §3.7): of the live edges to live objects, the
    /// one added last by `(HLC, replica ID)`. `nil` when there is none: the to-one holds nothing.
    static func latest(_ claims: some Sequence<Claim>) -> Claim? {
        var best: Claim?
        for claim in claims where best.map({ claim.added > $0.added }) ?? true { best = claim }
        return best
    }

    /// One of two writes of the same place (a to-one's target, a member's position): what it
    /// writes there, and the stamp of its change set.
    struct Rival: Equatable {
        var value: String
        var stamp: Stamp
    }

    /// Two writes of one place whose change sets had not seen each other (CONTRACT.md §3.4, §3.5,
    /// §3.7): the larger stamp wins, and the pair is journaled (`to_one`, `move`) on every replica,
    /// whichever write it applied first.
    static func rivals(_ incoming: Rival, _ held: Rival) -> (winner: Rival, loser: Rival) {
        incoming.stamp > held.stamp ? (incoming, held) : (held, incoming)
    }

    /// The source a one-to-one's target keeps (CONTRACT.md §3.4): each source keeps its
    /// ``latest(_:)`` claim, and of the sources whose claim is `target`, the target keeps the one
    /// that claimed it last. The others hold nothing, so both sides always agree.
    static func keepingSource(of target: UUID, _ latestClaims: some Sequence<(source: UUID, claim: Claim)>) -> UUID? {
        var best: (source: UUID, claim: Claim)?
        for candidate in latestClaims where candidate.claim.id == target && (best.map { candidate.claim.added > $0.claim.added } ?? true) {
            best = candidate
        }
        return best?.source
    }

    /// The objects at the other ends of `claims`, each with its earliest live edge, earliest first
    /// and then by identifier (for edges of one change set): the rank a `maxCount` counts
    /// (CONTRACT.md §3.10).
    static func earliestFirst(_ claims: some Sequence<Claim>) -> [Claim] {
        var earliest: [UUID: Stamp] = [:]
        for claim in claims { earliest[claim.id] = min(earliest[claim.id] ?? claim.added, claim.added) }
        return earliest.map { Claim(id: $0.key, added: $0.value) }.sorted {
            $0.added != $1.added ? $0.added < $1.added : $0.id.precedesInStorageOrder($1.id)
        }
    }

    /// The claims of `ranked` (earliest first) that `maximum` hides: every one after the first
    /// `maximum` (CONTRACT.md §3.10). A hidden claim shows again when an earlier one goes.
    static func hidden(_ ranked: [Claim], maximum: Int) -> ArraySlice<Claim> {
        ranked.dropFirst(maximum)
    }

    /// Whether `member` is among the first `maximum` of `ranked`: the member shows at that end.
    static func shows(_ member: UUID, in ranked: [Claim], maximum: Int) -> Bool {
        ranked.prefix(maximum).contains { $0.id == member }
    }

    /// `members` of an ordered to-many in the order they show (CONTRACT.md §3.5): by position key,
    /// then by the stamp of the change set that placed them, then by identifier; members without
    /// a key last, by identifier.
    static func ordered(_ members: [UUID], keys: [UUID: (key: String, stamp: Stamp)]) -> [UUID] {
        members.sorted { left, right in
            switch (keys[left], keys[right]) {
            case (let l?, let r?):
                if l.key != r.key { return l.key < r.key }
                if l.stamp != r.stamp { return l.stamp < r.stamp }
                return left.storageText < right.storageText
            case (.some, .none): return true
            case (.none, .some): return false
            case (.none, .none): return left.storageText < right.storageText
            }
        }
    }
}

extension RelationshipResolver.Rival {
    /// An object named as a rival write's value: its identifier's text.
    init(_ object: UUID, _ stamp: Stamp) {
        self.init(value: object.storageText, stamp: stamp)
    }
}

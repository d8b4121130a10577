import Codecs
import Foundation

/// What a pulling replica reports of the change sets it has written and not yet had acknowledged
/// (pull header `Sync-Unpushed-Bounds`): for each replica, the highest seq its oldest such change
/// set had seen, where that is below what the puller holds now.
///
/// A replica's acknowledged vector says what it *holds*; the stable vector also needs what it
/// will still *push*. A change set written before the replica received something, and pushed
/// after, is concurrent with it: history below what it had not seen must stay until it arrives.
/// The stable vector therefore uses, per active replica, its acknowledged vector lowered to these
/// bounds (see `ReplicaRegistry.stableVector(of:datasetVector:at:horizon:firstAbove:)`). Change sets the
/// replica writes later are written on top of everything it holds: they need no bound.
public struct UnpushedBounds: Sendable, Hashable {
    /// Per replica, the highest seq every unpushed change set is sure to have seen (may be 0).
    /// Replicas not listed are not bounded.
    public var seqs: [ReplicaID: UInt64]
    /// Whether the bounds were too many to send: the replica then holds the stable vector at nothing.
    public var boundsEverything: Bool

    /// No bounds: the replica has nothing unpushed.
    public static let none = UnpushedBounds(seqs: [:], boundsEverything: false)
    /// Every entry bounded to 0: what a replica sends when its bounds would not fit a header.
    public static let everything = UnpushedBounds(seqs: [:], boundsEverything: true)

    /// Bounds with these entries.
    public init(seqs: [ReplicaID: UInt64], boundsEverything: Bool = false) {
        self.seqs = seqs
        self.boundsEverything = boundsEverything
    }

    /// The bounds of a replica that holds `held` and whose oldest unacknowledged change set had
    /// seen `oldestUnpushed` (`nil`: it has none): the entries where that is below `held`.
    public init(held: VersionVector, oldestUnpushed: VersionVector?) {
        guard let oldestUnpushed else {
            self = .none
            return
        }
        var seqs: [ReplicaID: UInt64] = [:]
        for (replica, seq) in held.entries where oldestUnpushed[replica] < seq { seqs[replica] = oldestUnpushed[replica] }
        self.init(seqs: seqs)
    }

    /// `vector` lowered to the bounds.
    public func bound(_ vector: VersionVector) -> VersionVector {
        if boundsEverything { return VersionVector() }
        var bounded = vector
        for (replica, seq) in seqs where bounded[replica] > seq { bounded[replica] = seq }
        return bounded
    }

    /// The header and registry form: `""` for none, `"*"` for everything, else `replica:seq` pairs
    /// separated by commas, in replica order.
    public var text: String {
        if boundsEverything { return "*" }
        return seqs.sorted { $0.key.storageText < $1.key.storageText }.map { "\($0.key.storageText):\($0.value)" }.joined(separator: ",")
    }

    /// The bounds ``text`` wrote, or `nil` when `text` is not of that form.
    public init?(text: String) {
        if text == "*" {
            self = .everything
            return
        }
        var seqs: [ReplicaID: UInt64] = [:]
        for pair in text.split(separator: ",", omittingEmptySubsequences: false) where !text.isEmpty {
            let parts = pair.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let replica = UUID(storageText: String(parts[0])),
                  let seq = UInt64(parts[1]), seqs[replica] == nil else { return nil }
            seqs[replica] = seq
        }
        self.init(seqs: seqs)
    }

    /// The largest ``text`` a client sends; beyond it, it sends ``everything``.
    public static let maximumTextBytes = 8 * 1024
}

import Codecs
import Foundation
import Synchronization

/// What a server knows of one replica of a dataset (see ``DatasetEngine/replicas()``).
///
/// A replica's *acknowledged vector* is what it provably holds: the dataset's vector at the log
/// prefix up to the last cursor it pulled after (a client only sends a cursor it merged up to),
/// joined with the change sets it pushed itself.
public struct ReplicaRecord: Sendable, Equatable {
    /// The replica.
    public var replica: ReplicaID
    /// What the replica provably holds.
    public var acknowledged: VersionVector
    /// The highest log cursor the replica pulled after; ``acknowledged`` covers the log up to it.
    public var acknowledgedCursor: Int64
    /// When the server last heard from the replica, to within ``ReplicaPolicy/lastSeenResolution``.
    public var lastSeen: Date
    /// Whether an operator retired the replica (`syncd replica retire`).
    public var retired: Bool
    /// What the replica reported, on its last pull, of the change sets it has yet to push: the
    /// stable vector stays at or below ``acknowledged`` lowered to these bounds.
    public var unpushedBounds: UnpushedBounds
    /// What the replica reported, on its last pull that said, of the objects it forgot: it holds
    /// no object deleted at or below this vector (pull header `Sync-Forgotten-Below`). `nil`
    /// until it reports one; the server releases the identifiers of forgotten objects only
    /// below what every active replica reported.
    public var forgottenBelow: VersionVector?

    /// A record with these fields.
    public init(replica: ReplicaID, acknowledged: VersionVector, acknowledgedCursor: Int64, lastSeen: Date, retired: Bool,
                unpushedBounds: UnpushedBounds = .none, forgottenBelow: VersionVector? = nil) {
        self.replica = replica
        self.acknowledged = acknowledged
        self.acknowledgedCursor = acknowledgedCursor
        self.lastSeen = lastSeen
        self.retired = retired
        self.unpushedBounds = unpushedBounds
        self.forgottenBelow = forgottenBelow
    }

    /// What the replica holds and will push nothing concurrent with: ``acknowledged`` lowered to
    /// ``unpushedBounds``. The stable vector is the meet of these over the active replicas.
    public var settled: VersionVector { unpushedBounds.bound(acknowledged) }

    /// Whether the replica counts for the stable vector at `now`, is silent beyond the horizon,
    /// or was retired.
    public func state(at now: Date, horizon: TimeInterval) -> ReplicaState {
        if retired { return .retired }
        return now.timeIntervalSince(lastSeen) > horizon ? .silent : .active
    }
}

/// The standing of a replica in its dataset.
public enum ReplicaState: String, Sendable {
    /// Heard from within the horizon and not retired: the stable vector waits for it.
    case active
    /// Not heard from for longer than the horizon: treated as retired (it is refused when it
    /// returns, since history it has not seen may be compacted meanwhile).
    case silent
    /// Retired by an operator: refused on push and pull.
    case retired

    /// Whether the server refuses the replica's pushes and pulls (`410 replica_retired`).
    public var isRefused: Bool { self != .active }
}

/// How a server treats the replicas of its datasets.
public struct ReplicaPolicy: Sendable {
    /// 90 days: how long a replica may stay silent before it counts as retired.
    public static let defaultHorizon: TimeInterval = 90 * 86_400

    /// How long (seconds) a replica may stay silent before it counts as retired.
    public var horizon: TimeInterval
    /// The wall clock the registry stamps contacts with: server bookkeeping, never part of a merge.
    public var now: @Sendable () -> Date

    /// A policy with `horizon` (default 90 days) and the system clock.
    public init(horizon: TimeInterval = ReplicaPolicy.defaultHorizon, now: @escaping @Sendable () -> Date = { Date() }) {
        self.horizon = horizon
        self.now = now
    }

    /// How stale a stored ``ReplicaRecord/lastSeen`` may become before a contact writes it again:
    /// a tenth of the horizon, at most a day. A poll that brings nothing new writes nothing.
    public var lastSeenResolution: TimeInterval { min(86_400, horizon / 10) }
}

/// The rules of a dataset's replica registry, shared by every storage.
package enum ReplicaRegistry {
    /// The record after `replica` pushed change sets whose dots `pushed` covers (`cursor` nil),
    /// or pulled after `cursor` (whose log vector since the record's cursor `logVector` reads)
    /// reporting `unpushed` (a pull replaces the bounds the last one reported) and `forgotten`
    /// (a report replaces the one before; a pull without one keeps it, which stays true), or
    /// `nil` when nothing needs writing.
    ///
    /// - Throws: ``DatasetEngineError/replicaRetired(_:state:)`` when the replica is retired or
    ///   silent beyond the horizon.
    package static func contact(_ existing: ReplicaRecord?, replica: ReplicaID, pushed: VersionVector = VersionVector(),
                                pulledAfter cursor: Int64? = nil, unpushed: UnpushedBounds = .none, forgotten: VersionVector? = nil,
                                policy: ReplicaPolicy,
                                logVector: (_ after: Int64, _ through: Int64) throws -> VersionVector) throws -> ReplicaRecord? {
        let now = policy.now()
        var record = existing ?? ReplicaRecord(replica: replica, acknowledged: VersionVector(), acknowledgedCursor: 0,
                                               lastSeen: now, retired: false)
        let state = record.state(at: now, horizon: policy.horizon)
        if state.isRefused { throw DatasetEngineError.replicaRetired(replica, state: state) }
        var changed = existing == nil || now.timeIntervalSince(record.lastSeen) >= policy.lastSeenResolution
        if let cursor, cursor > record.acknowledgedCursor {
            record.acknowledged.merge(try logVector(record.acknowledgedCursor, cursor))
            record.acknowledgedCursor = cursor
            changed = true
        }
        if cursor != nil, record.unpushedBounds != unpushed {
            record.unpushedBounds = unpushed
            changed = true
        }
        if let forgotten, record.forgottenBelow != forgotten {
            record.forgottenBelow = forgotten
            changed = true
        }
        if !record.acknowledged.dominates(pushed) {
            record.acknowledged.merge(pushed)
            changed = true
        }
        guard changed else { return nil }
        record.lastSeen = now
        return record
    }

    /// The vector of the dots in `changeSets`: what a replica that pushed them holds at least
    /// (each change set arrives after its predecessors).
    package static func vector(of changeSets: [ChangeSet]) -> VersionVector {
        var vector = VersionVector()
        for changeSet in changeSets where vector[changeSet.dot.replica] < changeSet.dot.seq { vector[changeSet.dot.replica] = changeSet.dot.seq }
        return vector
    }

    /// The meet (entry-wise minimum) of the ``ReplicaRecord/settled`` vectors (acknowledged,
    /// lowered to what each has yet to push) of the replicas active at `now`, never beyond
    /// `datasetVector`; `datasetVector` itself when no replica is active.
    ///
    /// Then lowered below the vector of every change set the dataset holds above that meet: such
    /// a change set is not yet everywhere, and one pushed by a replica that wrote it before
    /// receiving something at or below the meet is concurrent with that and will still meet it on
    /// a replica that lacks it. Change sets at or below the meet are not looked at, concurrent
    /// or not: every active replica has applied them, so none merges them after compacting.
    /// `firstAbove(replica, seq)` reads the vector of `replica`'s first stored change set after
    /// `seq` (a replica's change sets see more the later they are, so the first one decides).
    package static func stableVector(of records: [ReplicaRecord], datasetVector: VersionVector, at now: Date,
                                     horizon: TimeInterval,
                                     firstAbove: (_ replica: ReplicaID, _ seq: UInt64) throws -> VersionVector?) throws -> VersionVector {
        var everywhere = datasetVector
        for record in records where record.state(at: now, horizon: horizon) == .active {
            let settled = record.settled
            for (replica, seq) in everywhere.entries { everywhere[replica] = min(seq, settled[replica]) }
        }
        var stable = everywhere
        for (replica, seq) in datasetVector.sortedEntries where seq > everywhere[replica] {
            guard let vector = try firstAbove(replica, everywhere[replica]) else { continue }
            stable = SyncReplica.meet(stable, vector)
        }
        return stable
    }

    /// The meet of the ``ReplicaRecord/forgottenBelow`` vectors of the replicas active at `now`:
    /// no active replica holds an object deleted at or below it. `nil` when one of them has
    /// reported none, or none is active (a server that never heard of a replica cannot tell
    /// what it holds).
    package static func forgottenEverywhereBelow(_ records: [ReplicaRecord], at now: Date, horizon: TimeInterval) -> VersionVector? {
        var everywhere: VersionVector?
        for record in records where record.state(at: now, horizon: horizon) == .active {
            guard let forgotten = record.forgottenBelow else { return nil }
            everywhere = everywhere.map { SyncReplica.meet($0, forgotten) } ?? forgotten
        }
        return everywhere
    }

    /// How far `stable` lags behind `vector`: the sum over replicas of the difference.
    package static func lag(of stable: VersionVector, behind vector: VersionVector) -> UInt64 {
        vector.entries.reduce(0) { sum, entry in sum + (entry.value - min(entry.value, stable[entry.key])) }
    }

    /// A vector as the registry stores it: `replica:seq` pairs separated by commas.
    package static func text(of vector: VersionVector) -> String {
        vector.sortedEntries.map { "\($0.replica.storageText):\($0.seq)" }.joined(separator: ",")
    }

    /// The vector a client sent in ``text(of:)``'s form (header `Sync-Forgotten-Below`), or `nil`
    /// unless every pair is a replica UUID and a decimal seq and no replica comes twice.
    package static func vector(fromHeader text: String) -> VersionVector? {
        guard text != "*", let pairs = UnpushedBounds(text: text) else { return nil }
        return VersionVector(pairs.seqs)
    }

    /// The vector of ``text(of:)``, or `nil` when `text` is damaged.
    package static func vector(fromText text: String) -> VersionVector? {
        var vector = VersionVector()
        for pair in text.split(separator: ",") {
            let parts = pair.split(separator: ":")
            guard parts.count == 2, let replica = UUID(storageText: String(parts[0])), let seq = UInt64(parts[1]) else { return nil }
            vector[replica] = seq
        }
        return vector
    }
}

/// An engine's stable vector, computed at most once per ``maximumAge`` unless the engine's own
/// registry writes invalidate it: every pull answer carries it, and computing it reads every
/// record. A stale value errs low (a replica retired or gone silent since still holds it back),
/// except for a replica another server instance recorded in the last ``maximumAge``.
package final class StableVectorCache: Sendable {
    /// How long a computed stable vector is served.
    package static let maximumAge: TimeInterval = 1
    private let cached = Mutex<(vector: VersionVector, computedAt: Date)?>(nil)

    package init() {}

    /// The cached vector if it is fresh at `now`, else `compute()`'s, which is cached.
    package func vector(at now: Date, compute: () throws -> VersionVector) throws -> VersionVector {
        if let cached = cached.withLock({ $0 }), now.timeIntervalSince(cached.computedAt) < StableVectorCache.maximumAge,
           now >= cached.computedAt {
            return cached.vector
        }
        let vector = try compute()
        self.cached.withLock { $0 = (vector, now) }
        return vector
    }

    /// Forgets the cached vector (a record changed).
    package func invalidate() {
        cached.withLock { $0 = nil }
    }
}

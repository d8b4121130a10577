import Codecs
import Foundation
import LocalStoreCore

/// Everything one local `save()` committed, as one atomic unit: the unit replicas exchange.
public struct ChangeSet: Hashable, Sendable {
    /// Author and number: `(replica ID, seq)`, seq counting from 1 with no gaps.
    public var dot: Dot
    /// When it was committed, by the author's hybrid logical clock.
    public var hlc: HLC
    /// What the author had applied when it committed, its own seq included.
    public var vector: VersionVector
    /// The changes, in the order they apply.
    public var operations: [Operation]
    /// HMAC-SHA256 of the change set under its author's secret key (see
    /// ``ChangeSetAuthenticator``): lets a server check a change set relayed by another replica.
    /// `nil` for change sets recorded before replicas had keys.
    public var authenticator: [UInt8]?

    /// A change set with these parts, as read from the wire or a store; local saves make
    /// theirs through ``SyncReplica``.
    public init(dot: Dot, hlc: HLC, vector: VersionVector, operations: [Operation], authenticator: [UInt8]? = nil) {
        self.dot = dot
        self.hlc = hlc
        self.vector = vector
        self.operations = operations
        self.authenticator = authenticator
    }

    /// The order that wins ties between concurrent writes: larger `(HLC, replica ID)` wins.
    var stamp: Stamp { Stamp(hlc: hlc, replica: dot.replica, seq: dot.seq) }

    /// Checks that every seq in `changeSets` (dots and vector entries) fits SQLite's signed
    /// 64-bit integers, as the stores keep them: the wire format allows any unsigned 64-bit
    /// number, and a larger one must be refused, not stop the process when it is stored.
    package static func checkStorableRanges(_ changeSets: [ChangeSet]) throws {
        let limit = UInt64(Int64.max)
        for changeSet in changeSets {
            guard changeSet.dot.seq <= limit, changeSet.vector.entries.values.allSatisfy({ $0 <= limit }) else {
                throw SyncError(.malformedChangeSet, "change set \(changeSet.dot) has a seq or vector entry above \(limit)")
            }
        }
    }
}

/// One change inside a change set. Objects are named by entity and identifier; relationships by
/// the name of their canonical side (see `Protocol/README.md`).
public enum Operation: Hashable, Sendable {
    /// A new object. Its attributes follow as `set` operations in the same change set.
    case create(entity: String, id: UUID)
    /// New values of one attribute (one value per column: compositions have several).
    case set(entity: String, id: UUID, attribute: String, values: [SQLValue])
    /// The object is deleted; `root` is the object whose deletion this follows from (a cascade).
    case delete(entity: String, id: UUID, root: UUID)
    /// `target` joins the relationship of `id` (a new edge, identified by this change set's dot).
    case link(entity: String, id: UUID, relationship: String, target: UUID)
    /// The edges added by `observed` change sets leave the relationship; edges added by change sets
    /// the author had not seen stay.
    case unlink(entity: String, id: UUID, relationship: String, target: UUID, observed: [Dot])
    /// `member`'s place in the ordered relationship of `id`: members sort by key, then by
    /// `(HLC, replica ID)` of the change set that placed them.
    case position(entity: String, id: UUID, relationship: String, member: UUID, key: String)
    /// `delta` is added to a `.counter` attribute (`@Attribute(merge: .counter)`): the value is
    /// the creation's value plus the deltas of every change set applied, in any order.
    case increment(entity: String, id: UUID, attribute: String, delta: Int64)
}

/// A write's place in the total order of change sets: `(HLC, replica ID)`.
struct Stamp: Hashable, Comparable, Sendable {
    var hlc: HLC
    var replica: ReplicaID
    var seq: UInt64

    var dot: Dot { Dot(replica: replica, seq: seq) }

    static func < (lhs: Stamp, rhs: Stamp) -> Bool {
        if lhs.hlc != rhs.hlc { return lhs.hlc < rhs.hlc }
        return lhs.replica.precedesInStorageOrder(rhs.replica)
    }
}

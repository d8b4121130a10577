import Foundation
import LocalStoreCore

/// An error from sync, with a machine-readable code and a sentence for people.
public struct SyncError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What went wrong, as the protocol's error code (the raw value).
    public enum Code: String, Sendable, Codable {
        /// A change set or batch is not well formed.
        case malformedChangeSet = "malformed_change_set"
        /// A change set needs change sets the receiver has not applied (its vector is ahead).
        case causalityViolation = "causality_violation"
        /// A change set names an entity, attribute or relationship the schema does not have, or an
        /// unknown object, or writes a value its column does not hold (another SQL type, out of
        /// range, `NULL` in a non-optional attribute, invalid JSON).
        case schemaMismatch = "schema_mismatch"
        /// The same dot arrived with different contents.
        case conflictingChangeSet = "conflicting_change_set"
        /// The store is not set up for sync or its sync tables are damaged.
        case notSyncable = "not_syncable"
        /// A change set's HLC is too far ahead of the receiver's clock.
        case clockSkew = "clock_skew"
        /// The store file's sync tables are in a format newer than this release reads.
        case unsupportedStoreFormat = "unsupported_store_format"
        /// A local change set was marked with an outbox status it cannot move to (see ``OutboxStatus/moving(to:changeSet:)``).
        case invalidOutboxTransition = "invalid_outbox_transition"
        /// A change set's author cannot be verified: no key is registered for it (and it is not
        /// the pusher), it carries no authenticator, or its authenticator does not match.
        case unverifiedAuthor = "unverified_author"
        /// A push named a replica whose registered key is another one.
        case replicaKeyMismatch = "replica_key_mismatch"
        /// What was asked for needs change sets the store dropped when it compacted its history
        /// (``SyncReplica/compactHistory(stable:droppingDeletedObjects:)``): a peer that lacks them, or a merge of the whole
        /// history under another schema. The store must be bootstrapped from a server's snapshot.
        case historyCompacted = "history_compacted"
    }

    /// What went wrong.
    public var code: Code
    /// Which change set, object, entity or file, and why.
    public var message: String
    /// The change set the error is about, when it is about one (``Code/unverifiedAuthor``).
    public var dot: Dot?

    /// An error with `code`, described by `message`, about the change set `dot` when there is one.
    public init(_ code: Code, _ message: String, dot: Dot? = nil) {
        self.code = code
        self.message = message
        self.dot = dot
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

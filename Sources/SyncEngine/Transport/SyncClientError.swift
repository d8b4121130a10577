import Foundation
import LocalStoreCore

/// Why a ``SyncClient`` request or sync failed.
///
/// Server refusals (`4xx`) map to a case each, named after the protocol's error code, and are
/// never retried: retrying cannot change the answer. Network failures and `5xx` responses are
/// retried per ``Backoff``; once the attempts are spent they surface as ``network(_:)`` and
/// ``server(code:message:status:)``.
public enum SyncClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `401 unauthorized`: the token is missing, not valid, revoked or expired (the message says which).
    case unauthorized(String)
    /// `403 forbidden`: the token belongs to another dataset; or `403 insufficient_scope`: the
    /// token is read-only and the request writes (a push or a schema registration).
    case forbidden(String)
    /// `403 unverified_author`: the server cannot check who authored a pushed change set (it
    /// has no key for its author, or the authenticator does not match); the message names it.
    case unverifiedAuthor(String)
    /// `403 replica_key_mismatch`: the server has another key registered for this replica's ID.
    case replicaKeyMismatch(String)
    /// `409 schema_incompatible`: the server holds a schema this store's cannot migrate to; the
    /// message names the difference.
    case schemaIncompatible(String)
    /// `422 schema_mismatch`: a change set names something the server's schema lacks.
    case schemaMismatch(String)
    /// `404 schema_not_registered` (after the client tried to register it).
    case schemaNotRegistered(String)
    /// `409 causality_violation`: the server lacks change sets the pushed ones depend on; or a
    /// pulled page depends on change sets this store lacks.
    case causality(String)
    /// `422 clock_skew`: this device's clock is too far ahead of the server's (`serverTime`).
    case clockSkew(serverTime: Date, message: String)
    /// `400 invalid_cursor`: the server does not know the pull cursor (even after restarting from 0).
    case invalidCursor(String)
    /// `413 payload_too_large`: even a single change set is too large for the server.
    case payloadTooLarge(String)
    /// `410 replica_retired`: an operator retired this replica, or it was silent for longer than
    /// the server's horizon. ``SyncClient`` starts again from a snapshot under a new replica ID
    /// and replays the unpushed change sets (see ``SyncClient/rebootstrap()``).
    case replicaRetired(String)
    /// `410 history_compacted`: the pull cursor lies before the server's compaction point.
    /// ``SyncClient`` starts again from a snapshot, as for ``replicaRetired(_:)``.
    case historyCompacted(String)
    /// Any other error response, or a `5xx` that persisted through every retry.
    case server(code: String, message: String, status: Int)
    /// The server could not be reached or the connection broke, on every attempt.
    case network(String)
    /// The server answered something that is not the protocol (wrong JSON, bad change sets).
    case invalidResponse(String)
    /// The client is not set up: no server URL, dataset or token, or an invalid one.
    case notConfigured(String)
    /// The local store failed while recording or applying change sets.
    case local(String)
    /// The sync was cancelled.
    case cancelled

    public var description: String {
        switch self {
        case .unauthorized(let message): return "unauthorized: \(message)"
        case .forbidden(let message): return "forbidden: \(message)"
        case .unverifiedAuthor(let message): return "unverified author: \(message)"
        case .replicaKeyMismatch(let message): return "replica key mismatch: \(message)"
        case .schemaIncompatible(let message): return "schema incompatible: \(message)"
        case .schemaMismatch(let message): return "schema mismatch: \(message)"
        case .schemaNotRegistered(let message): return "schema not registered: \(message)"
        case .causality(let message): return "causality violation: \(message)"
        case .clockSkew(let serverTime, let message):
            return "clock skew: \(message) (server time \(serverTime.formatted(.iso8601)))"
        case .invalidCursor(let message): return "invalid cursor: \(message)"
        case .payloadTooLarge(let message): return "payload too large: \(message)"
        case .replicaRetired(let message): return "replica retired: \(message)"
        case .historyCompacted(let message): return "history compacted: \(message)"
        case .server(let code, let message, let status): return "server error \(status) \(code): \(message)"
        case .network(let message): return "network error: \(message)"
        case .invalidResponse(let message): return "invalid response: \(message)"
        case .notConfigured(let message): return "not configured: \(message)"
        case .local(let message): return "local store error: \(message)"
        case .cancelled: return "cancelled"
        }
    }

    /// Whether retrying the same request later may succeed (network trouble, a server error).
    public var isTransient: Bool {
        switch self {
        case .network: return true
        case .server(_, _, let status): return status >= 500 || status == 408 || status == 429
        default: return false
        }
    }

    /// The protocol error code this error came from, if it came from an error response.
    public var code: String? {
        switch self {
        case .unauthorized: return "unauthorized"
        case .forbidden: return "forbidden"
        case .unverifiedAuthor: return "unverified_author"
        case .replicaKeyMismatch: return "replica_key_mismatch"
        case .schemaIncompatible: return "schema_incompatible"
        case .schemaMismatch: return "schema_mismatch"
        case .schemaNotRegistered: return "schema_not_registered"
        case .causality: return "causality_violation"
        case .clockSkew: return "clock_skew"
        case .invalidCursor: return "invalid_cursor"
        case .payloadTooLarge: return "payload_too_large"
        case .replicaRetired: return "replica_retired"
        case .historyCompacted: return "history_compacted"
        case .server(let code, _, _): return code
        default: return nil
        }
    }
}

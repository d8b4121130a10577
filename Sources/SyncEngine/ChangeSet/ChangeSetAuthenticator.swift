import Codecs
import Foundation
import LocalStoreCore

/// Who pushes a batch: a replica's ID and its secret key, sent with every push so the server can
/// register the key the first time and check that later pushes under that ID hold the same key.
public struct ReplicaCredentials: Sendable, Equatable {
    /// The pushing replica.
    public var replica: ReplicaID
    /// Its 32-byte secret key.
    public var key: [UInt8]

    /// Credentials of `replica` with `key`.
    public init(replica: ReplicaID, key: [UInt8]) {
        self.replica = replica
        self.key = key
    }

    /// The length of a replica key: SHA-256's output, as RFC 2104 recommends for HMAC keys.
    public static let keyLength = 32

    /// How the key travels in the `Sync-Replica-Key` header: 64 lowercase hex digits.
    public var keyHex: String { LowercaseHex.encode(key) }

    /// Reads the two push headers; `nil` when either does not have the protocol's form.
    public init?(replicaHeader: String, keyHeader: String) {
        guard let replica = UUID(storageText: replicaHeader.trimmingCharacters(in: .whitespaces)),
              let key = LowercaseHex.decode(keyHeader.trimmingCharacters(in: .whitespaces)), key.count == ReplicaCredentials.keyLength
        else { return nil }
        self.init(replica: replica, key: key)
    }
}

/// The authenticator of a change set: HMAC-SHA256 under its author's key over the change set's
/// canonical bytes, so that a relay of the change set by any other replica can be checked by a
/// server that knows the author's key, and a change set under another replica's ID cannot be made
/// without that replica's key.
///
/// The canonical bytes are the stored binary form the server already compares when the same dot
/// arrives twice (`409 conflicting_change_set`), behind a fixed header:
///
/// ```
/// message   := 0x01 (layout version), uuid(replica), fixed64(seq), fixed64(hlc),
///              varint(vector entry count), (uuid(replica), varint(seq)) * count,
///              operations (StoredOperations' blob)
/// ```
///
/// UUIDs are their 16 bytes, `fixed64` eight bytes least significant first, varints unsigned
/// LEB128; vector entries are the full vector (not a wire delta), sorted by the replica's
/// upper-case UUID text, zeros left out.
public enum ChangeSetAuthenticator {
    /// The length of an authenticator: HMAC-SHA256's output.
    public static let length = 32

    /// The first byte of the canonical bytes.
    static let layoutVersion: UInt8 = 1

    /// The canonical bytes of `changeSet`, given its operations' stored blob.
    static func message(of changeSet: ChangeSet, operations: UnsafeRawBufferPointer) -> [UInt8] {
        var header = ByteWriter(reservingCapacity: 64 + 24 * changeSet.vector.entries.count)
        header.writeByte(layoutVersion)
        header.writeUUID(changeSet.dot.replica)
        header.writeFixed64(changeSet.dot.seq)
        header.writeFixed64(changeSet.hlc.rawValue)
        let entries = changeSet.vector.sortedEntries.filter { $0.1 > 0 }
        header.writeVarint(UInt64(entries.count))
        for (replica, seq) in entries {
            header.writeUUID(replica)
            header.writeVarint(seq)
        }
        var message = [UInt8]()
        message.reserveCapacity(header.count + operations.count)
        header.withBytes { message.append(contentsOf: $0) }
        message.append(contentsOf: operations)
        return message
    }

    /// The authenticator of `changeSet` under `key`, given its operations' stored blob (which
    /// the caller usually has at hand already).
    static func authenticator(of changeSet: ChangeSet, operations: UnsafeRawBufferPointer, key: [UInt8]) -> [UInt8] {
        HMACSHA256.authenticationCode(key: key, message: message(of: changeSet, operations: operations))
    }

    /// The authenticator of `changeSet` under `key`.
    ///
    /// - Throws: `EncodingError.invalidValue` for a real that is infinite or NaN.
    public static func authenticator(of changeSet: ChangeSet, key: [UInt8]) throws -> [UInt8] {
        try StoredOperations.encode(changeSet.operations).withBytes { authenticator(of: changeSet, operations: $0, key: key) }
    }

    /// Whether `changeSet` carries the authenticator `key` gives it (compared in constant time).
    public static func isAuthentic(_ changeSet: ChangeSet, key: [UInt8]) throws -> Bool {
        try StoredOperations.encode(changeSet.operations).withBytes { isAuthentic(changeSet, operations: $0, key: key) }
    }

    /// Whether `changeSet`, whose operations are `operations` in their stored form, carries the
    /// authenticator `key` gives it.
    static func isAuthentic(_ changeSet: ChangeSet, operations: UnsafeRawBufferPointer, key: [UInt8]) -> Bool {
        guard let authenticator = changeSet.authenticator else { return false }
        return HMACSHA256.isValid(authenticator, key: key, message: message(of: changeSet, operations: operations))
    }

    /// Checks the change sets a server is about to store, as `Protocol/README.md` describes: the
    /// pusher's key must be the one registered for its ID (it is registered by its first push),
    /// and every change set must carry the authenticator of its author's registered key.
    /// Change sets the server already has are not passed here: their re-send stores nothing.
    /// Every ``DatasetEngine`` calls it inside the transaction of its apply, with its own key storage.
    ///
    /// - Parameters:
    ///   - pusher: who pushes; `nil` for a push without the replica headers.
    ///   - registeredKey: the key the server has for a replica, if any.
    ///   - register: stores the pusher's key the first time it pushes.
    /// - Throws: ``SyncError`` `.replicaKeyMismatch` naming the replica, or `.unverifiedAuthor`
    ///   naming the first change set whose author cannot be verified (``SyncError/dot``).
    public static func verify(
        _ changeSets: [ChangeSet], pushedBy pusher: ReplicaCredentials?,
        registeredKey: (ReplicaID) throws -> [UInt8]?, register: (ReplicaCredentials) throws -> Void
    ) throws {
        try verify(changeSets, pushedBy: pusher, registeredKey: registeredKey, register: register) { changeSet, key in
            try isAuthentic(changeSet, key: key)
        }
    }

    /// ``verify(_:pushedBy:registeredKey:register:)`` with `isAuthentic` telling whether a change
    /// set carries the authenticator a key gives it: a change set merged in slices is checked
    /// against its operations as they were stored, never decoded whole.
    static func verify(
        _ changeSets: [ChangeSet], pushedBy pusher: ReplicaCredentials?,
        registeredKey: (ReplicaID) throws -> [UInt8]?, register: (ReplicaCredentials) throws -> Void,
        isAuthentic: (ChangeSet, [UInt8]) throws -> Bool
    ) throws {
        if let pusher {
            if let known = try registeredKey(pusher.replica) {
                guard HMACSHA256.constantTimeEqual(known, pusher.key) else {
                    throw SyncError(.replicaKeyMismatch,
                                    "replica \(pusher.replica.storageText) pushed with another key than the one it registered with its first push")
                }
            } else {
                try register(pusher)
            }
        }
        var keys: [ReplicaID: [UInt8]] = [:]
        if let pusher { keys[pusher.replica] = pusher.key }
        for changeSet in changeSets {
            let author = changeSet.dot.replica
            if keys[author] == nil, let known = try registeredKey(author) { keys[author] = known }
            guard let key = keys[author] else {
                throw SyncError(.unverifiedAuthor,
                                "change set \(changeSet.dot) cannot be verified: its author has never pushed to this server, so only the author itself can push it",
                                dot: changeSet.dot)
            }
            guard changeSet.authenticator != nil else {
                throw SyncError(.unverifiedAuthor, "change set \(changeSet.dot) carries no authenticator", dot: changeSet.dot)
            }
            guard try isAuthentic(changeSet, key) else {
                throw SyncError(.unverifiedAuthor,
                                "change set \(changeSet.dot) does not carry its author's authenticator (forged or altered)", dot: changeSet.dot)
            }
        }
    }
}

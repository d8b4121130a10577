import Codecs
import Foundation
import HTTPServer
import SQLiteDatabase
import SyncEngine

/// Bearer tokens: a ``TokenTable`` (`DIR/tokens.sqlite`, or a shared PostgreSQL database) maps
/// the SHA-256 of each token to the one dataset it opens, what it may do there (``TokenScope``)
/// and when it expires. Tokens themselves are never stored; ``add(dataset:scope:expires:now:)``
/// returns the only copy.
///
/// Tokens added by `syncd token add` while the server runs work at once (a token not yet known
/// is always looked up in the table). Accepted tokens are remembered in a ``TokenCache`` that is
/// checked against the table at most every `revalidationInterval` (default 100 ms), so a token
/// revoked by `syncd token revoke` from another process stops working within about that long;
/// one revoked through this instance stops at once.
package final class TokenStore: @unchecked Sendable {
    // @unchecked: the table is only used while holding `lock`, which also makes a lookup and
    // the cache entry it stores one step that no revalidation or revocation can split (a
    // token found in the cache needs neither).

    /// One stored token, without the token itself.
    package struct Entry: Sendable, Equatable {
        /// The SHA-256 of the token, hex.
        package var hash: String
        package var dataset: String
        /// Seconds since 1970.
        package var created: Int64
        package var scope: TokenScope
        /// Seconds since 1970 from which the token is refused; `nil` never expires.
        package var expires: Int64?
    }

    /// How long a check of the table for other processes' changes stays good for.
    package static let defaultRevalidationInterval: Duration = .milliseconds(100)

    private let lock = NSRecursiveLock()
    private let table: any TokenTable
    private let cache: TokenCache

    /// Tokens kept in `table`.
    ///
    /// - Parameter revalidationInterval: how stale an accepted token may be: a token revoked by
    ///   another process is refused at most this long (plus one lookup) after the revocation
    ///   commits. `.zero` checks the table on every lookup.
    package init(table: any TokenTable, revalidationInterval: Duration = TokenStore.defaultRevalidationInterval) {
        self.table = table
        cache = TokenCache(interval: revalidationInterval.clampedNanoseconds)
    }

    /// Opens (creating if needed) the token file at `path`.
    package convenience init(path: String, revalidationInterval: Duration = TokenStore.defaultRevalidationInterval) throws {
        self.init(table: try SQLiteTokenTable(path: path), revalidationInterval: revalidationInterval)
    }

    /// Opens `DIR/tokens.sqlite`, creating `DIR` if needed.
    package convenience init(dataDirectory: URL, revalidationInterval: Duration = TokenStore.defaultRevalidationInterval) throws {
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        try self.init(path: dataDirectory.appendingPathComponent("tokens.sqlite").path, revalidationInterval: revalidationInterval)
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Creates a token for `dataset` and returns it: 32 random bytes as 64 hex digits.
    ///
    /// - Parameters:
    ///   - scope: what the token may do in the dataset.
    ///   - expires: when the token stops working; `nil` never.
    package func add(dataset: String, scope: TokenScope = .readWrite, expires: Date? = nil, now: Date = Date()) throws -> String {
        let token = LowercaseHex.encode(SecureRandomBytes.make(count: 32))
        let entry = Entry(hash: TokenStore.hash(token), dataset: dataset, created: Int64(now.timeIntervalSince1970), scope: scope,
                          expires: expires.map { Int64($0.timeIntervalSince1970.rounded(.up)) })
        try locked { try table.insert(entry) }
        return token
    }

    /// The dataset `token` opens, or `nil` for an unknown token (whatever its scope or expiry).
    package func dataset(forToken token: String) throws -> String? {
        try grant(forToken: token)?.dataset
    }

    /// What `token` grants, or `nil` for an unknown token. The caller checks the expiry, so an
    /// expired token can be told apart from an unknown one.
    ///
    /// Tokens are matched by their hash (in the cache as in the table), never compared directly,
    /// so response timing says nothing about how much of a guessed token was right.
    package func grant(forToken token: String) throws -> TokenGrant? {
        let hash = TokenStore.hash(token)
        if cache.claimRevalidation(now: MonotonicTime.nanoseconds()) {
            try locked {
                do {
                    cache.revalidated(dataVersion: try table.changeCounter())
                } catch {
                    cache.removeAll()
                    throw error
                }
            }
        }
        if let grant = cache.grant(forHash: hash) { return grant }
        return try locked {
            guard let entry = try table.entry(forHash: hash) else { return nil }
            let grant = TokenGrant(dataset: entry.dataset, scope: entry.scope, expires: entry.expires)
            // Stored while holding the table: a revalidation or revocation cannot slip in between
            // this read and the store and leave a stale entry behind.
            cache.store(grant, for: hash)
            return grant
        }
    }

    /// Every stored token, oldest first.
    package func list() throws -> [Entry] {
        try locked { try table.entries() }
    }

    /// Removes the tokens whose hash starts with `hashPrefix` (at least 8 hex digits); returns how many.
    package func revoke(hashPrefix: String) throws -> Int {
        try locked {
            let count = try table.delete(hashPrefix: hashPrefix.lowercased())
            // The table's counter may not count this process's own changes, so forget explicitly.
            cache.removeAll()
            return count
        }
    }

    /// The hex SHA-256 of a token, as stored.
    package static func hash(_ token: String) -> String {
        SHA256.hexDigest(token)
    }
}

/// What a token may do in its dataset.
package enum TokenScope: String, Sendable, Equatable, CaseIterable {
    /// Pull, read the schema, take snapshots.
    case readOnly = "read-only"
    /// Everything `readOnly` may, and push and register schemas.
    case readWrite = "read-write"
}

/// What an accepted token grants: its dataset, scope and expiry.
package struct TokenGrant: Sendable, Equatable {
    package var dataset: String
    package var scope: TokenScope
    /// Seconds since 1970 from which the token is refused; `nil` never expires.
    package var expires: Int64?

    /// Whether the token is expired at `now`.
    package func isExpired(at now: Date) -> Bool {
        guard let expires else { return false }
        return now.timeIntervalSince1970 >= Double(expires)
    }
}

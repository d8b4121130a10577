import Codecs
import Foundation
import HTTPServer
import SQLiteDatabase
import SyncEngine

/// Bearer tokens: `DIR/tokens.sqlite` maps the SHA-256 of each token to the one dataset it
/// opens, what it may do there (``TokenScope``) and when it expires. Tokens themselves are never
/// stored; ``add(dataset:scope:expires:now:)`` returns the only copy.
///
/// Tokens added by `syncd token add` while the server runs work at once (a token not yet known
/// is always looked up in the file). Accepted tokens are remembered in a ``TokenCache`` that is
/// checked against the file at most every `revalidationInterval` (default 100 ms), so a token
/// revoked by `syncd token revoke` from another process stops working within about that long;
/// one revoked through this instance stops at once.
package final class TokenStore: Sendable {
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

    /// How long a check of the file for other connections' changes stays good for.
    package static let defaultRevalidationInterval: Duration = .milliseconds(100)

    private let connection: SerializedConnection
    private let cache: TokenCache

    /// Opens (creating if needed) the token file at `path`.
    ///
    /// - Parameter revalidationInterval: how stale an accepted token may be: a token revoked by
    ///   another connection is refused at most this long (plus one lookup) after the revocation
    ///   commits. `.zero` checks the file on every lookup.
    package init(path: String, revalidationInterval: Duration = TokenStore.defaultRevalidationInterval) throws {
        // Only hashes are stored, but which datasets exist and who may write them is still
        // nobody else's business: owner-only, like a client's store.
        try OwnerOnlyFile.create(atPath: path)
        try OwnerOnlyFile.restrictStore(atPath: path)
        let connection = try SQLiteConnection(path: path)
        _ = try connection.rows("PRAGMA journal_mode = WAL")
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS tokens (hash TEXT PRIMARY KEY NOT NULL, dataset TEXT NOT NULL, created INTEGER NOT NULL,
                scope TEXT NOT NULL DEFAULT 'read-write', expires INTEGER)
            """)
        try TokenStore.addScopeColumns(on: connection)
        self.connection = SerializedConnection(connection)
        cache = TokenCache(interval: revalidationInterval.clampedNanoseconds)
    }

    /// Opens `DIR/tokens.sqlite`, creating `DIR` if needed.
    package convenience init(dataDirectory: URL, revalidationInterval: Duration = TokenStore.defaultRevalidationInterval) throws {
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        try self.init(path: dataDirectory.appendingPathComponent("tokens.sqlite").path, revalidationInterval: revalidationInterval)
    }

    /// Gives a token file written before tokens had scopes the `scope` and `expires` columns:
    /// its tokens keep working as they did, read-write and without expiry.
    private static func addScopeColumns(on connection: SQLiteConnection) throws {
        let columns = try connection.rows("PRAGMA table_info(tokens)").compactMap { row -> String? in
            guard case .text(let name) = row[1] else { return nil }
            return name
        }
        if !columns.contains("scope") {
            try connection.execute("ALTER TABLE tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'read-write'")
        }
        if !columns.contains("expires") {
            try connection.execute("ALTER TABLE tokens ADD COLUMN expires INTEGER")
        }
    }

    /// Creates a token for `dataset` and returns it: 32 random bytes as 64 hex digits.
    ///
    /// - Parameters:
    ///   - scope: what the token may do in the dataset.
    ///   - expires: when the token stops working; `nil` never.
    package func add(dataset: String, scope: TokenScope = .readWrite, expires: Date? = nil, now: Date = Date()) throws -> String {
        let token = LowercaseHex.encode(SecureRandomBytes.make(count: 32))
        let expiry: SQLValue = expires.map { .integer(Int64($0.timeIntervalSince1970.rounded(.up))) } ?? .null
        try connection.withConnection { connection in
            try connection.run("INSERT INTO tokens (hash, dataset, created, scope, expires) VALUES (?, ?, ?, ?, ?)",
                               [.text(TokenStore.hash(token)), .text(dataset), .integer(Int64(now.timeIntervalSince1970)),
                                .text(scope.rawValue), expiry])
        }
        return token
    }

    /// The dataset `token` opens, or `nil` for an unknown token (whatever its scope or expiry).
    package func dataset(forToken token: String) throws -> String? {
        try grant(forToken: token)?.dataset
    }

    /// What `token` grants, or `nil` for an unknown token. The caller checks the expiry, so an
    /// expired token can be told apart from an unknown one.
    ///
    /// Tokens are matched by their hash (in the cache as in the file), never compared directly,
    /// so response timing says nothing about how much of a guessed token was right.
    package func grant(forToken token: String) throws -> TokenGrant? {
        let hash = TokenStore.hash(token)
        if cache.claimRevalidation(now: MonotonicTime.nanoseconds()) {
            try connection.withConnection { connection in
                do {
                    cache.revalidated(dataVersion: try TokenStore.dataVersion(on: connection))
                } catch {
                    cache.removeAll()
                    throw error
                }
            }
        }
        if let grant = cache.grant(forHash: hash) { return grant }
        return try connection.withConnection { connection in
            guard let row = try connection.rows("SELECT dataset, scope, expires FROM tokens WHERE hash = ?", [.text(hash)]).first,
                  case .text(let dataset) = row[0], case .text(let scopeText) = row[1] else {
                return nil
            }
            // An unknown scope (written by a newer syncd) grants the least.
            let grant = TokenGrant(dataset: dataset, scope: TokenScope(rawValue: scopeText) ?? .readOnly, expires: TokenStore.integer(row[2]))
            // Stored while holding the connection: a revalidation or revocation cannot slip in
            // between this read and the store and leave a stale entry behind.
            cache.store(grant, for: hash)
            return grant
        }
    }

    /// SQLite's counter of commits by other connections to this file.
    private static func dataVersion(on connection: SQLiteConnection) throws -> Int64 {
        guard case .integer(let version)? = try connection.rows("PRAGMA data_version").first?.first else {
            throw StoreError(.sqlite, "PRAGMA data_version returned no integer")
        }
        return version
    }

    /// Every stored token, oldest first.
    package func list() throws -> [Entry] {
        try connection.withConnection { connection in
            try connection.rows("SELECT hash, dataset, created, scope, expires FROM tokens ORDER BY created, hash").compactMap { row in
                guard case .text(let hash) = row[0], case .text(let dataset) = row[1], case .integer(let created) = row[2],
                      case .text(let scope) = row[3] else { return nil }
                return Entry(hash: hash, dataset: dataset, created: created, scope: TokenScope(rawValue: scope) ?? .readOnly,
                             expires: TokenStore.integer(row[4]))
            }
        }
    }

    /// Removes the tokens whose hash starts with `hashPrefix` (at least 8 hex digits); returns how many.
    package func revoke(hashPrefix: String) throws -> Int {
        try connection.withConnection { connection in
            try connection.run("DELETE FROM tokens WHERE substr(hash, 1, ?) = ?", [.integer(Int64(hashPrefix.utf8.count)), .text(hashPrefix.lowercased())])
            // This connection's own commits do not move `data_version`, so forget explicitly.
            cache.removeAll()
            return connection.changes
        }
    }

    /// The integer in `value`, `nil` for SQL `NULL` or another storage class.
    private static func integer(_ value: SQLValue) -> Int64? {
        guard case .integer(let number) = value else { return nil }
        return number
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

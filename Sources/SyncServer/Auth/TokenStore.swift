import Foundation
import SyncKit

/// Bearer tokens: `DIR/tokens.sqlite` maps the SHA-256 of each token to the one dataset it
/// opens. Tokens themselves are never stored; ``add(dataset:)`` returns the only copy.
///
/// Lookups read the file on every request, so tokens added or revoked by `syncd token` while the
/// server runs take effect at once.
package final class TokenStore: Sendable {
    /// One stored token, without the token itself.
    package struct Entry: Sendable, Equatable {
        /// The SHA-256 of the token, hex.
        package var hash: String
        package var dataset: String
        /// Seconds since 1970.
        package var created: Int64
    }

    private let connection: SerializedConnection

    /// Opens (creating if needed) the token file at `path`.
    package init(path: String) throws {
        let connection = try SQLiteConnection(path: path)
        _ = try connection.rows("PRAGMA journal_mode = WAL")
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS tokens (hash TEXT PRIMARY KEY NOT NULL, dataset TEXT NOT NULL, created INTEGER NOT NULL)
            """)
        self.connection = SerializedConnection(connection)
    }

    /// Opens `DIR/tokens.sqlite`, creating `DIR` if needed.
    package convenience init(dataDirectory: URL) throws {
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        try self.init(path: dataDirectory.appendingPathComponent("tokens.sqlite").path)
    }

    /// Creates a token for `dataset` and returns it: 32 random bytes as 64 hex digits.
    package func add(dataset: String, now: Date = Date()) throws -> String {
        var generator = SystemRandomNumberGenerator()
        let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
        try connection.withConnection { connection in
            try connection.run("INSERT INTO tokens (hash, dataset, created) VALUES (?, ?, ?)",
                               [.text(TokenStore.hash(token)), .text(dataset), .integer(Int64(now.timeIntervalSince1970))])
        }
        return token
    }

    /// The dataset `token` opens, or `nil` for an unknown token.
    package func dataset(forToken token: String) throws -> String? {
        let hash = TokenStore.hash(token)
        return try connection.withConnection { connection in
            if case .text(let dataset)? = try connection.rows("SELECT dataset FROM tokens WHERE hash = ?", [.text(hash)]).first?.first {
                return dataset
            }
            return nil
        }
    }

    /// Every stored token, oldest first.
    package func list() throws -> [Entry] {
        try connection.withConnection { connection in
            try connection.rows("SELECT hash, dataset, created FROM tokens ORDER BY created, hash").compactMap { row in
                guard case .text(let hash) = row[0], case .text(let dataset) = row[1], case .integer(let created) = row[2] else { return nil }
                return Entry(hash: hash, dataset: dataset, created: created)
            }
        }
    }

    /// Removes the tokens whose hash starts with `hashPrefix` (at least 8 hex digits); returns how many.
    package func revoke(hashPrefix: String) throws -> Int {
        try connection.withConnection { connection in
            try connection.run("DELETE FROM tokens WHERE substr(hash, 1, ?) = ?", [.integer(Int64(hashPrefix.utf8.count)), .text(hashPrefix.lowercased())])
            return connection.changes
        }
    }

    /// The hex SHA-256 of a token.
    package static func hash(_ token: String) -> String {
        SHA256.hexDigest(token)
    }
}

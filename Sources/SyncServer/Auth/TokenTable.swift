import Foundation
import PostgreSQLClient
import SQLiteDatabase
import SyncEngine

/// Where ``TokenStore`` keeps its tokens' hashes: `DIR/tokens.sqlite` (``SQLiteTokenTable``) or a
/// PostgreSQL database shared by several syncd instances (``PostgreSQLTokenTable``).
///
/// ``TokenStore`` uses a table from one thread at a time.
package protocol TokenTable {
    /// Stores a new token's entry.
    func insert(_ entry: TokenStore.Entry) throws
    /// The entry of the token whose SHA-256 is `hash`, `nil` when there is none.
    func entry(forHash hash: String) throws -> TokenStore.Entry?
    /// Every entry, oldest first.
    func entries() throws -> [TokenStore.Entry]
    /// Removes the entries whose hash starts with `hashPrefix` (lowercase hex); returns how many.
    func delete(hashPrefix: String) throws -> Int
    /// A number that moves whenever another process changed the table: an accepted token is
    /// trusted only while it stays the same.
    func changeCounter() throws -> Int64
}

/// The tokens in one SQLite file (`DIR/tokens.sqlite`), owner-only.
package final class SQLiteTokenTable: TokenTable {
    private let connection: SQLiteConnection

    /// Opens (creating if needed) the token file at `path`.
    package init(path: String) throws {
        // Only hashes are stored, but which datasets exist and who may write them is still
        // nobody else's business: owner-only, like a client's store.
        try OwnerOnlyFile.create(atPath: path)
        try OwnerOnlyFile.restrictStore(atPath: path)
        connection = try SQLiteConnection(path: path)
        _ = try connection.rows("PRAGMA journal_mode = WAL")
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS tokens (hash TEXT PRIMARY KEY NOT NULL, dataset TEXT NOT NULL, created INTEGER NOT NULL,
                scope TEXT NOT NULL DEFAULT 'read-write', expires INTEGER)
            """)
        try addScopeColumns()
    }

    /// Gives a token file written before tokens had scopes the `scope` and `expires` columns:
    /// its tokens keep working as they did, read-write and without expiry.
    private func addScopeColumns() throws {
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

    package func insert(_ entry: TokenStore.Entry) throws {
        try connection.run("INSERT INTO tokens (hash, dataset, created, scope, expires) VALUES (?, ?, ?, ?, ?)",
                           [.text(entry.hash), .text(entry.dataset), .integer(entry.created), .text(entry.scope.rawValue),
                            entry.expires.map { .integer($0) } ?? .null])
    }

    package func entry(forHash hash: String) throws -> TokenStore.Entry? {
        try connection.rows("SELECT hash, dataset, created, scope, expires FROM tokens WHERE hash = ?", [.text(hash)])
            .first.flatMap(SQLiteTokenTable.entry)
    }

    package func entries() throws -> [TokenStore.Entry] {
        try connection.rows("SELECT hash, dataset, created, scope, expires FROM tokens ORDER BY created, hash").compactMap(SQLiteTokenTable.entry)
    }

    private static func entry(_ row: [SQLValue]) -> TokenStore.Entry? {
        guard case .text(let hash) = row[0], case .text(let dataset) = row[1], case .integer(let created) = row[2],
              case .text(let scope) = row[3] else { return nil }
        var expires: Int64?
        if case .integer(let seconds) = row[4] { expires = seconds }
        // An unknown scope (written by a newer syncd) grants the least.
        return TokenStore.Entry(hash: hash, dataset: dataset, created: created, scope: TokenScope(rawValue: scope) ?? .readOnly, expires: expires)
    }

    package func delete(hashPrefix: String) throws -> Int {
        try connection.run("DELETE FROM tokens WHERE substr(hash, 1, ?) = ?", [.integer(Int64(hashPrefix.utf8.count)), .text(hashPrefix)])
        return connection.changes
    }

    /// SQLite's `data_version`: the counter of commits by other connections to this file.
    package func changeCounter() throws -> Int64 {
        guard case .integer(let version)? = try connection.rows("PRAGMA data_version").first?.first else {
            throw StoreError(.sqlite, "PRAGMA data_version returned no integer")
        }
        return version
    }
}

/// The tokens in a PostgreSQL database (`syncd_token`), shared by every syncd instance using it.
/// Each revocation also moves `syncd_token_revision`, the counter the instances revalidate with.
package final class PostgreSQLTokenTable: TokenTable {
    private let pool: PostgreSQLConnectionPool

    /// The tokens of the database `pool` connects to; creates syncd's tables when they do not exist.
    package init(pool: PostgreSQLConnectionPool) throws {
        self.pool = pool
        try pool.withConnection { connection in try PostgreSQLTables.install(on: connection) }
    }

    package func insert(_ entry: TokenStore.Entry) throws {
        _ = try pool.withConnection { connection in
            try connection.execute("INSERT INTO syncd_token (hash, dataset, created, scope, expires) VALUES ($1, $2, $3, $4, $5)",
                                   [entry.hash, entry.dataset, String(entry.created), entry.scope.rawValue, entry.expires.map(String.init)])
        }
    }

    package func entry(forHash hash: String) throws -> TokenStore.Entry? {
        try pool.withConnection { connection in
            try connection.execute("SELECT hash, dataset, created, scope, expires FROM syncd_token WHERE hash = $1", [hash])
                .first.flatMap(PostgreSQLTokenTable.entry)
        }
    }

    package func entries() throws -> [TokenStore.Entry] {
        try pool.withConnection { connection in
            try connection.execute("SELECT hash, dataset, created, scope, expires FROM syncd_token ORDER BY created, hash")
                .compactMap(PostgreSQLTokenTable.entry)
        }
    }

    private static func entry(_ row: [String?]) -> TokenStore.Entry? {
        guard let hash = row[0], let dataset = row[1], let created = Int64(row[2] ?? ""), let scope = row[3] else { return nil }
        // An unknown scope (written by a newer syncd) grants the least.
        return TokenStore.Entry(hash: hash, dataset: dataset, created: created, scope: TokenScope(rawValue: scope) ?? .readOnly,
                                expires: row[4].flatMap { Int64($0) })
    }

    package func delete(hashPrefix: String) throws -> Int {
        try pool.inTransaction { connection in
            let deleted = try connection.execute("DELETE FROM syncd_token WHERE left(hash, $1) = $2 RETURNING hash",
                                                 [String(hashPrefix.utf8.count), hashPrefix]).count
            try connection.execute("UPDATE syncd_token_revision SET revision = revision + 1 WHERE id = 1")
            return deleted
        }
    }

    package func changeCounter() throws -> Int64 {
        let sql = "SELECT revision FROM syncd_token_revision WHERE id = 1"
        return try pool.withConnection { try PostgreSQLTables.integer(try $0.execute(sql).scalar, column: "revision", sql: sql) }
    }
}

extension TokenStore {
    /// The tokens in the PostgreSQL database at `databaseURL` (see ``PostgreSQLTokenTable``).
    package convenience init(databaseURL: String, revalidationInterval: Duration = TokenStore.defaultRevalidationInterval) throws {
        self.init(table: try PostgreSQLTokenTable(pool: PostgreSQLConnectionPool(url: databaseURL, maximumConnections: 2)),
                  revalidationInterval: revalidationInterval)
    }
}

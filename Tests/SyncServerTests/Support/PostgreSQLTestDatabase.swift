import Foundation
import PostgreSQLClient
import TestSupport

/// A database of its own on the tests' PostgreSQL server (``TestPostgreSQL``), dropped when the
/// value goes away: tests that share the server never see each other's datasets or tokens.
final class PostgreSQLTestDatabase {
    let name: String
    let url: String

    init() throws {
        name = "test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let server = try PostgreSQLConnection(url: try TestPostgreSQL.serverURL())
        try server.execute("CREATE DATABASE \(name)")
        url = try TestPostgreSQL.url(ofDatabase: name)
    }

    deinit {
        guard let url = try? TestPostgreSQL.serverURL(), let server = try? PostgreSQLConnection(url: url) else { return }
        _ = try? server.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
}

/// Where a test's server keeps its datasets and tokens: the route tests run against both.
enum ServerStorage: String, CaseIterable, CustomStringConvertible, Sendable {
    /// SQLite files in the data directory (the default).
    case sqlite
    /// A PostgreSQL database of the test's own.
    case postgreSQL

    var description: String { rawValue }
}

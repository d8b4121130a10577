import Foundation
@testable import HTTPServer
import SyncKit
import TestSupport
import Testing

@testable import SyncServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a token may do: read-only tokens read, read-write tokens also write; expired tokens are
/// refused with a message that says so; token files from before scopes keep working.
@Suite struct TokenScopeTests {
    @Test(arguments: ServerStorage.allCases) func aReadOnlyTokenReadsButCannotPushOrRegisterASchema(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        try server.registerSchema()
        let writer = try ClientReplica()
        try writer.addBoard("written", cards: 2)
        #expect(server.push(try writer.batch(), as: try writer.credentials).status == .ok)

        let readOnly = try server.service.tokens.add(dataset: "main", scope: .readOnly)
        #expect(server.send(.get, "/v1/datasets/main/changesets", token: readOnly).status == .ok)
        #expect(server.send(.get, "/v1/datasets/main/schema", token: readOnly).status == .ok)
        #expect(server.send(.get, "/v1/datasets/main/snapshot", token: readOnly).status == .ok)

        let client = try ClientReplica()
        try client.addBoard("refused")
        let vectorBefore = try server.serverVector()
        let push = server.send(.post, "/v1/datasets/main/changesets", body: try client.batch(), token: readOnly)
        #expect(push.status == .forbidden)
        #expect(push.errorCode == "insufficient_scope")
        #expect(push.errorMessage.contains("read-only"), "\(push.errorMessage)")
        #expect((push.json["error"] as? [String: Any])?["scope"] as? String == "read-only")
        #expect(push.headers["WWW-Authenticate"]?.contains("insufficient_scope") == true)
        #expect(try server.serverVector() == vectorBefore)

        let schema = server.send(.put, "/v1/datasets/main/schema", body: try client.store.exportSchema(), token: readOnly)
        #expect(schema.status == .forbidden)
        #expect(schema.errorCode == "insufficient_scope")
    }

    @Test(arguments: ServerStorage.allCases) func anExpiredTokenIs401SayingItExpired(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        let expired = try server.service.tokens.add(dataset: "main", expires: Date(timeIntervalSinceNow: -1))
        let response = server.send(.get, "/v1/datasets/main/schema", token: expired)
        #expect(response.status == .unauthorized)
        #expect(response.errorCode == "unauthorized")
        #expect(response.errorMessage.contains("expired"), "\(response.errorMessage)")

        let live = try server.service.tokens.add(dataset: "main", scope: .readOnly, expires: Date(timeIntervalSinceNow: 3600))
        #expect(server.send(.get, "/v1/datasets/main/schema", token: live).status == .notFound, "schema not registered, but authorized")
        let entry = try #require(try server.service.tokens.list().first { $0.hash == TokenStore.hash(live) })
        #expect(entry.scope == .readOnly)
        #expect(entry.expires != nil)
    }

    @Test func tokensWrittenBeforeScopesMigrateToReadWriteWithoutExpiry() throws {
        let directory = try TemporaryDirectory(prefix: "syncd-tokens")
        let path = directory.file("tokens.sqlite")
        let token = String(repeating: "ab", count: 32)
        do {
            let old = try SQLiteConnection(path: path)
            try old.execute("CREATE TABLE tokens (hash TEXT PRIMARY KEY NOT NULL, dataset TEXT NOT NULL, created INTEGER NOT NULL)")
            try old.run("INSERT INTO tokens (hash, dataset, created) VALUES (?, 'main', 1700000000)", [.text(TokenStore.hash(token))])
        }
        #expect(chmod(path, 0o644) == 0)
        let store = try TokenStore(path: path)
        #expect(try store.grant(forToken: token) == TokenGrant(dataset: "main", scope: .readWrite, expires: nil))
        let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o600, "the token file is owner-only")
        #expect(try store.list().map(\.scope) == [.readWrite])
        // Opening again (columns present) changes nothing.
        #expect(try TokenStore(path: path).grant(forToken: token)?.scope == .readWrite)
    }

    @Test func syncdTokenAddTakesScopeAndExpiryAndListShowsThemButNeverTheToken() throws {
        let directory = try TemporaryDirectory(prefix: "syncd-token-cli")
        let data = directory.file("data")
        let added = try ProductProcess.run(product: "syncd", ["token", "add", "--dataset", "main", "--read-only", "--expires", "30d", "--data", data])
        #expect(added.status == 0, "\(added.standardError)")
        let token = added.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.count == 64)
        #expect(added.standardError.contains("read-only"), "\(added.standardError)")
        let year = Calendar(identifier: .gregorian).component(.year, from: Date(timeIntervalSinceNow: 30 * 86400))
        #expect(added.standardError.contains("expires \(year)-"), "the expiry is printed: \(added.standardError)")

        let list = try ProductProcess.run(product: "syncd", ["token", "list", "--data", data])
        #expect(list.status == 0)
        #expect(list.standardOutput.contains("  main  read-only  "), "\(list.standardOutput)")
        #expect(list.standardOutput.contains("expires \(year)-"))
        #expect(!list.standardOutput.contains(token))

        for bad in ["30", "0d", "5w", "d", "1.5h"] {
            let refused = try ProductProcess.run(product: "syncd", ["token", "add", "--dataset", "main", "--expires", bad, "--data", data])
            #expect(refused.status == 2, "--expires \(bad)")
            #expect(refused.standardError.contains("--expires must be"), "\(refused.standardError)")
        }
    }
}

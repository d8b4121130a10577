import Codecs
import Foundation
@testable import HTTPServer
import SyncKit
import TestSupport
import Testing

@testable import SyncServer

/// Accepted tokens are cached, so these check that the cache never outlives a revocation by more
/// than its revalidation interval, whoever revokes: this store, another store on the same file,
/// or another process.
@Suite struct TokenRevocationTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("syncd-tokens-\(UUID().uuidString)", isDirectory: true)
    }

    /// Polls `store` until it refuses `token`; returns how long that took, or `nil` after 5 s.
    func secondsUntilRefused(_ token: String, by store: TokenStore) throws -> Double? {
        let start = Date()
        while Date().timeIntervalSince(start) < 5 {
            if try store.dataset(forToken: token) == nil { return Date().timeIntervalSince(start) }
            usleep(5_000)
        }
        return nil
    }

    @Test func revocationByAnotherStoreOnTheSameFileIsSeenWithinTheInterval() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try TokenStore(dataDirectory: directory)
        let token = try server.add(dataset: "main")
        #expect(try server.dataset(forToken: token) == "main")
        #expect(try server.dataset(forToken: token) == "main")

        let other = try TokenStore(dataDirectory: directory)
        #expect(try other.revoke(hashPrefix: String(TokenStore.hash(token).prefix(16))) == 1)
        let seconds = try #require(try secondsUntilRefused(token, by: server))
        #expect(seconds < 1, "a revoked token was accepted for \(seconds) s")
    }

    @Test func theCacheIsWhatDelaysARevocationAndTheFileCheckIsWhatEndsIt() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        // With an interval far longer than the test, a revocation elsewhere goes unseen...
        let slow = try TokenStore(dataDirectory: directory, revalidationInterval: .seconds(3600))
        // ...and with none, the next lookup sees it.
        let eager = try TokenStore(dataDirectory: directory, revalidationInterval: .zero)
        let token = try slow.add(dataset: "main")
        #expect(try slow.dataset(forToken: token) == "main")
        #expect(try eager.dataset(forToken: token) == "main")

        let revoker = try TokenStore(dataDirectory: directory)
        #expect(try revoker.revoke(hashPrefix: String(TokenStore.hash(token).prefix(16))) == 1)
        #expect(try eager.dataset(forToken: token) == nil)
        #expect(try slow.dataset(forToken: token) == "main")
    }

    @Test func revocationThroughTheSameStoreIsImmediate() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try TokenStore(dataDirectory: directory, revalidationInterval: .seconds(3600))
        let token = try store.add(dataset: "main")
        #expect(try store.dataset(forToken: token) == "main")
        #expect(try store.revoke(hashPrefix: String(TokenStore.hash(token).prefix(16))) == 1)
        #expect(try store.dataset(forToken: token) == nil)
    }

    @Test func tokensAddedElsewhereWorkAtOnceAndUnknownOnesAreNeverCached() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try TokenStore(dataDirectory: directory, revalidationInterval: .seconds(3600))
        let other = try TokenStore(dataDirectory: directory)
        let unknown = String(repeating: "ab", count: 32)
        #expect(try server.dataset(forToken: unknown) == nil)
        let token = try other.add(dataset: "team")
        #expect(try server.dataset(forToken: token) == "team")
        #expect(try server.dataset(forToken: unknown) == nil)
    }

    @Test func hashIsTheHexSHA256OfTheToken() {
        for token in ["", "abc", String(repeating: "0123456789abcdef", count: 4), "ümlaut"] {
            #expect(TokenStore.hash(token) == SHA256.hexDigest(token))
        }
        #expect(TokenStore.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func revocationBySyncdTokenRevokeInAnotherProcessStopsRequestsWithinASecond() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let service = try SyncService(configuration: SyncServiceConfiguration(dataDirectory: directory))
        let token = try service.tokens.add(dataset: "main")
        func status() -> HTTPStatus {
            var headers = HTTPHeaders()
            headers.add(name: "Authorization", value: "Bearer \(token)")
            return service.handle(HTTPRequest(method: .get, target: "/v1/datasets/main/changesets", path: "/v1/datasets/main/changesets",
                                              headers: headers)).status
        }
        // No schema yet: an authorized request gets 404 schema_not_registered, not 401.
        #expect(status() == .notFound)

        let revoke = try ProductProcess.run(product: "syncd", ["token", "revoke", String(TokenStore.hash(token).prefix(16)), "--data", directory.path])
        #expect(revoke.status == 0, "syncd token revoke: \(revoke.standardError)")
        let start = Date()
        #expect(waitUntil(timeout: 5) { status() == .unauthorized })
        let seconds = Date().timeIntervalSince(start)
        #expect(seconds < 1, "a token revoked by another process was accepted for \(seconds) s")
    }
}

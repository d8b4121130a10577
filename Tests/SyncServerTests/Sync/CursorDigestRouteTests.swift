import Foundation
@testable import HTTPServer
import SyncKit
import Testing

@testable import SyncServer

/// Pull cursors with the digest of the log up to them: a server whose log up to a cursor holds
/// other change sets than the client pulled (restored from a backup) refuses the cursor.
@Suite struct CursorDigestRouteTests {
    /// The `cursor` and `cursorDigest` of a pull page.
    static func position(_ response: HTTPResponse) throws -> (cursor: String, digest: String) {
        #expect(response.status == .ok, "\(response.text)")
        return (try #require(response.json["cursor"] as? String), try #require(response.json["cursorDigest"] as? String))
    }

    @Test(arguments: ServerStorage.allCases) func aCursorWhoseLogHoldsOtherChangeSetsIsRefusedWithItsDigest(storage: ServerStorage) throws {
        let a = try ClientReplica(), b = try ClientReplica()
        for index in 0..<2 { try a.addBoard("a\(index)") }
        for index in 0..<2 { try b.addBoard("b\(index)") }
        // The same change sets, stored in another order: what a server restored from a backup
        // logs when the clients re-send what it lost.
        let original = try ServerFixture(storage: storage), restored = try ServerFixture(storage: storage)
        for (server, pushers) in [(original, [a, b]), (restored, [b, a])] {
            try server.registerSchema()
            for pusher in pushers { server.push(try pusher.batch(), as: try pusher.credentials).expectOK() }
        }
        let pulled = try CursorDigestRouteTests.position(original.pull(limit: 3))
        #expect(pulled.cursor == "3" && pulled.digest.count == 32 && pulled.digest.allSatisfy(\.isHexDigit), "\(pulled)")

        let refused = restored.pull(after: pulled.cursor, afterDigest: pulled.digest)
        #expect(refused.status == .badRequest && refused.errorCode == "invalid_cursor", "\(refused.text)")
        #expect(refused.text.contains("cursor 0"), "\(refused.text)")
        // Without the digest the cursor is trusted, and the page silently leaves out `a`'s second change set.
        let trusted = try PullRouteTests.page(restored.pull(after: pulled.cursor))
        #expect(trusted.changeSets.map(\.dot) == [Dot(replica: a.replica.replicaID, seq: 2)])

        // The server that handed the cursor out goes on from it, also when it answers from memory at the end.
        let next = try CursorDigestRouteTests.position(original.pull(after: pulled.cursor, afterDigest: pulled.digest))
        #expect(next.cursor == "4")
        for _ in 0..<2 {
            #expect(try CursorDigestRouteTests.position(original.pull(after: next.cursor, afterDigest: next.digest)) == next)
            #expect(restored.pull(after: next.cursor, afterDigest: next.digest).errorCode == "invalid_cursor")
        }
        // Both logs hold the same change sets at their end, so their digests there differ only by order.
        let restoredEnd = try CursorDigestRouteTests.position(restored.pull(after: "0"))
        #expect(restoredEnd.cursor == next.cursor && restoredEnd.digest != next.digest)
    }

    @Test(arguments: ServerStorage.allCases) func cursorZeroNeedsNoDigestAndAMalformedOneIsAnInvalidParameter(storage: ServerStorage) throws {
        let (server, _, _) = try PullRouteTests.populated(storage: storage)
        let start = try CursorDigestRouteTests.position(server.pull(after: "0", limit: 1))
        #expect(start.cursor == "1")
        let empty = String(repeating: "0", count: 32)
        #expect(try CursorDigestRouteTests.position(server.pull(after: "0", afterDigest: empty, limit: 1)) == start)
        for malformed in ["", "xyz", String(repeating: "0", count: 31), String(repeating: "0", count: 64)] {
            let response = server.pull(after: start.cursor, afterDigest: malformed)
            #expect(response.errorCode == "invalid_parameter", "\(malformed): \(response.text)")
        }
        // Upper-case hex names the same digest.
        #expect(try CursorDigestRouteTests.position(server.pull(after: start.cursor, afterDigest: start.digest.uppercased())).cursor == "5")
    }
}

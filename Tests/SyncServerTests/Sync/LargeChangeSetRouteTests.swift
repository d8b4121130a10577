import Codecs
import Foundation
@testable import HTTPServer
import SyncKit
import Testing

@testable import SyncServer

/// Uploads of change sets larger than a request body, and pulls that hand them out by reference
/// ("Large change sets" in Protocol/README.md).
@Suite struct LargeChangeSetRouteTests {
    /// A server whose parts and pull pages hold at most 2 KiB, with a clock the test moves.
    final class MovableClock: @unchecked Sendable {
        // @unchecked: `now` is only accessed while holding `lock`.
        private let lock = NSLock()
        private var now = serverNow
        func read() -> UInt64 { lock.withLock { now } }
        func advance(seconds: Double) { lock.withLock { now += UInt64(seconds * 1000) } }
    }

    static let partBytes = 2048

    static func server(storage: ServerStorage, clock: MovableClock = MovableClock()) throws -> ServerFixture {
        let server = try ServerFixture(storage: storage) { configure(&$0, clock: clock) }
        try server.registerSchema()
        return server
    }

    /// The limits and clock of ``server(storage:clock:)``.
    static func configure(_ configuration: inout SyncServiceConfiguration, clock: MovableClock) {
        configuration.transferPartBytes = partBytes
        configuration.maxUploadBytes = 1 << 20
        configuration.stagedTransferLifetime = 3600
        configuration.clock = { clock.read() }
    }

    /// A client whose one save (one change set) encodes to several parts.
    static func bigSave() throws -> (ClientReplica, Data) {
        let client = try ClientReplica()
        try client.addBoard("Big", cards: 60)
        let body = try client.batch()
        #expect(body.count > 3 * partBytes, "the change set must span several parts (\(body.count) bytes)")
        return (client, body)
    }

    static func hex(_ bytes: Data) -> String { LowercaseHex.encode(SHA256.hash(bytes)) }

    static func parts(of body: Data, size: Int = partBytes) -> [Data] {
        stride(from: 0, to: body.count, by: size).map { body.subdata(in: $0..<min(body.count, $0 + size)) }
    }

    /// Declares an upload of `body`; returns its ID.
    static func create(_ server: ServerFixture, _ body: Data, sha256: String? = nil) throws -> String {
        let declaration = try JSONSerialization.data(withJSONObject: ["totalBytes": body.count, "sha256": sha256 ?? hex(body)])
        let response = server.send(.post, "/v1/datasets/main/uploads", body: declaration)
        #expect(response.status == .created, "\(response.text)")
        #expect(response.json["maxPartBytes"] as? Int == partBytes)
        return try #require(response.json["upload"] as? String)
    }

    static func put(_ server: ServerFixture, _ id: String, _ number: Int, _ bytes: Data, sha256: String? = nil) -> HTTPResponse {
        server.send(.put, "/v1/datasets/main/uploads/\(id)/parts/\(number)", body: bytes,
                    extraHeaders: [("Sync-Part-SHA256", sha256 ?? hex(bytes))])
    }

    static func commit(_ server: ServerFixture, _ id: String, as pusher: ReplicaCredentials) -> HTTPResponse {
        server.send(.post, "/v1/datasets/main/uploads/\(id)/commit", extraHeaders: ServerFixture.headers(of: pusher))
    }

    @Test(arguments: ServerStorage.allCases) func partsSentOutOfOrderCommitAtomicallyAndACommitAgainAnswersTheSame(storage: ServerStorage) throws {
        let server = try Self.server(storage: storage)
        let (client, body) = try Self.bigSave()
        let id = try Self.create(server, body)
        let parts = Self.parts(of: body)
        for (index, part) in parts.enumerated().reversed() { Self.put(server, id, index + 1, part).expectOK() }
        // Nothing is visible before the commit.
        #expect(try server.serverVector() == VersionVector())
        let status = server.send(.get, "/v1/datasets/main/uploads/\(id)")
        #expect((status.json["parts"] as? [[String: Any]])?.map { $0["number"] as? Int } == Array(1...parts.count).map { $0 })
        #expect(status.json["receivedBytes"] as? Int == body.count)

        let committed = Self.commit(server, id, as: try client.credentials)
        #expect(committed.status == .ok, "\(committed.text)")
        #expect((committed.json["applied"] as? [[String: Any]])?.count == 1)
        #expect(try server.serverVector() == client.replica.versionVector())
        let again = Self.commit(server, id, as: try client.credentials)
        #expect(again.status == .ok)
        #expect(again.body == committed.body)
        #expect(Self.put(server, id, 1, parts[0]).errorCode == "upload_committed")
    }

    @Test(arguments: ServerStorage.allCases) func aMissingPartRefusesTheCommitUntilItArrives(storage: ServerStorage) throws {
        let server = try Self.server(storage: storage)
        let (client, body) = try Self.bigSave()
        let id = try Self.create(server, body)
        let parts = Self.parts(of: body)
        for (index, part) in parts.enumerated() where index != 1 { Self.put(server, id, index + 1, part).expectOK() }
        let refused = Self.commit(server, id, as: try client.credentials)
        #expect(refused.status == .conflict)
        #expect(refused.errorCode == "upload_incomplete")
        #expect(refused.errorMessage.contains("parts 2 are missing"), "\(refused.errorMessage)")
        #expect(try server.serverVector() == VersionVector())

        Self.put(server, id, 2, parts[1]).expectOK()
        #expect(Self.commit(server, id, as: try client.credentials).status == .ok)
        #expect(try server.serverVector() == client.replica.versionVector())
    }

    @Test(arguments: ServerStorage.allCases) func aPartWithTheWrongHashIsRefusedAndAResentPartReplacesIt(storage: ServerStorage) throws {
        let server = try Self.server(storage: storage)
        let (client, body) = try Self.bigSave()
        let id = try Self.create(server, body)
        let parts = Self.parts(of: body)
        let wrong = Self.put(server, id, 1, parts[0], sha256: Self.hex(parts[1]))
        #expect(wrong.status == .badRequest)
        #expect(wrong.errorCode == "part_hash_mismatch")
        let unnamed = server.send(.put, "/v1/datasets/main/uploads/\(id)/parts/1", body: parts[0])
        #expect(unnamed.errorCode == "invalid_parameter")
        // Another part's bytes under number 1 (hash matching those bytes) fail the commit's whole-body hash...
        for (index, part) in parts.enumerated() { Self.put(server, id, index + 1, index == 0 ? parts[1].prefix(parts[0].count) : part).expectOK() }
        let mismatch = Self.commit(server, id, as: try client.credentials)
        #expect(mismatch.errorCode == "upload_hash_mismatch", "\(mismatch.text)")
        // ...until the right bytes replace them.
        Self.put(server, id, 1, parts[0]).expectOK()
        #expect(Self.commit(server, id, as: try client.credentials).status == .ok)
    }

    @Test(arguments: ServerStorage.allCases) func uploadsExpireWhenUntouched(storage: ServerStorage) throws {
        let clock = MovableClock()
        let server = try Self.server(storage: storage, clock: clock)
        let (_, body) = try Self.bigSave()
        let id = try Self.create(server, body)
        Self.put(server, id, 1, Self.parts(of: body)[0]).expectOK()
        clock.advance(seconds: 3601)
        // Expired uploads are removed when the next one is created.
        _ = try Self.create(server, body)
        let gone = server.send(.get, "/v1/datasets/main/uploads/\(id)")
        #expect(gone.status == .notFound)
        #expect(gone.errorCode == "upload_not_found")
        #expect(Self.put(server, id, 2, Self.parts(of: body)[1]).errorCode == "upload_not_found")
    }

    @Test(arguments: ServerStorage.allCases) func limitsScopeAndAuthorsAreChecked(storage: ServerStorage) throws {
        let server = try Self.server(storage: storage)
        let (client, body) = try Self.bigSave()
        let tooLarge = try JSONSerialization.data(withJSONObject: ["totalBytes": (1 << 20) + 1, "sha256": Self.hex(body)])
        #expect(server.send(.post, "/v1/datasets/main/uploads", body: tooLarge).status == .contentTooLarge)
        #expect(server.send(.post, "/v1/datasets/main/uploads", body: Data("{}".utf8)).errorCode == "invalid_parameter")
        // A malformed declaration is refused as malformed, whatever size it declares.
        let malformedAndLarge = Data(#"{"totalBytes": 17547587749856, "sha256": "\#(Self.hex(body))*"}"#.utf8)
        let malformedRefusal = server.send(.post, "/v1/datasets/main/uploads", body: malformedAndLarge)
        #expect(malformedRefusal.status == .badRequest && malformedRefusal.errorCode == "invalid_parameter", "\(malformedRefusal.text)")
        // Sizes that are no size: nothing, or beyond a 64-bit integer (never wrapped around).
        for total in ["0", "-5", "9223372036854775808"] {
            let declaration = Data(#"{"totalBytes": \#(total), "sha256": "\#(Self.hex(body))"}"#.utf8)
            let refusal = server.send(.post, "/v1/datasets/main/uploads", body: declaration)
            #expect(refusal.status == .badRequest && refusal.errorCode == "invalid_parameter", "\(total): \(refusal.text)")
        }

        let id = try Self.create(server, body)
        #expect(Self.put(server, id, 0, Data("x".utf8)).errorCode == "invalid_parameter")
        #expect(Self.put(server, id, 100_001, Data("x".utf8)).errorCode == "invalid_parameter")
        // Parts beyond the declared size.
        let parts = Self.parts(of: body)
        for (index, part) in parts.enumerated() { Self.put(server, id, index + 1, part).expectOK() }
        #expect(Self.put(server, id, parts.count + 1, Data("x".utf8)).status == .contentTooLarge)

        let readOnly = try server.service.tokens.add(dataset: "main", scope: .readOnly)
        #expect(server.send(.post, "/v1/datasets/main/uploads/\(id)/commit", token: readOnly).errorCode == "insufficient_scope")
        #expect(server.send(.get, "/v1/datasets/main/uploads/\(id)", token: server.otherToken).status == .forbidden)

        // Another replica cannot commit the change set as its author: the authenticator covers it whole.
        let impostor = try ClientReplica()
        let forged = Self.commit(server, id, as: try impostor.credentials)
        #expect(forged.errorCode == "unverified_author", "\(forged.text)")
        #expect(try server.serverVector() == VersionVector())
        #expect(Self.commit(server, id, as: try client.credentials).status == .ok)
    }

    @Test(arguments: ServerStorage.allCases) func aPullHandsOutALargeChangeSetByReferenceInParts(storage: ServerStorage) throws {
        let server = try Self.server(storage: storage)
        let client = try ClientReplica()
        try client.addBoard("small before")
        try client.addBoard("Big", cards: 60)
        try client.addBoard("small after")
        let changeSets = try client.replica.changeSets(missingFrom: VersionVector())
        server.push(try ChangeSetCoding.encode([changeSets[0]], base: VersionVector()), as: try client.credentials).expectOK()
        let big = try ChangeSetCoding.encode([changeSets[1]], base: VersionVector())
        let id = try Self.create(server, big)
        for (index, part) in Self.parts(of: big).enumerated() { Self.put(server, id, index + 1, part).expectOK() }
        Self.commit(server, id, as: try client.credentials).expectOK()
        server.push(try ChangeSetCoding.encode([changeSets[2]], base: VersionVector()), as: try client.credentials).expectOK()

        // The first page stops before the large change set...
        let first = server.send(.get, "/v1/datasets/main/changesets", query: [("after", "0"), ("largeChangeSets", "byReference")])
        #expect(first.json["cursor"] as? String == "1")
        #expect(first.json["largeChangeSet"] == nil)
        #expect(first.json["more"] as? Bool == true)
        // ...the next names it alone, with its entry as the cursor...
        let second = server.send(.get, "/v1/datasets/main/changesets", query: [
            ("after", "1"), ("afterDigest", try #require(first.json["cursorDigest"] as? String)), ("largeChangeSets", "byReference"),
        ])
        #expect(second.status == .ok, "\(second.text)")
        #expect(((second.json["changeSets"] as? [String: Any])?["changeSets"] as? [Any])?.isEmpty == true)
        let reference = try #require(second.json["largeChangeSet"] as? [String: Any])
        #expect(second.json["cursor"] as? String == "2")
        #expect(reference["entry"] as? String == "2")
        #expect(reference["seq"] as? Int == 2)
        let partCount = try #require(reference["parts"] as? Int)
        #expect(partCount >= 3)
        var fetched = Data()
        for number in 1...partCount {
            let part = server.send(.get, "/v1/datasets/main/changesets/2/parts/\(number)")
            #expect(part.status == .ok)
            fetched.append(part.body)
        }
        #expect(Self.hex(fetched) == reference["sha256"] as? String)
        #expect(try ChangeSetCoding.decode(fetched).changeSets == [changeSets[1]])
        #expect(server.send(.get, "/v1/datasets/main/changesets/2/parts/\(partCount + 1)").errorCode == "transfer_not_found")
        // ...and the page after it goes on as before.
        let third = server.send(.get, "/v1/datasets/main/changesets", query: [
            ("after", "2"), ("afterDigest", try #require(second.json["cursorDigest"] as? String)), ("largeChangeSets", "byReference"),
        ])
        #expect(third.json["cursor"] as? String == "3")
        #expect(third.json["more"] as? Bool == false)
        // A client that does not ask for references gets the page whole, as before.
        let whole = server.pull(after: "1", limit: 500)
        #expect(whole.json["largeChangeSet"] == nil)
        #expect(((whole.json["changeSets"] as? [String: Any])?["changeSets"] as? [Any])?.count == 2)
    }
}

import Codecs
import Foundation
@testable import HTTPServer
import Testing

@testable import SyncEngine
import SyncKit
@testable import SyncServer

/// Replays `Protocol/vectors` through the routes: the example exchanges in order on a fresh
/// server, and every `sequence-*.json` checked against its expected rows. Run with
/// `SYNCD_WRITE_VECTORS=1` to regenerate the files from real client stores.
@Suite(.serialized) struct ProtocolVectorTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Protocol/vectors")
    static let replicaA = UUID(uuidString: "AAAAAAAA-0000-4000-8000-000000000001")!
    static let replicaB = UUID(uuidString: "BBBBBBBB-0000-4000-8000-000000000002")!

    // MARK: Replay

    @Test(arguments: ServerStorage.allCases) func sequencesConvergeToTheirExpectedRows(storage: ServerStorage) throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: ProtocolVectorTests.directory.path)
            .filter { $0.hasPrefix("sequence-") && $0.hasSuffix(".json") }.sorted()
        #expect(files.count >= 2)
        for file in files {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: ProtocolVectorTests.directory.appendingPathComponent(file))) as? [String: Any])
            let server = try ServerFixture(storage: storage)
            let schema = try JSONSerialization.data(withJSONObject: try #require(object["schema"]))
            try server.registerSchema(schema)
            for (index, step) in try #require(object["batches"] as? [[String: Any]]).enumerated() {
                let headers = (step["headers"] as? [String: String] ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
                let response = server.send(.post, "/v1/datasets/main/changesets",
                                           body: try JSONSerialization.data(withJSONObject: try #require(step["batch"])), extraHeaders: headers)
                #expect(response.status.code == step["expectStatus"] as? Int, "\(file) batch \(index): \(response.text)")
                if let code = step["expectError"] as? String { #expect(response.errorCode == code, "\(file) batch \(index)") }
            }
            let expected = try #require(object["expectedRows"] as? [String: Any])
            let actual = try ProtocolVectorTests.rows(at: server.snapshotFile())
            #expect(NSDictionary(dictionary: actual).isEqual(to: expected), "\(file): rows differ\n\(actual)")
        }
    }

    @Test(arguments: ServerStorage.allCases) func examplesReplayWithTheSameResponses(storage: ServerStorage) throws {
        let examples = ProtocolVectorTests.directory.appendingPathComponent("examples")
        let files = try FileManager.default.contentsOfDirectory(atPath: examples.path).filter { $0.hasSuffix(".json") }.sorted()
        #expect(files.count >= 8)
        let server = try ServerFixture(storage: storage)
        for file in files {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: examples.appendingPathComponent(file))) as? [String: Any])
            let request = try #require(object["request"] as? [String: Any])
            let expected = try #require(object["response"] as? [String: Any])
            let response = ProtocolVectorTests.send(request, to: server)
            #expect(response.status.code == expected["status"] as? Int, "\(file): \(response.text)")
            let headers = expected["headers"] as? [String: String] ?? [:]
            for (name, value) in headers { #expect(response.headers[name] == value, "\(file): header \(name)") }
            if let body = expected["body"] {
                let actual = try JSONSerialization.jsonObject(with: response.body, options: [.fragmentsAllowed])
                #expect(NSArray(array: [actual]).isEqual(to: [body]), "\(file): body differs: \(response.text)")
            }
        }
    }

    static func send(_ request: [String: Any], to server: ServerFixture) -> HTTPResponse {
        let method = HTTPMethod(rawValue: request["method"] as? String ?? "GET")
        let path = request["path"] as? String ?? "/"
        let query = (request["query"] as? [String: String] ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        var body = Data()
        if let json = request["body"] { body = (try? JSONSerialization.data(withJSONObject: json, options: [.fragmentsAllowed])) ?? Data() }
        let token: String?
        let headers = request["headers"] as? [String: String] ?? [:]
        let extraHeaders = headers.filter { $0.key != "Authorization" }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        switch headers["Authorization"] {
        case "Bearer TOKEN": token = server.token
        case "Bearer OTHER_DATASET_TOKEN": token = server.otherToken
        case .some(let other): token = String(other.dropFirst("Bearer ".count))
        case nil: token = nil
        }
        return server.send(method, path, query: query, body: body, token: token, extraHeaders: extraHeaders)
    }

    /// Every entity and join table of the store: table -> rows sorted by their first columns,
    /// each row column -> value in the protocol's SQL value encoding.
    static func rows(at path: String) throws -> [String: Any] {
        let connection = try SQLiteConnection(path: path, readOnly: true)
        var result: [String: Any] = [:]
        for table in try connection.rows(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite%' ORDER BY name") {
            guard case .text(let name) = table[0] else { continue }
            let columns = try connection.rows("SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(name)]).compactMap { $0[0].textValue }
            var rows: [[String: Any]] = []
            for row in try connection.rows("SELECT * FROM \"\(name)\" ORDER BY 1, 2") {
                var object: [String: Any] = [:]
                for (column, value) in zip(columns, row) {
                    object[column] = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(value), options: [.fragmentsAllowed])
                }
                rows.append(object)
            }
            result[name] = rows
        }
        return result
    }

    // MARK: Generation

    @Test(.enabled(if: ProcessInfo.processInfo.environment["SYNCD_WRITE_VECTORS"] == "1"))
    func writeVectors() throws {
        try FileManager.default.createDirectory(at: ProtocolVectorTests.directory.appendingPathComponent("examples"), withIntermediateDirectories: true)
        try writeExamples()
        try writeSequences()
        try writeAuthenticatorVector()
    }

    // MARK: Authenticator

    static let authenticatorFile = "authenticator.json"

    @Test func theAuthenticatorVectorRecomputes() throws {
        let data = try Data(contentsOf: ProtocolVectorTests.directory.appendingPathComponent(ProtocolVectorTests.authenticatorFile))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let keyText = try #require(object["key"] as? String)
        let key = try #require(LowercaseHex.decode(keyText))
        let batch = try JSONSerialization.data(withJSONObject: try #require(object["batch"]))
        let changeSet = try #require(try ChangeSetCoding.decode(batch).changeSets.first)
        let canonical = try StoredOperations.encode(changeSet.operations).withBytes { ChangeSetAuthenticator.message(of: changeSet, operations: $0) }
        #expect(LowercaseHex.encode(canonical) == object["canonicalBytes"] as? String)
        let authenticator = try ChangeSetAuthenticator.authenticator(of: changeSet, key: key)
        #expect(LowercaseHex.encode(authenticator) == object["authenticator"] as? String)
        #expect(changeSet.authenticator == authenticator)
        #expect(try ChangeSetAuthenticator.isAuthentic(changeSet, key: key))
    }

    func writeAuthenticatorVector() throws {
        let a = try FixedClient(ProtocolVectorTests.replicaA, start: serverNow - 60_000)
        let board = Board()
        board.title = "Signed"
        let card = Card()
        card.text = "by A"
        card.weight = 0.5
        card.board = board
        a.context.insert(board)
        try a.context.save()
        board.rank = 1
        try a.context.save()
        let changeSet = try #require(try a.replica.changeSets(missingFrom: VersionVector()).last)
        let key = ProtocolVectorTests.fixedKey(of: ProtocolVectorTests.replicaA)
        let canonical = try StoredOperations.encode(changeSet.operations).withBytes { ChangeSetAuthenticator.message(of: changeSet, operations: $0) }
        var previous = VersionVector()
        previous[ProtocolVectorTests.replicaA] = 1
        try ProtocolVectorTests.write([
            "description": "A's second change set with its authenticator: HMAC-SHA256 under A's key of the canonical bytes (Protocol/README.md, Replica identity). The batch's base is {A: 1}, so the change set's full vector is {A: 2}.",
            "key": LowercaseHex.encode(key),
            "batch": try ProtocolVectorTests.pretty(try ChangeSetCoding.encode([changeSet], base: previous)),
            "canonicalBytes": LowercaseHex.encode(canonical),
            "authenticator": LowercaseHex.encode(try #require(changeSet.authenticator)),
        ], to: ProtocolVectorTests.authenticatorFile)
    }

    /// The published key of a vector replica: its ID's first byte 32 times (`AA…AA` for A), so
    /// that other implementations can recompute every authenticator in the vectors.
    static func fixedKey(of replica: ReplicaID) -> [UInt8] {
        [UInt8](repeating: replica.uuid.0, count: ReplicaCredentials.keyLength)
    }

    final class FixedClient {
        let replica: SyncReplica
        init(_ id: ReplicaID, start: UInt64, entities: [any PersistentEntity.Type] = boardEntities) throws {
            let clock = TickingClock(start: start)
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("syncd-vector-\(UUID().uuidString).sqlite").path
            let store = try ObjectStore(path: path, entities: entities)
            replica = try SyncReplica(store: store, wallClock: { clock.read() }, newReplicaID: id)
            try replica.withConnection {
                try $0.run("UPDATE _sync_state SET value = ? WHERE key = 'replica_key'", [.blob(Data(ProtocolVectorTests.fixedKey(of: id)))])
            }
            context = try store.makeContext()
        }
        /// The push headers naming this replica.
        var headers: [String: String] {
            get throws {
                let credentials = try replica.credentials()
                return ["Sync-Replica-ID": credentials.replica.storageText, "Sync-Replica-Key": credentials.keyHex]
            }
        }
        let context: ObjectContext
        func batch(missingFrom vector: VersionVector = VersionVector()) throws -> Data {
            try ChangeSetCoding.encode(try replica.changeSets(missingFrom: vector), base: vector)
        }
    }

    static func pretty(_ data: Data) throws -> Any {
        try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
    }

    static func write(_ object: Any, to name: String) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        try (data + Data("\n".utf8)).write(to: directory.appendingPathComponent(name))
    }

    func writeExamples() throws {
        let server = try ServerFixture()
        let schema = try ClientReplica().store.exportSchema()
        var number = 0
        func record(_ name: String, _ request: [String: Any], bodyIsJSON: Bool = true, headers: [String] = []) throws {
            number += 1
            let response = ProtocolVectorTests.send(request, to: server)
            var expected: [String: Any] = ["status": response.status.code]
            var expectedHeaders: [String: String] = ["Sync-Protocol": "1"]
            for name in headers { expectedHeaders[name] = response.headers[name] }
            expected["headers"] = expectedHeaders
            if bodyIsJSON { expected["body"] = try ProtocolVectorTests.pretty(response.body) }
            try ProtocolVectorTests.write(["request": request, "response": expected],
                                          to: "examples/\(String(format: "%02d", number))-\(name).json")
        }
        let auth = ["Authorization": "Bearer TOKEN"]
        try record("health", ["method": "GET", "path": "/health"])
        try record("schema-get-before-registration", ["method": "GET", "path": "/v1/datasets/main/schema", "headers": auth])
        try record("schema-put", ["method": "PUT", "path": "/v1/datasets/main/schema", "headers": auth, "body": try ProtocolVectorTests.pretty(schema)])
        try record("schema-put-again", ["method": "PUT", "path": "/v1/datasets/main/schema", "headers": auth, "body": try ProtocolVectorTests.pretty(schema)])
        try record("unauthorized", ["method": "GET", "path": "/v1/datasets/main/schema"], headers: ["WWW-Authenticate"])
        try record("forbidden", ["method": "GET", "path": "/v1/datasets/main/schema", "headers": ["Authorization": "Bearer OTHER_DATASET_TOKEN"]])

        let a = try FixedClient(ProtocolVectorTests.replicaA, start: serverNow - 60_000)
        let board = Board()
        board.title = "Plans"
        let card = Card()
        card.text = "Write the spec"
        card.points = 3
        card.weight = 1.5
        card.payload = Data([1, 2, 3])
        card.board = board
        let tag = Tag()
        tag.name = "urgent"
        card.tags = [tag]
        a.context.insert(board)
        try a.context.save()
        card.note = "by Friday"
        try a.context.save()
        let push = try ProtocolVectorTests.pretty(try a.batch())
        let pushHeaders = auth.merging(try a.headers) { first, _ in first }
        try record("push", ["method": "POST", "path": "/v1/datasets/main/changesets", "headers": pushHeaders, "body": push])
        try record("push-retry", ["method": "POST", "path": "/v1/datasets/main/changesets", "headers": pushHeaders, "body": push])
        try record("pull-first-page", ["method": "GET", "path": "/v1/datasets/main/changesets", "headers": auth, "query": ["after": "0", "limit": "1"]])
        // The digest the first page came with: the log holds A's first change set at cursor 1.
        let firstPageDigest = LogDigest.empty.appending(Dot(replica: ProtocolVectorTests.replicaA, seq: 1)).description
        try record("pull-second-page", ["method": "GET", "path": "/v1/datasets/main/changesets", "headers": auth,
                                        "query": ["after": "1", "afterDigest": firstPageDigest, "limit": "1"]])
        try record("pull-excluding-own", ["method": "GET", "path": "/v1/datasets/main/changesets", "headers": auth,
                                          "query": ["after": "0", "exclude": ProtocolVectorTests.replicaA.uuidString]])
        try record("pull-invalid-cursor", ["method": "GET", "path": "/v1/datasets/main/changesets", "headers": auth, "query": ["after": "99"]])

        // A change set whose predecessor the server lacks.
        let b = try FixedClient(ProtocolVectorTests.replicaB, start: serverNow - 50_000)
        let other = Board()
        other.title = "Ideas"
        b.context.insert(other)
        try b.context.save()
        other.rank = 2
        try b.context.save()
        let bSets = try b.replica.changeSets(missingFrom: VersionVector())
        let gap = try ProtocolVectorTests.pretty(try ChangeSetCoding.encode([bSets[1]], base: VersionVector()))
        try record("push-causality-violation", ["method": "POST", "path": "/v1/datasets/main/changesets",
                                                "headers": auth.merging(try b.headers) { first, _ in first }, "body": gap])

        let future = try FixedClient(UUID(uuidString: "CCCCCCCC-0000-4000-8000-000000000003")!, start: serverNow + 3_600_000)
        let late = Board()
        late.title = "From the future"
        future.context.insert(late)
        try future.context.save()
        try record("push-clock-skew", ["method": "POST", "path": "/v1/datasets/main/changesets",
                                       "headers": auth.merging(try future.headers) { first, _ in first },
                                       "body": try ProtocolVectorTests.pretty(try future.batch())])
        try record("push-malformed", ["method": "POST", "path": "/v1/datasets/main/changesets", "headers": auth,
                                      "body": ["base": [:] as [String: Any], "changeSets": [["replica": "not-a-uuid"]]]])
        let unknown: [String: Any] = ["base": [:] as [String: Any], "changeSets": [[
            "replica": "DDDDDDDD-0000-4000-8000-000000000004", "seq": 1, "hlc": (serverNow - 1000) << 16,
            "vector": ["DDDDDDDD-0000-4000-8000-000000000004": 1],
            "operations": [["op": "create", "entity": "Spaceship", "id": "EEEEEEEE-0000-4000-8000-000000000005"]],
        ]]]
        try record("push-schema-mismatch", ["method": "POST", "path": "/v1/datasets/main/changesets", "headers": auth, "body": unknown])
        try record("snapshot", ["method": "GET", "path": "/v1/datasets/main/snapshot", "headers": auth], bodyIsJSON: false,
                   headers: ["Content-Type", "Sync-Cursor", "Sync-Cursor-Digest"])
        try record("not-found", ["method": "GET", "path": "/v1/nothing", "headers": auth])
        try record("method-not-allowed", ["method": "DELETE", "path": "/v1/datasets/main/changesets", "headers": auth], headers: ["Allow"])
        // A's first change set again, with another board title: the same dot, other contents.
        let forged = PushRouteTests.forged(try a.replica.changeSets(missingFrom: VersionVector())[0])
        try record("push-conflicting-change-set", ["method": "POST", "path": "/v1/datasets/main/changesets", "headers": pushHeaders,
                                                   "body": try ProtocolVectorTests.pretty(try ChangeSetCoding.encode([forged], base: VersionVector()))])
        // A's next dot, made by B (who holds the token but not A's key) and signed with B's key.
        board.title = "Plans, by A"
        try a.context.save()
        let next = try #require(try a.replica.changeSets(missingFrom: VersionVector()).last)
        var impersonation = PushRouteTests.forged(next)
        impersonation.authenticator = try ChangeSetAuthenticator.authenticator(of: impersonation, key: ProtocolVectorTests.fixedKey(of: b.replica.replicaID))
        try record("push-unverified-author", ["method": "POST", "path": "/v1/datasets/main/changesets",
                                              "headers": auth.merging(try b.headers) { first, _ in first },
                                              "body": try ProtocolVectorTests.pretty(try ChangeSetCoding.encode([impersonation], base: VersionVector()))])
        var impostor = auth.merging(try b.headers) { first, _ in first }
        impostor["Sync-Replica-ID"] = ProtocolVectorTests.replicaA.uuidString
        try record("push-replica-key-mismatch", ["method": "POST", "path": "/v1/datasets/main/changesets", "headers": impostor,
                                                 "body": try ProtocolVectorTests.pretty(try ChangeSetCoding.encode([impersonation], base: VersionVector()))])
        try record("push-relayed", ["method": "POST", "path": "/v1/datasets/main/changesets",
                                    "headers": auth.merging(try future.headers) { first, _ in first },
                                    "body": try ProtocolVectorTests.pretty(try ChangeSetCoding.encode([next], base: VersionVector()))])
        // A cursor pulled from another log (one holding B's first change set at cursor 1): what
        // a client pulled before the server was restored from a backup.
        let otherLogDigest = LogDigest.empty.appending(Dot(replica: ProtocolVectorTests.replicaB, seq: 1)).description
        try record("pull-cursor-digest-mismatch", ["method": "GET", "path": "/v1/datasets/main/changesets", "headers": auth,
                                                   "query": ["after": "1", "afterDigest": otherLogDigest]])
    }

    func writeSequences() throws {
        let schema = try ProtocolVectorTests.pretty(try ClientReplica().store.exportSchema())

        // 1: one writer creates a board with ordered cards and tags, edits and deletes one card.
        do {
            let a = try FixedClient(ProtocolVectorTests.replicaA, start: serverNow - 60_000)
            let board = Board()
            board.title = "Sprint"
            var cards: [Card] = []
            for index in 0..<3 {
                let card = Card()
                card.text = "card \(index)"
                card.points = index + 1
                card.board = board
                cards.append(card)
            }
            let tag = Tag()
            tag.name = "blue"
            cards[0].tags = [tag]
            a.context.insert(board)
            try a.context.save()
            board.insertIntoCards(cards[2], at: 0)
            cards[1].weight = 0.25
            cards[1].note = "moved"
            try a.context.save()
            a.context.delete(cards[0])
            try a.context.save()
            let sets = try a.replica.changeSets(missingFrom: VersionVector())
            var batches: [[String: Any]] = []
            batches.append(["batch": try ProtocolVectorTests.pretty(try ChangeSetCoding.encode(Array(sets[0..<2]), base: VersionVector())), "expectStatus": 200,
                            "headers": try a.headers])
            var base = VersionVector()
            base[ProtocolVectorTests.replicaA] = 2
            batches.append(["batch": try ProtocolVectorTests.pretty(try ChangeSetCoding.encode([sets[2]], base: base)), "expectStatus": 200,
                            "headers": try a.headers])
            try ProtocolVectorTests.write([
                "description": "One writer: a board with three ordered cards and a tag; a card moves to the front and gets a note; the tagged card is deleted (nullify empties the join table). The second batch's vectors are relative to base {A: 2}.",
                "schema": schema, "batches": batches, "expectedRows": try ProtocolVectorTests.rows(at: a.replica.store.path),
            ], to: "sequence-1-single-writer.json")
        }

        // 2: two writers edit the same attribute concurrently and one deletes what the other edits.
        do {
            let a = try FixedClient(ProtocolVectorTests.replicaA, start: serverNow - 60_000)
            let b = try FixedClient(ProtocolVectorTests.replicaB, start: serverNow - 30_000)
            let board = Board()
            board.title = "Shared"
            let card = Card()
            card.text = "original"
            card.board = board
            a.context.insert(board)
            try a.context.save()
            _ = try b.replica.apply(try a.replica.changeSets(missingFrom: VersionVector()))
            try b.context.refresh()
            // Concurrently: A renames the board, B renames it too (B's clock is later: B wins); B deletes the card, A edits it.
            board.title = "A's title"
            card.points = 7
            try a.context.save()
            let bBoard = try #require(try b.context.object(Board.self, id: board.objectID))
            bBoard.title = "B's title"
            let bCard = try #require(try b.context.object(Card.self, id: card.objectID))
            b.context.delete(bCard)
            try b.context.save()
            let aSets = try a.replica.changeSets(missingFrom: VersionVector())
            let bSets = try b.replica.changeSets(missingFrom: VersionVector()).filter { $0.dot.replica == ProtocolVectorTests.replicaB }
            _ = try a.replica.apply(bSets)
            let batches: [[String: Any]] = [
                ["batch": try ProtocolVectorTests.pretty(try ChangeSetCoding.encode([aSets[0]], base: VersionVector())), "expectStatus": 200,
                 "headers": try a.headers],
                ["batch": try ProtocolVectorTests.pretty(try ChangeSetCoding.encode(bSets, base: VersionVector())), "expectStatus": 200,
                 "headers": try b.headers],
                ["batch": try ProtocolVectorTests.pretty(try ChangeSetCoding.encode([aSets[1]], base: VersionVector())), "expectStatus": 200,
                 "headers": try a.headers],
                ["batch": try ProtocolVectorTests.pretty(try ChangeSetCoding.encode(aSets, base: VersionVector())), "expectStatus": 200,
                 "headers": try a.headers, "note": "a retry of everything A has: all already applied"],
            ]
            try ProtocolVectorTests.write([
                "description": "Two writers, concurrent: both rename the board (larger (hlc, replica) wins: B), B deletes the card A edits (delete wins). A's concurrent edit arrives last; the result is the same in any order.",
                "schema": schema, "batches": batches, "expectedRows": try ProtocolVectorTests.rows(at: a.replica.store.path),
            ], to: "sequence-2-concurrent-writers.json")
        }

        // 3: a batch with a gap is refused whole, then accepted once the gap is filled.
        do {
            let a = try FixedClient(ProtocolVectorTests.replicaA, start: serverNow - 60_000)
            for title in ["first", "second", "third"] {
                let board = Board()
                board.title = title
                a.context.insert(board)
                try a.context.save()
            }
            let sets = try a.replica.changeSets(missingFrom: VersionVector())
            let batches: [[String: Any]] = [
                ["batch": try ProtocolVectorTests.pretty(try ChangeSetCoding.encode([sets[0]], base: VersionVector())), "expectStatus": 200,
                 "headers": try a.headers],
                ["batch": try ProtocolVectorTests.pretty(try ChangeSetCoding.encode([sets[2]], base: VersionVector())), "expectStatus": 409,
                 "expectError": "causality_violation", "headers": try a.headers],
                ["batch": try ProtocolVectorTests.pretty(try ChangeSetCoding.encode([sets[2], sets[1]], base: VersionVector())), "expectStatus": 200,
                 "headers": try a.headers, "note": "out of order within the batch: the server applies seq 2 before seq 3"],
            ]
            try ProtocolVectorTests.write([
                "description": "Causality: seq 3 alone after seq 1 is refused (409, nothing stored); seq 3 and seq 2 together, in that order, are accepted.",
                "schema": schema, "batches": batches, "expectedRows": try ProtocolVectorTests.rows(at: a.replica.store.path),
            ], to: "sequence-3-causality.json")
        }
    }
}

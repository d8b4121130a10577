import Foundation
@testable import HTTPServer
import SyncKit
import Testing

@testable import SyncServer

@Suite struct PushRouteTests {
    /// What a client can observe of the dataset: pull everything from the start.
    static func everything(_ server: ServerFixture) -> String {
        server.pull(after: "0", limit: 5000).text
    }

    @Test(arguments: ServerStorage.allCases) func pushAppliesAndARetryIsIdempotent(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        try server.registerSchema()
        let client = try ClientReplica()
        try client.addBoard("Plans", cards: 2)
        try client.addBoard("Ideas")
        let body = try client.batch()
        let response = server.push(body, as: try client.credentials)
        #expect(response.status == .ok, "\(response.text)")
        let applied = try #require(response.json["applied"] as? [[String: Any]])
        #expect(applied.map { $0["seq"] as? Int } == [1, 2])
        #expect(applied.allSatisfy { $0["replica"] as? String == client.replica.replicaID.uuidString })
        #expect((response.json["alreadyApplied"] as? [Any])?.isEmpty == true)
        #expect(response.json["vector"] as? [String: Int] == [client.replica.replicaID.uuidString: 2])
        #expect(response.json["cursor"] as? String == "2")

        let retry = server.push(body, as: try client.credentials)
        #expect(retry.status == .ok)
        #expect((retry.json["applied"] as? [Any])?.isEmpty == true)
        #expect((retry.json["alreadyApplied"] as? [[String: Any]])?.count == 2)
        #expect(retry.json["cursor"] as? String == "2")
        #expect(try server.serverVector() == client.replica.versionVector())
    }

    @Test(arguments: ServerStorage.allCases) func missingPredecessorIs409WithServerVectorAndStoresNothing(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        try server.registerSchema()
        let client = try ClientReplica()
        try client.addBoard("one")
        try client.addBoard("two")
        let all = try client.replica.changeSets(missingFrom: VersionVector())
        server.push(try ChangeSetCoding.encode([all[0]], base: VersionVector()), as: try client.credentials).expectOK()
        let before = PushRouteTests.everything(server)

        let other = try ClientReplica()
        try other.addBoard("three")
        // Only the second change set of `client`, plus a valid one of `other`: the batch is refused whole.
        var vector = VersionVector()
        vector[client.replica.replicaID] = 1
        let otherSets = try other.replica.changeSets(missingFrom: VersionVector())
        var gap = all
        gap.removeFirst()
        var secondWithGap = gap[0]
        secondWithGap.dot.seq = 3
        secondWithGap.vector[client.replica.replicaID] = 3
        let response = server.push(try ChangeSetCoding.encode(otherSets + [secondWithGap], base: VersionVector()), as: try other.credentials)
        #expect(response.status == .conflict)
        #expect(response.errorCode == "causality_violation")
        #expect(response.errorMessage.contains(client.replica.replicaID.uuidString))
        let error = try #require(response.json["error"] as? [String: Any])
        #expect(error["vector"] as? [String: Int] == [client.replica.replicaID.uuidString: 1])
        #expect(PushRouteTests.everything(server) == before)
    }

    /// `changeSet` with every board title it sets replaced: the same dot, other contents.
    static func forged(_ changeSet: ChangeSet) -> ChangeSet {
        var forged = changeSet
        forged.operations = changeSet.operations.map { operation in
            guard case .set(let entity, let id, "title", _) = operation else { return operation }
            return .set(entity: entity, id: id, attribute: "title", values: [.text("forged")])
        }
        return forged
    }

    @Test(arguments: ServerStorage.allCases) func aStoredDotResentWithOtherContentsIs409AndStoresNothing(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        try server.registerSchema()
        let client = try ClientReplica()
        try client.addBoard("real")
        let stored = try client.replica.changeSets(missingFrom: VersionVector())
        server.push(try ChangeSetCoding.encode(stored, base: VersionVector()), as: try client.credentials).expectOK()
        let before = PushRouteTests.everything(server)

        try client.addBoard("next")
        let next = try client.replica.changeSets(missingFrom: VersionVector())[1]
        let response = server.push(try ChangeSetCoding.encode([PushRouteTests.forged(stored[0]), next], base: VersionVector()), as: try client.credentials)
        #expect(response.status == .conflict, "\(response.text)")
        #expect(response.errorCode == "conflicting_change_set")
        #expect(response.errorMessage.contains("\(stored[0].dot)"))
        #expect(PushRouteTests.everything(server) == before)
        // The genuine copy is still idempotent.
        let retry = server.push(try ChangeSetCoding.encode(stored, base: VersionVector()), as: try client.credentials)
        #expect(retry.status == .ok)
        #expect((retry.json["alreadyApplied"] as? [[String: Any]])?.count == 1)
    }

    @Test(arguments: ServerStorage.allCases) func aDotTwiceInOneBatchWithDifferentContentsIs409AndStoresNothing(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        try server.registerSchema()
        let client = try ClientReplica()
        try client.addBoard("real")
        let changeSet = try #require(try client.replica.changeSets(missingFrom: VersionVector()).first)
        let before = PushRouteTests.everything(server)
        let response = server.push(try ChangeSetCoding.encode([changeSet, PushRouteTests.forged(changeSet)], base: VersionVector()), as: try client.credentials)
        #expect(response.status == .conflict, "\(response.text)")
        #expect(response.errorCode == "conflicting_change_set")
        #expect(response.errorMessage.contains("\(changeSet.dot)"))
        #expect(try server.serverVector() == VersionVector())
        #expect(PushRouteTests.everything(server) == before)
    }

    @Test(arguments: ServerStorage.allCases) func incompleteOrMalformedReplicaHeadersAre400WithoutEchoingTheKey(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        try server.registerSchema()
        let client = try ClientReplica()
        try client.addBoard("Plans")
        let body = try client.batch(), credentials = try client.credentials
        let replica = credentials.replica.uuidString
        for headers in [[("Sync-Replica-ID", replica)], [("Sync-Replica-Key", credentials.keyHex)],
                        [("Sync-Replica-ID", replica), ("Sync-Replica-Key", String(repeating: "zz", count: 32))],
                        [("Sync-Replica-ID", replica), ("Sync-Replica-Key", String(credentials.keyHex.dropLast(2)))],
                        [("Sync-Replica-ID", "not-a-uuid"), ("Sync-Replica-Key", credentials.keyHex)]] {
            let response = server.send(.post, "/v1/datasets/main/changesets", body: body, extraHeaders: headers)
            #expect(response.status == .badRequest && response.errorCode == "invalid_parameter", "\(headers): \(response.text)")
            #expect(!response.text.contains(credentials.keyHex.prefix(16)))
        }
        #expect(try server.serverVector() == VersionVector())
        server.push(body, as: credentials).expectOK()
    }

    @Test(arguments: ServerStorage.allCases) func unknownEntityIs422SchemaMismatch(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        try server.registerSchema()
        let replica = UUID().uuidString
        let body = """
            {"base": {}, "changeSets": [{"replica": "\(replica)", "seq": 1, "hlc": \(serverNow << 16), "vector": {"\(replica)": 1},
              "operations": [{"op": "create", "entity": "Spaceship", "id": "\(UUID().uuidString)"}]}]}
            """
        let response = server.push(Data(body.utf8))
        #expect(response.status == .unprocessableContent)
        #expect(response.errorCode == "schema_mismatch")
        #expect(response.errorMessage.contains("Spaceship"))
        #expect(try server.serverVector() == VersionVector())
    }

    @Test(arguments: ServerStorage.allCases) func clockTooFarAheadIs422WithServerTime(storage: ServerStorage) throws {
        let server = try ServerFixture(maxClockSkew: 300, storage: storage)
        try server.registerSchema()
        let early = try ClientReplica(clock: TickingClock(start: serverNow + 299_000))
        try early.addBoard("just inside")
        server.push(try early.batch(), as: try early.credentials).expectOK()

        let late = try ClientReplica(clock: TickingClock(start: serverNow + 301_000))
        try late.addBoard("too far ahead")
        let response = server.push(try late.batch(), as: try late.credentials)
        #expect(response.status == .unprocessableContent)
        #expect(response.errorCode == "clock_skew")
        let error = try #require(response.json["error"] as? [String: Any])
        #expect((error["serverTime"] as? NSNumber)?.uint64Value == serverNow)
        #expect(try server.serverVector()[late.replica.replicaID] == 0)
    }

    @Test(arguments: ServerStorage.allCases) func malformedBatchesAre400AndChangeNothing(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        try server.registerSchema()
        let replica = UUID().uuidString
        let id = UUID().uuidString
        func changeSet(_ fields: String) -> String {
            #"{"base": {}, "changeSets": [{"replica": "\#(replica)", "seq": 1, "hlc": 5, "vector": {"\#(replica)": 1}, \#(fields)}]}"#
        }
        let bodies = [
            "", "{", "[]", "null", #"{"base": {}}"#, #"{"base": {"x": 1}, "changeSets": []}"#,
            #"{"base": {}, "changeSets": [{"replica": "nope", "seq": 1, "hlc": 1, "vector": {}, "operations": []}]}"#,
            #"{"base": {}, "changeSets": [{"replica": "\#(replica)", "seq": 0, "hlc": 1, "vector": {}, "operations": []}]}"#,
            #"{"base": {}, "changeSets": [{"replica": "\#(replica)", "seq": -1, "hlc": 1, "vector": {}, "operations": []}]}"#,
            #"{"base": {}, "changeSets": [{"replica": "\#(replica)", "seq": 2, "hlc": 1, "vector": {"\#(replica)": 1}, "operations": []}]}"#,
            #"{"base": {}, "changeSets": [{"replica": "\#(replica)", "seq": 18446744073709551615, "hlc": 1, "vector": {"\#(replica)": 18446744073709551615}, "operations": []}]}"#,
            changeSet(#""operations": [{"op": "explode", "entity": "Board", "id": "\#(id)"}]"#),
            changeSet(#""operations": [{"op": "set", "entity": "Board", "id": "\#(id)", "attribute": "title"}]"#),
            changeSet(#""operations": [{"op": "set", "entity": "Board", "id": "\#(id)", "attribute": "title", "values": [{"blob": "!!"}]}]"#),
            changeSet(#""operations": [{"op": "link", "entity": "Card", "id": "\#(id)", "relationship": "board"}]"#),
            changeSet(#""operations": [{"op": "create", "entity": "Board", "id": "not-a-uuid"}]"#),
        ]
        for body in bodies {
            let response = server.push(Data(body.utf8))
            #expect(response.status == .badRequest, "\(body) -> \(response.text)")
            #expect(response.errorCode == "malformed_change_set", "\(body)")
        }
        #expect(try server.serverVector() == VersionVector())
        #expect(server.pull().json["cursor"] as? String == "0")
    }

    @Test(arguments: ServerStorage.allCases) func badOperationsInsideAValidBatchChangeNothing(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        try server.registerSchema()
        let replica = UUID().uuidString
        let board = UUID().uuidString
        let hlc = (serverNow - 1000) << 16
        // A good first change set followed by one that sets a value into an attribute that does not exist.
        let body = """
            {"base": {}, "changeSets": [
              {"replica": "\(replica)", "seq": 1, "hlc": \(hlc), "vector": {"\(replica)": 1},
               "operations": [{"op": "create", "entity": "Board", "id": "\(board)"}, {"op": "set", "entity": "Board", "id": "\(board)", "attribute": "title", "values": ["x"]}]},
              {"replica": "\(replica)", "seq": 2, "hlc": \(hlc + 1), "vector": {"\(replica)": 2},
               "operations": [{"op": "set", "entity": "Board", "id": "\(board)", "attribute": "colour", "values": ["red"]}]},
              {"replica": "\(replica)", "seq": 3, "hlc": \(hlc + 2), "vector": {"\(replica)": 3},
               "operations": [{"op": "set", "entity": "Board", "id": "\(board)", "attribute": "title", "values": ["a", "b"]}]}
            ]}
            """
        let response = server.push(Data(body.utf8))
        #expect(response.status == .unprocessableContent, "\(response.text)")
        #expect(try server.serverVector() == VersionVector())
        #expect(try ServerFixture.entityRows(at: server.snapshotFile()).isEmpty)
    }

    /// Values of the wrong type are refused with 422 before anything is stored, and the message
    /// names the change set, operation, attribute, object and value.
    @Test(arguments: [
        ("points", "\"not a number\"", "to text 'not a number', but it holds an integer"),
        ("text", "null", "to NULL, but it is not optional"),
        ("weight", "{\"blob\": \"AQ==\"}", "to blob x'01', but it holds a number"),
    ])
    func valuesThatDoNotFitTheirColumnAre422AndStoreNothing(attribute: String, value: String, complaint: String) throws {
        let server = try ServerFixture()
        try server.registerSchema()
        let replica = UUID(), card = UUID()
        let hlc = (serverNow - 1000) << 16
        let body = """
            {"base": {}, "changeSets": [
              {"replica": "\(replica.uuidString)", "seq": 1, "hlc": \(hlc), "vector": {"\(replica.uuidString)": 1},
               "operations": [{"op": "create", "entity": "Card", "id": "\(card.uuidString)"},
                              {"op": "set", "entity": "Card", "id": "\(card.uuidString)", "attribute": "\(attribute)", "values": [\(value)]}]}
            ]}
            """
        let response = server.push(Data(body.utf8))
        #expect(response.status == .unprocessableContent, "\(response.text)")
        #expect(response.errorCode == "schema_mismatch")
        #expect(response.errorMessage == "change set \(Dot(replica: replica, seq: 1)), operation 1: sets Card.\(attribute) of \(card.uuidString) \(complaint)")
        #expect(try server.serverVector() == VersionVector())
        #expect(try ServerFixture.entityRows(at: server.snapshotFile()).isEmpty)
    }
}

extension HTTPResponse {
    func expectOK(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(status == .ok, "\(status): \(text)", sourceLocation: sourceLocation)
    }
}

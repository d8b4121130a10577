import Codecs
import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import Testing

/// The change-set batch format through SyncKit's own JSON code: byte for byte what the
/// `Codable` implementation wrote (so the protocol did not change), readable in any layout,
/// and every malformed batch refused with the path of what is wrong.
@Suite struct ChangeSetWireFormatTests {
    static let replica = "AAAAAAAA-0000-4000-8000-000000000001"
    static let object = "BBBBBBBB-0000-4000-8000-000000000002"

    // MARK: Same bytes as JSONEncoder

    @Test func randomBatchesAreByteIdenticalToJSONEncoderOutput() throws {
        for seed in UInt64(0)..<300 {
            var generator = RandomChangeSets(seed: seed)
            let (changeSets, base) = generator.changeSets()
            let data = try ChangeSetCoding.encode(changeSets, base: base)
            let reference = try ReferenceWireFormat.encode(changeSets, base: base)
            #expect(data == reference, "seed \(seed):\n\(String(decoding: data, as: UTF8.self))\n\(String(decoding: reference, as: UTF8.self))")
            let decoded = try ChangeSetCoding.decode(data)
            #expect(decoded.changeSets == changeSets, "seed \(seed)")
            #expect(decoded.base == base, "seed \(seed)")
            // Equal values could still differ in a real's sign of zero: the bytes settle it.
            #expect(try ChangeSetCoding.encode(decoded.changeSets, base: decoded.base) == data, "seed \(seed)")
        }
    }

    @Test func everyOperationKindRoundTrips() throws {
        let author = UUID(), other = UUID(), id = UUID(), target = UUID()
        let operations: [SyncKit.Operation] = [
            .create(entity: "Board", id: id),
            .set(entity: "Board", id: id, attribute: "title", values: [.null, .integer(.min), .integer(.max), .real(0.1), .real(-0.0), .real(.leastNonzeroMagnitude),
                                                                        .text("\"quoted\" \\ / \n é 😀"), .blob(Data([0, 1, 255]))]),
            .delete(entity: "Card", id: target, root: id),
            .link(entity: "Card", id: target, relationship: "board", target: id),
            .unlink(entity: "Card", id: target, relationship: "board", target: id, observed: [Dot(replica: author, seq: 1), Dot(replica: other, seq: .max)]),
            .unlink(entity: "Card", id: target, relationship: "tags", target: id, observed: []),
            .position(entity: "Board", id: id, relationship: "cards", member: target, key: "V"),
        ]
        let changeSet = ChangeSet(dot: Dot(replica: author, seq: 2), hlc: HLC(rawValue: .max), vector: VersionVector([author: 2, other: 5]), operations: operations)
        let decoded = try ChangeSetCoding.decode(try ChangeSetCoding.encode([changeSet], base: VersionVector([other: 5])))
        #expect(decoded.changeSets == [changeSet])
        #expect(decoded.base == VersionVector([other: 5]))
    }

    // MARK: Stored columns

    @Test func storedColumnsKeepTheFormatJSONEncoderGaveThem() throws {
        for seed in UInt64(0)..<100 {
            var generator = RandomChangeSets(seed: seed, replicaCount: 6)
            let operations = (0..<8).map { _ in generator.operation() }
            var writer = JSONWriter(escapingSlashes: true)
            try writer.writeOperations(operations)
            let encoder = ReferenceWireFormat.encoder(escapingSlashes: true)
            #expect(writer.data == (try encoder.encode(operations.map(ReferenceWireFormat.OperationObject.init))), "seed \(seed)")
            let vector = Dictionary(uniqueKeysWithValues: generator.replicas.map { ($0, UInt64.random(in: 1...UInt64.max, using: &generator.random)) })
            var vectorWriter = JSONWriter(escapingSlashes: true)
            vectorWriter.writeReplicaMap(vector)
            #expect(vectorWriter.data == (try encoder.encode(ReferenceWireFormat.map(vector))), "seed \(seed)")
        }
    }

    @Test func storedChangeSetsReadBackIncludingRowsJSONEncoderWrote() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("json-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let connection = try SQLiteConnection(path: path)
        try SyncFormatTable.migrate(on: connection)
        var generator = RandomChangeSets(seed: 42)
        let author = generator.replicas[0], other = generator.replicas[1]
        let changeSets = (1...20).map { seq in
            ChangeSet(dot: Dot(replica: author, seq: UInt64(seq)), hlc: HLC(rawValue: generator.random.next()),
                      vector: VersionVector([author: UInt64(seq), other: 3]), operations: (0..<5).map { _ in generator.operation() })
        }
        try SyncStateTable.initialize(replica: author, on: connection)
        let stored = try changeSets.map { changeSet in
            var stored = changeSet
            stored.authenticator = try ChangeSetTable.store(changeSet, status: .pending, on: connection)
            return stored
        }
        // A row as the Codable implementation stored it (its JSON has the same bytes, but it is
        // written here independently of JSONWriter).
        let old = ChangeSet(dot: Dot(replica: UUID(), seq: 1), hlc: HLC(rawValue: 5), vector: VersionVector(),
                            operations: [.set(entity: "A/B", id: UUID(), attribute: "x/y", values: [.text("a/b"), .real(1.5)])])
        let encoder = ReferenceWireFormat.encoder(escapingSlashes: true)
        try connection.run("INSERT INTO _sync_changeset (replica, seq, hlc, vector, operations, status) VALUES (?, 1, 5, ?, ?, 'pending')",
                           [old.dot.replica.storedValue, .text(String(decoding: try encoder.encode([old.dot.replica.uuidString: 1]), as: UTF8.self)),
                            .text(String(decoding: try encoder.encode(old.operations.map(ReferenceWireFormat.OperationObject.init)), as: UTF8.self))])
        var expected = old
        expected.vector = VersionVector([old.dot.replica: 1])
        for changeSet in stored + [expected] {
            let row = try #require(try connection.rows("SELECT replica, seq, hlc, vector, operations, authenticator FROM _sync_changeset WHERE replica = ? AND seq = ?",
                                                       changeSet.dot.values).first)
            #expect(try ChangeSetTable.decode(row) == changeSet)
            #expect(try ChangeSetTable.vector(of: changeSet.dot, on: connection) == changeSet.vector)
        }
    }

    @Test func aDamagedStoredRowIsReportedWithItsPath() throws {
        let row: [SQLValue] = [UUID(uuidString: ChangeSetWireFormatTests.replica)!.storedValue, .integer(1), .integer(5), .text("{}"),
                               .text(#"[{"op": "create", "entity": "Board", "id": "\#(ChangeSetWireFormatTests.object)"}, {"op": "create"}]"#)]
        let error = #expect(throws: SyncError.self) { try ChangeSetTable.decode(row) }
        #expect(error?.code == .notSyncable)
        #expect(error?.message.contains("operations[1]: a create operation needs 'entity'") == true, "\(error?.message ?? "")")
    }

    // MARK: Any layout of the same JSON

    @Test func batchesInAnyLayoutDecodeTheSame() throws {
        let (r, o) = (ChangeSetWireFormatTests.replica, ChangeSetWireFormatTests.object)
        // Reordered keys, whitespace everywhere, unknown keys at every level, escaped slashes and
        // \u escapes in keys and values, nulls for absent fields, a byte order mark.
        let json = """
            \u{feff}
            { "changeSets" : [ {
                  "vector" : { "\(r)" : 3 }, "comment": {"nested": [1, 2.5, "x", null, true]},
                  "operations" : [
                    { "values" : [ { "real" : 1E2 }, "a\\/b", null, -7 ], "id" : "\(o.lowercased())", "attribute" : "ti\\u0074le",
                      "op" : "set", "entity" : "Board", "root": null, "extra": {} },
                    { "\\u006fp" : "unlink", "entity" : "Card", "id" : "\(o)", "relationship" : "tags", "target" : "\(o)",
                      "observed" : [ { "seq" : 2, "replica" : "\(r)", "x": 0 } ] }
                  ],
                  "seq" : 3, "replica" : "\(r)", "hlc" : 99 } ],
              "version": 1,
              "base" : { "\(r)" : 2 } }

            """
        let decoded = try ChangeSetCoding.decode(Data(json.utf8))
        let replica = UUID(uuidString: r)!, id = UUID(uuidString: o)!
        #expect(decoded.base == VersionVector([replica: 2]))
        #expect(decoded.changeSets == [ChangeSet(
            dot: Dot(replica: replica, seq: 3), hlc: HLC(rawValue: 99), vector: VersionVector([replica: 3]),
            operations: [.set(entity: "Board", id: id, attribute: "title", values: [.real(100), .text("a/b"), .null, .integer(-7)]),
                         .unlink(entity: "Card", id: id, relationship: "tags", target: id, observed: [Dot(replica: replica, seq: 2)])])])
    }

    // MARK: Malformed batches

    static func batch(operations: String) -> String {
        #"{"base": {}, "changeSets": [{"replica": "\#(replica)", "seq": 1, "hlc": 5, "vector": {"\#(replica)": 1}, "operations": [\#(operations)]}]}"#
    }

    static func batch(changeSet fields: String) -> String {
        #"{"base": {}, "changeSets": [{"replica": "\#(replica)", \#(fields)}]}"#
    }

    static let set = #"{"op": "set", "entity": "Board", "id": "\#(object)", "attribute": "title", "values": "#

    /// A malformed batch and what its error must say (path first, then what is wrong).
    static let malformed: [(body: String, message: String)] = [
        ("", "top level: expected an object, found the end of the input (at byte 0)"),
        ("[]", "top level: expected an object, found an array"),
        (#"{"base": {}}"#, "top level: a batch needs 'changeSets'"),
        (#"{"base": {}, "changeSets": ["#, "changeSets[0]: expected an object, found the end of the input"),
        (#"{"base": {"x": 1}, "changeSets": []}"#, "base: the key 'x' is not a replica UUID"),
        (#"{"base": {}, "changeSets": []} x"#, "top level: expected the end of the document, found 'x' (at byte 31)"),
        (#"{"base": {}, "changeSets": [], "base": {}}"#, "top level: the key 'base' appears twice"),
        (batch(changeSet: #""seq": "1", "hlc": 5, "vector": {}, "operations": []"#), "changeSets[0].seq: expected an integer, found a string"),
        (batch(changeSet: #""seq": 0, "hlc": 5, "vector": {}, "operations": []"#), "changeSets[0].seq: seq must be at least 1"),
        (batch(changeSet: #""seq": 01, "hlc": 5, "vector": {}, "operations": []"#), "changeSets[0].seq: numbers must not have leading zeros"),
        (batch(changeSet: #""seq": -1, "hlc": 5, "vector": {}, "operations": []"#), "changeSets[0].seq: expected an unsigned integer, found a negative number"),
        (batch(changeSet: #""seq": 1, "hlc": 18446744073709551616, "vector": {}, "operations": []"#),
         "changeSets[0].hlc: 18446744073709551616 is out of the range of an unsigned 64-bit integer"),
        (batch(changeSet: #""seq": 2, "hlc": 5, "vector": {"\#(replica)": 1}, "operations": []"#),
         "changeSets[0].vector: gives the change set's own replica 1, not its seq 2"),
        (batch(changeSet: #""seq": 1, "hlc": 5, "operations": []"#), "changeSets[0]: a change set needs 'vector'"),
        (#"{"base": {}, "changeSets": [{"replica": "nope", "seq": 1, "hlc": 1, "vector": {}, "operations": []}]}"#,
         "changeSets[0].replica: 'nope' is not a UUID"),
        (batch(operations: #"{"op": "create", "entity": "Board", "id": "not-a-uuid"}"#), "changeSets[0].operations[0].id: 'not-a-uuid' is not a UUID"),
        (batch(operations: #"{"op": "explode", "entity": "Board", "id": "\#(object)"}"#),
         "changeSets[0].operations[0].op: 'explode' is not one of create, set, delete, link, unlink, position"),
        (batch(operations: #"{"op": "set", "entity": "Board", "id": "\#(object)", "attribute": "title"}"#),
         "changeSets[0].operations[0]: a set operation needs 'values'"),
        (batch(operations: #"{"op": "link", "entity": "Card", "id": "\#(object)", "relationship": "board"}"#),
         "changeSets[0].operations[0]: a link operation needs 'target'"),
        (batch(operations: #"{"op": "position", "entity": "Board", "id": "\#(object)", "relationship": "cards", "member": "\#(object)", "key": ""}"#),
         "changeSets[0].operations[0]: a position operation needs a non-empty 'key'"),
        (batch(operations: #"{"op": "create", "entity": "Bo\qard", "id": "\#(object)"}"#), #"changeSets[0].operations[0].entity: '\q' is not a valid escape"#),
        (batch(operations: #"{"op": "create", "op": "set", "entity": "Board", "id": "\#(object)"}"#), "changeSets[0].operations[0]: the key 'op' appears twice"),
        (batch(operations: set + #"[1, 2, true]}"#), "changeSets[0].operations[0].values[2]: expected null, an integer, a string"),
        (batch(operations: set + #"[9223372036854775808]}"#),
         "changeSets[0].operations[0].values[0]: 9223372036854775808 is out of the range of a signed 64-bit integer"),
        (batch(operations: set + #"[{"blob": "!!"}]}"#), "changeSets[0].operations[0].values[0].blob: the blob is not base64"),
        (batch(operations: set + #"["\ud800"]}"#), #"changeSets[0].operations[0].values[0]: lone surrogate \uD800"#),
        (batch(operations: set + #"[1]},]"#), "changeSets[0].operations[1]: expected an object, found ']'"),
        (batch(operations: #"{"op": "unlink", "entity": "Card", "id": "\#(object)", "relationship": "tags", "target": "\#(object)", "observed": [{"replica": "\#(replica)", "seq": 1}, {"replica": "x", "seq": 1}]}"#),
         "changeSets[0].operations[0].observed[1].replica: 'x' is not a UUID"),
    ]

    @Test(arguments: malformed)
    func malformedBatchesAreRefusedNamingThePath(_ body: String, _ message: String) {
        let error = #expect(throws: SyncError.self) { try ChangeSetCoding.decode(Data(body.utf8)) }
        #expect(error?.code == .malformedChangeSet)
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
    }

    @Test func invalidUTF8InABatchIsRefused() {
        var body = Data(ChangeSetWireFormatTests.batch(operations: #"{"op": "create", "entity": "Bo"#).utf8)
        body.append(0xFF)
        body.append(Data(#"ard", "id": "\#(ChangeSetWireFormatTests.object)"}]}]}"#.utf8))
        let error = #expect(throws: SyncError.self) { try ChangeSetCoding.decode(body) }
        #expect(error?.message.contains("changeSets[0].operations[0].entity: invalid UTF-8") == true, "\(error?.message ?? "")")
    }
}

/// Seqs the wire format allows but a store cannot hold are refused by the merge itself, on the
/// client as on the server.
@Suite struct StorableRangeTests {
    @Test(arguments: [(UInt64(Int64.max) + 1, UInt64(1)), (UInt64(1), UInt64.max)])
    func aSeqAboveInt64MaxIsAMalformedChangeSet(seq: UInt64, vectorEntry: UInt64) throws {
        let replica = try TestReplica()
        let author = UUID()
        let changeSet = ChangeSet(
            dot: Dot(replica: author, seq: seq), hlc: HLC(rawValue: 1 << 20),
            vector: VersionVector([author: seq, UUID(): vectorEntry]), operations: [])
        let error = #expect(throws: SyncError.self) { try replica.replica.apply([changeSet]) }
        #expect(error?.code == .malformedChangeSet)
        #expect(try replica.replica.versionVector() == VersionVector())
    }

    @Test func aNegativeSeqInADamagedStoreIsReported() throws {
        let replica = try TestReplica()
        let author = UUID()
        try SQLiteConnection(path: replica.path).run("INSERT INTO _sync_vector (replica, seq) VALUES (?, -5)", [author.storedValue])
        let error = #expect(throws: SyncError.self) { try replica.replica.versionVector() }
        #expect(error?.code == .notSyncable)
        #expect(error?.message.contains(author.storageText) == true, "\(error?.message ?? "")")
    }
}

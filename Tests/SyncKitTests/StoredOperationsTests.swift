import Codecs
import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import Testing

/// The blob form of stored change sets: every operation and value kind comes back as it went
/// in, rows whose operations are JSON text still read, and a damaged blob is refused
/// with the change set, the operation and the byte offset.
@Suite struct StoredOperationsTests {
    static func roundTrip(_ operations: [SyncKit.Operation]) throws -> [SyncKit.Operation] {
        let writer = try StoredOperations.encode(operations)
        return try writer.withBytes { try StoredOperations.decode($0) }
    }

    static func encoded(_ operations: [SyncKit.Operation]) throws -> [UInt8] {
        let writer = try StoredOperations.encode(operations)
        return writer.withBytes { Array($0) }
    }

    static func decode(_ bytes: [UInt8]) throws -> [SyncKit.Operation] {
        try bytes.withUnsafeBytes { try StoredOperations.decode($0) }
    }

    // MARK: Round trips

    @Test func everyOperationAndValueKindRoundTrips() throws {
        let id = UUID(), other = UUID(), replica = UUID()
        let operations: [SyncKit.Operation] = [
            .create(entity: "Board", id: id),
            .set(entity: "Board", id: id, attribute: "title", values: [
                .null, .integer(0), .integer(-1), .integer(1), .integer(63), .integer(-64), .integer(64), .integer(.min), .integer(.max),
                .real(0), .real(-0.0), .real(0.1), .real(.leastNonzeroMagnitude), .real(-.greatestFiniteMagnitude),
                .text(""), .text("\"quoted\" \\ / \n \u{0} é 日本語 😀 👩‍👩‍👧"), .text(String(repeating: "long ", count: 100)),
                .blob(Data()), .blob(Data([0, 1, 127, 128, 255])), .blob(Data(repeating: 0xAB, count: 300)),
            ]),
            .set(entity: "Board", id: id, attribute: "empty", values: []),
            .link(entity: "Board", id: id, relationship: "owner", target: other),
            .unlink(entity: "Card", id: other, relationship: "board", target: id,
                    observed: [Dot(replica: replica, seq: 1), Dot(replica: id, seq: .max)]),
            .unlink(entity: "Card", id: other, relationship: "tags", target: id, observed: []),
            .position(entity: "Board", id: id, relationship: "cards", member: other, key: "Vx"),
            .delete(entity: "Card", id: other, root: other),
            .delete(entity: "Card", id: id, root: other),
            // The same id under another entity is another object: not the "same object" shortcut.
            .create(entity: "Card", id: id),
        ]
        let decoded = try StoredOperationsTests.roundTrip(operations)
        #expect(decoded == operations)
        // Equal values could still differ in a real's sign of zero: compare the bits.
        guard case .set(_, _, _, let values) = decoded[1], case .real(let zero) = values[10] else {
            Issue.record("the second operation is not the set written")
            return
        }
        #expect(zero.bitPattern == (-0.0 as Double).bitPattern)
    }

    @Test func randomOperationsRoundTrip() throws {
        for seed in UInt64(0)..<200 {
            var generator = RandomChangeSets(seed: seed)
            // Random names: well over the names compared one by one, so the dictionary is used too.
            let operations = (0..<Int.random(in: 0...60, using: &generator.random)).map { _ in generator.operation() }
            #expect(try StoredOperationsTests.roundTrip(operations) == operations, "seed \(seed)")
        }
    }

    @Test func anInsertIsAFractionOfItsJSON() throws {
        var operations: [SyncKit.Operation] = []
        for _ in 0..<100 {
            let id = UUID()
            operations.append(.create(entity: "Person", id: id))
            operations.append(.set(entity: "Person", id: id, attribute: "name", values: [.text("Person 12345")]))
            operations.append(.set(entity: "Person", id: id, attribute: "age", values: [.integer(42)]))
            operations.append(.set(entity: "Person", id: id, attribute: "score", values: [.real(0.75)]))
            operations.append(.link(entity: "Person", id: id, relationship: "place", target: UUID()))
        }
        var json = JSONWriter(escapingSlashes: true)
        try json.writeOperations(operations)
        let blob = try StoredOperationsTests.encoded(operations)
        #expect(blob.count * 4 < json.count, "\(blob.count) bytes against \(json.count) of JSON")
        #expect(try StoredOperationsTests.decode(blob) == operations)
    }

    @Test func nonFiniteRealsAreRefusedAsInJSON() {
        for value in [Double.nan, .infinity, -.infinity] {
            #expect(throws: EncodingError.self) {
                _ = try StoredOperations.encode([.set(entity: "A", id: UUID(), attribute: "x", values: [.real(value)])])
            }
        }
    }

    // MARK: Stored rows

    static func withChangeSetTable(_ body: (SQLiteConnection) throws -> Void) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("stored-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let connection = try SQLiteConnection(path: path)
        try SyncFormatTable.migrate(on: connection)
        try SyncStateTable.initialize(replica: UUID(), on: connection)
        try body(connection)
    }

    static func row(_ dot: Dot, on connection: SQLiteConnection) throws -> [SQLValue] {
        try #require(try connection.rows("SELECT replica, seq, hlc, vector, operations, authenticator FROM _sync_changeset WHERE replica = ? AND seq = ?",
                                         dot.values).first)
    }

    @Test func changeSetsAreStoredAsBlobsAndReadBack() throws {
        try StoredOperationsTests.withChangeSetTable { connection in
            var generator = RandomChangeSets(seed: 7)
            let author = generator.replicas[0]
            let changeSet = ChangeSet(dot: Dot(replica: author, seq: 1), hlc: HLC(rawValue: 99), vector: VersionVector([author: 1]),
                                      operations: (0..<30).map { _ in generator.operation() })
            var stored = changeSet
            stored.authenticator = try ChangeSetTable.store(changeSet, status: .pending, on: connection)
            #expect(try connection.rows("SELECT typeof(operations) FROM _sync_changeset").first?.first == .text("blob"))
            #expect(try ChangeSetTable.decode(StoredOperationsTests.row(changeSet.dot, on: connection)) == stored)
        }
    }

    /// A store file whose change sets hold their operations as JSON text: those rows read back
    /// through the public API, next to blob rows, and its change sets go out unchanged.
    @Test func aStoreWithJSONRowsStillWorks() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("old-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try ObjectStore(path: path, entities: [])
        let replica = try SyncReplica(store: store)
        let id = UUID()
        let old = ChangeSet(dot: Dot(replica: replica.replicaID, seq: 1), hlc: HLC(rawValue: 5), vector: VersionVector([replica.replicaID: 1]),
                            operations: [.set(entity: "A/B", id: id, attribute: "x/y", values: [.text("a/b"), .real(1.5), .integer(-3), .null])])
        try replica.withConnection { connection in
            // The operations as JSON text, slashes escaped.
            var json = JSONWriter(escapingSlashes: true)
            try json.writeOperations(old.operations)
            try connection.run("INSERT INTO _sync_changeset (replica, seq, hlc, vector, operations, status) VALUES (?, 1, 5, ?, ?, 'pending')",
                               [old.dot.replica.storedValue, .text("{\"\(old.dot.replica.storageText)\":1}"), .text(json.string)])
            #expect(try connection.rows("SELECT typeof(operations) FROM _sync_changeset").first?.first == .text("text"))
            let new = ChangeSet(dot: Dot(replica: replica.replicaID, seq: 2), hlc: HLC(rawValue: 6), vector: VersionVector([replica.replicaID: 2]),
                                operations: [.delete(entity: "A/B", id: id, root: id)])
            try ChangeSetTable.store(new, status: .pending, on: connection)
        }
        let pending = try replica.localChangeSets(status: .pending)
        #expect(pending.map(\.dot.seq) == [1, 2])
        #expect(pending.first == old)
        #expect(try replica.changeSets(missingFrom: VersionVector()) == pending)
        #expect(try replica.withConnection { try ChangeSetTable.changeSet(old.dot, on: $0) } == old)
    }

    // MARK: Damaged blobs

    /// What reading `bytes` as the operations of a stored change set reports.
    static func damage(_ bytes: [UInt8]) throws -> String {
        let row: [SQLValue] = [UUID(uuidString: ChangeSetWireFormatTests.replica)!.storedValue, .integer(3), .integer(5), .text("{}"), .blob(Data(bytes))]
        let error = #expect(throws: SyncError.self) { try ChangeSetTable.decode(row) }
        #expect(error?.code == .notSyncable)
        return error?.message ?? ""
    }

    @Test func aDamagedBlobIsReportedWithChangeSetOperationAndOffset() throws {
        let id = UUID()
        let valid = try StoredOperationsTests.encoded([
            .create(entity: "Board", id: id),
            .set(entity: "Board", id: id, attribute: "title", values: [.text("hello"), .integer(7)]),
        ])
        // version, count, [create header, name 0 defined "Board", 16-byte id], [set header (same object), name 1 defined "title", 2 values ...]
        let setStart = 1 + 1 + 1 + 1 + 1 + 5 + 16
        #expect(valid[setStart] == 0x09)
        #expect(try StoredOperationsTests.decode(valid).count == 2)
        let prefix = "the stored change set \(ChangeSetWireFormatTests.replica):3 is damaged: operations blob, "

        let truncated = try StoredOperationsTests.damage(Array(valid.dropLast(3)))
        #expect(truncated.hasPrefix(prefix), "\(truncated)")
        #expect(truncated.hasSuffix("operation 1, value 0: 5 bytes cannot fit in the 4 bytes left at byte 36"), "\(truncated)")

        var badHeader = valid
        badHeader[setStart] = 0x07
        #expect(try StoredOperationsTests.damage(badHeader) == prefix + "operation 1: the header byte 0x7 is not a known operation at byte \(setStart)")

        var rootFlagOnSet = valid
        rootFlagOnSet[setStart] = 0x19
        #expect(try StoredOperationsTests.damage(rootFlagOnSet).contains("operation 1: the header byte 0x19 is not a known operation"))

        var badTag = valid
        let firstValue = setStart + 1 + 1 + 6 + 1
        #expect(badTag[firstValue] == 3)
        badTag[firstValue] = 9
        #expect(try StoredOperationsTests.damage(badTag)
                == prefix + "operation 1, value 0: the value tag 9 is not one of null 0, integer 1, real 2, text 3, blob 4 at byte \(firstValue)")

        var undefinedName = valid
        undefinedName[setStart + 1] = 5
        #expect(try StoredOperationsTests.damage(undefinedName) == prefix + "operation 1: refers to name 5, but only 1 are defined at byte \(setStart + 1)")

        var sameObjectFirst = valid
        sameObjectFirst[2] = 0x08
        #expect(try StoredOperationsTests.damage(sameObjectFirst).contains("operation 0: refers to the object of the operation before, but it is the first at byte 2"))

        var badUTF8 = valid
        badUTF8[setStart + 3] = 0xFF
        #expect(try StoredOperationsTests.damage(badUTF8) == prefix + "operation 1: a string is not valid UTF-8 at byte \(setStart + 2)")

        #expect(try StoredOperationsTests.damage(valid + [0]) == prefix + "1 bytes follow the last operation at byte \(valid.count)")

        var hugeCount = valid
        hugeCount[1] = 0x7F
        #expect(try StoredOperationsTests.damage(hugeCount).contains("127 operations cannot fit in the"))

        var newVersion = valid
        newVersion[0] = 2
        #expect(try StoredOperationsTests.damage(newVersion) == prefix + "format version 2 is not one this version reads (1) at byte 0")

        #expect(try StoredOperationsTests.damage([]) == prefix + "unexpected end of data at byte 0")
        #expect(try StoredOperationsTests.damage([1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F])
                == prefix + "a varint is longer than 64 bits at byte 1")
    }
}

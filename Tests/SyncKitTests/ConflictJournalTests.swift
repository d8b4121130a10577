import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import Testing

/// The packed conflict journal: what goes in comes out, numbering, clearing part of a row,
/// damaged rows, and stores whose journal was written one row per entry.
@Suite struct ConflictJournalTests {
    /// A connection to a fresh file with the sync tables.
    private final class Database {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString).sqlite").path
        let connection: SQLiteConnection

        init() throws {
            connection = try SQLiteConnection(path: path)
            _ = try SyncTables.install(on: connection, newReplicaID: UUID())
        }

        deinit {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
    }

    private let replicaA = UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!
    private let replicaB = UUID(uuidString: "00000000-0000-0000-0000-00000000000B")!
    private let object = UUID(uuidString: "12345678-9ABC-DEF0-1234-56789ABCDEF0")!

    private func stamp(_ replica: UUID, _ seq: UInt64, _ hlc: UInt64) -> Stamp {
        Stamp(hlc: HLC(rawValue: hlc), replica: replica, seq: seq)
    }

    private var cause: Dot { Dot(replica: replicaA, seq: 7) }
    private let values: [SQLValue] = [.null, .integer(-42), .integer(.max), .real(2.5), .text("quote \" slash / é 🙂"), .blob(Data([0, 1, 255]))]

    /// A batch of three entries caused by A:7 (``expectedSample`` is what they read back as).
    private func sampleBatch() throws -> JournalBatch {
        var batch = JournalBatch()
        try batch.append(.attribute, entity: "Person", object: object, property: "name",
                     winner: JournalSide(value: .values([.text("Ann")]), stamp: stamp(replicaB, 3, 1_700_000_000_123)),
                     loser: JournalSide(value: .values(values), stamp: stamp(replicaA, 7, 1_700_000_000_100)),
                     cause: cause, detail: .concurrentAttributeWrites)
        try batch.append(.voidedDelete, entity: "Team", object: object, property: nil, winner: nil,
                     loser: JournalSide(value: .none, stamp: stamp(replicaA, 7, 9)), cause: cause, detail: .text("the delete of Team is void"))
        try batch.append(.toOne, entity: "Member", object: object, property: "team",
                     winner: JournalSide(value: .json("\"\(replicaB.uuidString)\""), stamp: stamp(replicaB, .max, .max)),
                     loser: JournalSide(value: .json("\"x\""), stamp: stamp(replicaA, 1 << 40, 0)), cause: cause, detail: .text("set to different targets"))
        return batch
    }

    /// The entries of ``sampleBatch()``, numbered from 1.
    private var expectedSample: [ConflictEntry] {
        [
            ConflictEntry(number: 1, kind: .attribute, entity: "Person", objectID: object, property: "name",
                          winner: .init(value: "Ann", dot: Dot(replica: replicaB, seq: 3), hlc: HLC(rawValue: 1_700_000_000_123)),
                          loser: .init(value: ConflictEntry.Value(columns: values), dot: Dot(replica: replicaA, seq: 7), hlc: HLC(rawValue: 1_700_000_000_100)),
                          cause: cause, detail: "concurrent writes to Person.name: the larger (HLC, replica) won"),
            ConflictEntry(number: 2, kind: .voidedDelete, entity: "Team", objectID: object, property: nil, winner: nil,
                          loser: .init(value: nil, dot: Dot(replica: replicaA, seq: 7), hlc: HLC(rawValue: 9)),
                          cause: cause, detail: "the delete of Team is void"),
            ConflictEntry(number: 3, kind: .toOne, entity: "Member", objectID: object, property: "team",
                          winner: .init(value: .string(replicaB.uuidString), dot: Dot(replica: replicaB, seq: .max), hlc: HLC(rawValue: .max)),
                          loser: .init(value: "x", dot: Dot(replica: replicaA, seq: 1 << 40), hlc: HLC(rawValue: 0)),
                          cause: cause, detail: "set to different targets"),
        ]
    }

    @Test func entriesReadBackAsWrittenAndNumberOnAcrossRows() throws {
        let database = try Database()
        let expected = expectedSample
        try ConflictJournal.write(try sampleBatch(), on: database.connection)
        try ConflictJournal.write(try sampleBatch(), on: database.connection)
        let entries = try ConflictJournal.entries(on: database.connection)
        let renumbered = expected.map { entry -> ConflictEntry in
            var later = entry
            later.number += 3
            return later
        }
        #expect(entries == expected + renumbered)
        #expect(try ConflictJournal.entries(causedBy: Dot(replica: replicaA, seq: 7), on: database.connection).count == 6)
        #expect(try ConflictJournal.entries(causedBy: Dot(replica: replicaA, seq: 8), on: database.connection).isEmpty)
        #expect(try ConflictJournal.lastNumber(on: database.connection) == 6)
        #expect(try ConflictJournal.count(after: 0, on: database.connection) == 6)
        #expect(try ConflictJournal.count(after: 4, on: database.connection) == 2)
        // An empty batch writes nothing and uses no number.
        try ConflictJournal.write(JournalBatch(), on: database.connection)
        #expect(try ConflictJournal.lastNumber(on: database.connection) == 6)
    }

    /// A side taken from a row's columns reads back as the side of those values.
    @Test func columnsOfARowReadBackAsTheirValues() throws {
        let database = try Database()
        let row: [SQLValue] = [.text("skipped"), .real(1.5), .null, .integer(3)]
        for value in [JournalSide.Value.columns(row, [1, 3]), .values([.real(1.5), .integer(3)])] {
            var batch = JournalBatch()
            try batch.append(.attribute, entity: "Spot", object: object, property: "location", winner: nil,
                             loser: JournalSide(value: value, stamp: stamp(replicaA, 7, 1)), cause: cause, detail: .concurrentAttributeWrites)
            try ConflictJournal.write(batch, on: database.connection)
        }
        let entries = try ConflictJournal.entries(on: database.connection)
        #expect(entries.count == 2)
        #expect(entries.first?.loser.value == [.object(["real": .number(1.5)]), 3])
        #expect(entries.first?.loser.value?.jsonText == #"[{"real":1.5},3]"#)
        #expect(entries.first?.loser == entries.last?.loser)
    }

    @Test func clearingPartOfARowKeepsItsLaterEntriesAndNumbersAreNeverReused() throws {
        let database = try Database()
        let expected = expectedSample
        try ConflictJournal.write(try sampleBatch(), on: database.connection)
        try ConflictJournal.write(try sampleBatch(), on: database.connection)
        try ConflictJournal.clear(through: 2, on: database.connection)
        let kept = try ConflictJournal.entries(on: database.connection)
        #expect(kept.map(\.number) == [3, 4, 5, 6])
        #expect(kept.first == expected[2])
        #expect(try ConflictJournal.count(after: 0, on: database.connection) == 4)
        #expect(try ConflictJournal.count(after: 4, on: database.connection) == 2)
        try ConflictJournal.clear(through: 4, on: database.connection)
        #expect(try ConflictJournal.entries(on: database.connection).map(\.number) == [5, 6])
        try ConflictJournal.clear(through: nil, on: database.connection)
        #expect(try ConflictJournal.entries(on: database.connection).isEmpty)
        #expect(try ConflictJournal.lastNumber(on: database.connection) == 0)
        try ConflictJournal.write(try sampleBatch(), on: database.connection)
        #expect(try ConflictJournal.entries(on: database.connection).map(\.number) == [7, 8, 9])
    }

    @Test(arguments: [
        ("truncated", "24 bytes cannot fit in the 21 bytes left at byte 364"),
        ("version", "format version 9"),
        ("kind", "200 is not a kind of conflict"),
        ("extra entry count", "holds 3 entries, not 4"),
    ])
    func damagedRowsAreReportedWithTheirNumbers(damage: String, reason: String) throws {
        func corrupt(_ bytes: [UInt8]) -> [UInt8] {
            switch damage {
            case "truncated": Array(bytes.dropLast(3))
            case "version": [9] + bytes.dropFirst()
            case "kind": [bytes[0], 200] + bytes.dropFirst(2)
            default: bytes
            }
        }
        let database = try Database()
        let bytes = [UInt8](try sampleBatch().data)
        let count = damage == "extra entry count" ? 4 : 3
        try database.connection.run("INSERT INTO _sync_conflict (first, count, cause_replica, cause_seq, entries) VALUES (1, ?, ?, 7, ?)",
                                    [.integer(Int64(count)), replicaA.storedValue, .blob(Data(corrupt(bytes)))])
        let error = try #require(throws: SyncError.self) { try ConflictJournal.entries(on: database.connection) }
        #expect(error.code == .notSyncable)
        #expect(error.message.contains("conflict journal entries 1...\(count) are damaged"), "\(error)")
        #expect(error.message.contains(reason), "\(damage): \(error)")
    }

    /// A store may keep its journal as one row per entry, in `_sync_journal`.
    @Test func aJournalOfOneRowPerEntryIsMovedIntoPackedRows() throws {
        let database = try Database()
        let connection = database.connection
        // Such stores predate the format version too: they open as version 0.
        try connection.execute("DROP TABLE _sync_format")
        try connection.execute("""
            CREATE TABLE _sync_journal (number INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL,
                entity TEXT NOT NULL, object TEXT NOT NULL, property TEXT, winner TEXT, loser TEXT NOT NULL,
                cause_replica TEXT NOT NULL, cause_seq INTEGER NOT NULL, detail TEXT NOT NULL)
            """)
        func side(_ replica: UUID, _ seq: Int, _ hlc: Int, _ value: String?) -> String {
            let valuePart = value.map { ",\"value\":\(String(data: try! JSONEncoder().encode($0), encoding: .utf8)!)" } ?? ""
            return "{\"dot\":{\"replica\":\"\(replica.uuidString)\",\"seq\":\(seq)},\"hlc\":\(hlc)\(valuePart)}"
        }
        let insert = "INSERT INTO _sync_journal (number, kind, entity, object, property, winner, loser, cause_replica, cause_seq, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        // Entries 2 and 3 share a cause; 5 has another; 1 and 4 were cleared; 6 was used and cleared too.
        for (number, cause, winner) in [(2, 7, side(replicaB, 3, 50, "\"Ann\"")), (3, 7, nil), (5, 8, side(replicaB, 4, 60, nil)), (6, 9, nil)] {
            try connection.run(insert, [.integer(Int64(number)), .text(number == 3 ? "voided_delete" : "attribute"), .text("Person"),
                                        .text(object.uuidString), number == 3 ? .null : .text("name"), winner.map(SQLValue.text) ?? .null,
                                        .text(side(replicaA, cause, 40, "\"Bo\\\\/\"")), .text(replicaA.uuidString), .integer(Int64(cause)),
                                        .text("entry \(number)")])
        }
        try connection.run("DELETE FROM _sync_journal WHERE number = 6")

        _ = try SyncTables.install(on: connection, newReplicaID: UUID())
        #expect(try connection.rows("SELECT 1 FROM sqlite_master WHERE name = '_sync_journal'").isEmpty)
        let entries = try ConflictJournal.entries(on: connection)
        #expect(entries.map(\.number) == [2, 3, 5])
        #expect(entries.map(\.kind) == [.attribute, .voidedDelete, .attribute])
        #expect(entries.map(\.detail) == ["entry 2", "entry 3", "entry 5"])
        #expect(entries[0].winner == ConflictEntry.Side(value: "Ann", dot: Dot(replica: replicaB, seq: 3), hlc: HLC(rawValue: 50)))
        #expect(entries[1].winner == nil && entries[1].property == nil)
        #expect(entries[2].loser == ConflictEntry.Side(value: "Bo\\/", dot: Dot(replica: replicaA, seq: 8), hlc: HLC(rawValue: 40)))
        #expect(entries.map(\.cause.seq) == [7, 7, 8])
        #expect(try connection.rows("SELECT count(*) FROM _sync_conflict").first?.first == .integer(2))
        // Number 6 was handed out before: the next entry is 7.
        try ConflictJournal.write(try sampleBatch(), on: connection)
        #expect(try ConflictJournal.entries(on: connection).map(\.number) == [2, 3, 5, 7, 8, 9])
    }
}

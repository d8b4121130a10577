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
        ("truncated", "24 bytes cannot fit in the 21 bytes left at byte"),
        ("version", "format version 9 is neither 1 nor 2"),
        ("kind", "200 is not a kind of conflict"),
        ("name", "refers to name 5, but the row names 5"),
        ("replica", "refers to replica 7, but the row names 2"),
        ("extra entry count", "holds 3 entries, not 4"),
    ])
    func damagedRowsAreReportedWithTheirNumbers(damage: String, reason: String) throws {
        let bytes = [UInt8](try sampleBatch().data)
        // The header: version, cause HLC, five names (Person, name, Team, Member, team), two
        // replicas (B, and A for the sides of A that are not the cause's: another HLC, another seq).
        let entriesStart = 1 + 8 + 1 + [6, 4, 4, 6, 4].reduce(0) { $0 + 1 + $1 } + 1 + 32
        func corrupt(_ bytes: [UInt8]) -> [UInt8] {
            var damaged = bytes
            switch damage {
            case "truncated": damaged.removeLast(3)
            case "version": damaged[0] = 9
            case "kind": damaged[entriesStart] = 200
            case "name": damaged[entriesStart + 1] = 5
            case "replica": damaged[entriesStart + 3] = 9
            default: break
            }
            return damaged
        }
        let database = try Database()
        let count = damage == "extra entry count" ? 4 : 3
        try database.connection.run("INSERT INTO _sync_conflict (first, count, cause_replica, cause_seq, entries) VALUES (1, ?, ?, 7, ?)",
                                    [.integer(Int64(count)), replicaA.storedValue, .blob(Data(corrupt(bytes)))])
        let error = try #require(throws: SyncError.self) { try ConflictJournal.entries(on: database.connection) }
        #expect(error.code == .notSyncable)
        #expect(error.message.contains("conflict journal entries 1...\(count) are damaged"), "\(error)")
        #expect(error.message.contains(reason), "\(damage): \(error)")
    }

    /// A row in the first format, as releases before the second wrote it (three entries caused
    /// by A:7: an attribute conflict with five columns, a voided delete, a to-one conflict).
    private static let version1RowHex =
        "010106506572736f6e123456789abcdef0123456789abcdef001046e616d65010000000000000000000000000000000b037b68e5cf8b01000001010303416e6e"
        + "0000000000000000000000000000000a076468e5cf8b01000001050001530200000000000004400302c3a9040200ff0107045465616d123456789abcdef01234"
        + "56789abcdef000000000000000000000000000000000000a07090000000000000000001a7468652064656c657465206f66205465616d20697320766f696403"
        + "064d656d626572123456789abcdef0123456789abcdef001047465616d010000000000000000000000000000000bac0205000000000000000203227822000000"
        + "0000000000000000000000000a808080808020000000000000000002046e756c6c001873657420746f20646966666572656e742074617267657473"

    /// The bytes of ``version1RowHex``.
    static var version1Row: Data {
        let hex = Array(version1RowHex.utf8)
        return Data(stride(from: 0, to: hex.count, by: 2).map { UInt8(String(decoding: hex[$0..<$0 + 2], as: UTF8.self), radix: 16)! })
    }

    @Test func rowsOfTheFirstFormatAreStillReadAndCut() throws {
        let database = try Database()
        try database.connection.run("INSERT INTO _sync_conflict (first, count, cause_replica, cause_seq, entries) VALUES (1, 3, ?, 7, ?)",
                                    [replicaA.storedValue, .blob(ConflictJournalTests.version1Row)])
        try SyncStateTable.set(.journalNext, to: 4, on: database.connection)
        let entries = try ConflictJournal.entries(on: database.connection)
        #expect(entries.map(\.kind) == [.attribute, .voidedDelete, .toOne])
        #expect(entries[0].winner == .init(value: "Ann", dot: Dot(replica: replicaB, seq: 3), hlc: HLC(rawValue: 1_700_000_000_123)))
        #expect(entries[0].loser == .init(value: ConflictEntry.Value(columns: [.null, .integer(-42), .real(2.5), .text("é"), .blob(Data([0, 255]))]),
                                          dot: cause, hlc: HLC(rawValue: 1_700_000_000_100)))
        #expect(entries[0].detail == "concurrent writes to Person.name: the larger (HLC, replica) won")
        #expect(entries[1] == ConflictEntry(number: 2, kind: .voidedDelete, entity: "Team", objectID: object, property: nil, winner: nil,
                                            loser: .init(value: nil, dot: cause, hlc: HLC(rawValue: 9)), cause: cause,
                                            detail: "the delete of Team is void"))
        #expect(entries[2].winner == .init(value: "x", dot: Dot(replica: replicaB, seq: 300), hlc: HLC(rawValue: 5)))
        #expect(entries[2].loser == .init(value: .null, dot: Dot(replica: replicaA, seq: 1 << 40), hlc: HLC(rawValue: 0)))
        // Cutting off its first entry keeps the row in its format; new entries go into rows of the second.
        try ConflictJournal.clear(through: 1, on: database.connection)
        #expect(try ConflictJournal.entries(on: database.connection) == Array(entries.dropFirst()))
        #expect(try database.connection.rows("SELECT substr(entries, 1, 1) FROM _sync_conflict").first?.first == .blob(Data([1])))
        try ConflictJournal.write(try sampleBatch(), on: database.connection)
        #expect(try ConflictJournal.entries(on: database.connection).map(\.number) == [2, 3, 4, 5, 6])
    }

    /// A stale write that loses is the most frequent entry: its names and replicas are in the
    /// row's header once, and its loser, the cause, has no stamp of its own.
    @Test func aLosingWriteOfTheCauseTakesOnlyItsObjectStampAndValues() throws {
        var batch = JournalBatch()
        let entries = 1_000
        for index in 0..<entries {
            try batch.append(.attribute, entity: "Person", object: UUID(), property: "age",
                             winner: JournalSide(value: .values([.integer(40)]), stamp: stamp(replicaB, 300, 1_700_000_000_000)),
                             loser: JournalSide(value: .values([.integer(Int64(index % 50))]), stamp: stamp(replicaA, 7, 1_600_000_000_000)),
                             cause: cause, detail: .concurrentAttributeWrites)
        }
        let data = batch.data
        let header = 1 + 8 + 1 + (1 + 6) + (1 + 3) + 1 + 16
        // Code, entity, property, winner and loser references: one byte each; the object; the
        // winner's seq (2 bytes), HLC and value (tag, SQL tag, varint); the loser's value.
        let entry = 5 + 16 + (2 + 8 + 3) + 3
        #expect(data.count == header + entries * entry)
        let decoded = try data.withUnsafeBytes { try JournalBatch.decode($0, first: 1, count: Int64(entries), cause: cause) }
        #expect(decoded.entries.last?.entry.loser == .init(value: .integer(Int64((entries - 1) % 50)), dot: cause, hlc: HLC(rawValue: 1_600_000_000_000)))
        #expect(decoded.entries.last?.entry.winner == .init(value: 40, dot: Dot(replica: replicaB, seq: 300), hlc: HLC(rawValue: 1_700_000_000_000)))
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

import Codecs
import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import TestSupport
import Testing

/// The encoding of an object's attribute stamps (`_sync_field_stamps.stamps`).
@Suite struct FieldStampTableTests {
    static let replicas = [UUID(uuidString: "00000000-0000-0000-0000-0000000000A1")!, UUID(uuidString: "00000000-0000-0000-0000-0000000000B2")!]

    static func stamp(_ hlc: UInt64, _ replica: Int, _ seq: UInt64) -> Stamp {
        Stamp(hlc: HLC(rawValue: hlc), replica: replicas[replica], seq: seq)
    }

    @Test func stampsReadBackAsWrittenWhateverTheNames() throws {
        var stamps = FieldStamps()
        stamps["zeta"] = Self.stamp(30, 1, 3)
        stamps["name"] = Self.stamp(10, 0, 1)
        stamps["émoji 🙂"] = Self.stamp(20, 1, 2)
        stamps["a"] = Self.stamp(5, 0, 9)
        let decoded = try FieldStampTable.encode(stamps).withUnsafeBytes { try FieldStampTable.decode($0) }
        #expect(decoded == stamps)
        #expect(decoded.sortedEntries.map(\.field) == ["a", "name", "zeta", "émoji 🙂"])
        #expect(decoded["émoji 🙂"] == Self.stamp(20, 1, 2) && decoded["zeta"] == Self.stamp(30, 1, 3))
    }

    /// Names out of order or repeated (bytes no release writes) still read: a repeated name keeps its last stamp.
    @Test func namesOutOfOrderOrRepeatedStillRead() throws {
        var writer = ByteWriter()
        writer.writeVarint(1)
        writer.writeUUID(Self.replicas[0])
        writer.writeVarint(3)
        for (field, hlc) in [("level", UInt64(7)), ("level", 8), ("age", 9)] {
            writer.writeString(field)
            writer.writeVarint(0)
            writer.writeFixed64(hlc)
            writer.writeVarint(hlc)
        }
        let decoded = try writer.withBytes { try FieldStampTable.decode($0) }
        #expect(decoded.sortedEntries.map(\.field) == ["age", "level"])
        #expect(decoded["level"] == Self.stamp(8, 0, 8) && decoded["age"] == Self.stamp(9, 0, 9))
    }

    /// The sync tables on a new file, with `objects` created by replica 0 at HLC 1 and the given
    /// stamps blob (`nil`: no stamps row).
    static func store(_ objects: [(id: UUID, stamps: Data?)], file: TemporaryStoreFile) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: file.path)
        for statement in SyncTables.statements { try connection.execute(statement) }
        let replica = try ReplicaNumberTable.number(of: replicas[0], on: connection)
        for object in objects {
            try connection.run("INSERT INTO _sync_object (entity, id, hlc, replica, seq, tombstone) VALUES ('Person', ?, 1, ?, 1, NULL)",
                               [object.id.storedValue, .integer(replica)])
            if let stamps = object.stamps {
                try connection.run("INSERT INTO _sync_field_stamps (entity, id, stamps) VALUES ('Person', ?, ?)", [object.id.storedValue, .blob(stamps)])
            }
        }
        return connection
    }

    /// A merge reads an object's creation and attribute stamps in one statement: each object comes
    /// with its own stamps, or none when it has no stamps row; an object not stored is not read.
    @Test func objectsComeWithTheirOwnStampsOrNone() throws {
        var stamps = FieldStamps()
        stamps["name"] = Self.stamp(10, 1, 4)
        let (written, unwritten, unknown) = (UUID(), UUID(), UUID())
        let file = TemporaryStoreFile()
        let connection = try Self.store([(written, FieldStampTable.encode(stamps)), (unwritten, nil)], file: file)
        var read: [UUID: (creation: Stamp, stamps: FieldStamps)] = [:]
        try ObjectMetadataTable.objectsWithFieldStamps("Person", [written, unwritten, unknown], on: connection) { stored, stamps in
            read[stored.id] = (stored.creation, stamps)
        }
        #expect(Set(read.keys) == [written, unwritten])
        #expect(read[written]?.stamps == stamps && read[unwritten]?.stamps == FieldStamps())
        #expect(read[written]?.creation == Self.stamp(1, 0, 1) && read[unwritten]?.creation == Self.stamp(1, 0, 1))
    }

    /// Damaged stamps are an error naming the file, the entity and the object, not an object without stamps.
    @Test func damagedStampsNameTheObject() throws {
        let damaged = UUID()
        let file = TemporaryStoreFile()
        let connection = try Self.store([(damaged, Data([0x07, 0x01]))], file: file)
        let error = try #require(throws: SyncError.self) {
            try ObjectMetadataTable.objectsWithFieldStamps("Person", [damaged], on: connection) { _, _ in }
        }
        #expect(error.code == .notSyncable)
        #expect(error.message.contains(file.path) && error.message.contains("Person \(damaged)"), "\(error.message)")
    }
}

import Codecs
import Foundation
@testable import SyncEngine
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
}

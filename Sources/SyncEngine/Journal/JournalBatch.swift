import Codecs
import Foundation
import LocalStoreCore

/// One side of a journal entry as the merge engine hands it over: its value and the write that made it.
struct JournalSide {
    enum Value {
        case none
        /// An attribute's column values; the entry shows the value itself for one column, else an array.
        case values([SQLValue])
        /// The columns at these positions of a row: the same as `.values` of them, without
        /// copying them out of the row first.
        case columns([SQLValue], [Int])
        /// Any other value, as JSON text.
        case json(String)
    }

    var value: Value
    var stamp: Stamp
}

/// The sentence an entry explains itself with.
enum JournalDetail {
    case text(String)
    /// "concurrent writes to Entity.attribute: the larger (HLC, replica) won", made when read:
    /// the most frequent entry by far, so it is not stored a hundred thousand times.
    case concurrentAttributeWrites
}

/// The journal entries one change set caused, packed into one row of ``ConflictTable``.
///
/// A merge that loses a hundred thousand stale writes journals a hundred thousand entries;
/// a row each, with four JSON texts, cost more than the rest of the merge. Packed, an entry is
/// about a hundred bytes appended to a buffer. Entries are numbered `first, first + 1, …` in
/// order; the format, after a version byte, is per entry (``ByteWriter``'s encodings):
///
/// ```
/// kind code (1 byte) · entity (string) · object (16 bytes) · property (flag, string)
/// winner (flag, side) · loser (side) · detail (0 + string, or 1: the attribute sentence)
/// side  = replica (16 bytes) · seq (varint) · HLC (8 bytes, little-endian) · value
/// value = 0 (none) | 1, count (varint), SQL values (``SQLValueTag``) | 2, JSON text (string)
/// ```
///
/// `~Copyable`, like the writer it owns.
struct JournalBatch: ~Copyable {
    static let formatVersion: UInt8 = 1

    /// The change set that caused the entries; nil until the first is appended.
    private(set) var cause: Dot?
    private(set) var count = 0
    private var writer = ByteWriter(reservingCapacity: 4096)

    init() {
        writer.writeByte(JournalBatch.formatVersion)
    }

    /// The packed entries (a copy, so it outlives the batch).
    var data: Data { writer.data }

    /// Adds an entry caused by `cause`, which must be the cause of the entries already here.
    mutating func append(
        _ kind: ConflictEntry.Kind, entity: String, object: UUID, property: String?, winner: JournalSide?,
        loser: JournalSide, cause: Dot, detail: JournalDetail
    ) throws {
        precondition(self.cause == nil || self.cause == cause, "a journal batch holds the entries of one cause")
        self.cause = cause
        try JournalBatch.encodeEntry(kind, entity: entity, object: object, property: property, winner: winner, loser: loser,
                                     detail: detail, into: &writer)
        count += 1
    }

    /// Adds an entry caused by `cause` that ``encodeEntry(_:entity:object:property:winner:loser:detail:into:)``
    /// wrote elsewhere (see `MergeEngine+SetRuns.swift`).
    mutating func appendEncoded(_ entry: UnsafeRawBufferPointer, cause: Dot) {
        precondition(self.cause == nil || self.cause == cause, "a journal batch holds the entries of one cause")
        self.cause = cause
        writer.writeBytes(entry)
        count += 1
    }

    /// Writes one entry's encoding (everything but the cause, which its row holds) to `writer`.
    static func encodeEntry(
        _ kind: ConflictEntry.Kind, entity: String, object: UUID, property: String?, winner: JournalSide?,
        loser: JournalSide, detail: JournalDetail, into writer: inout ByteWriter
    ) throws {
        writer.writeByte(JournalBatch.code(of: kind))
        writer.writeString(entity)
        writer.writeUUID(object)
        writer.writeByte(property == nil ? 0 : 1)
        if let property { writer.writeString(property) }
        writer.writeByte(winner == nil ? 0 : 1)
        if let winner { try write(winner, into: &writer) }
        try write(loser, into: &writer)
        switch detail {
        case .text(let text):
            writer.writeByte(0)
            writer.writeString(text)
        case .concurrentAttributeWrites:
            writer.writeByte(1)
        }
    }

    private static func write(_ side: JournalSide, into writer: inout ByteWriter) throws {
        writer.writeUUID(side.stamp.replica)
        writer.writeVarint(side.stamp.seq)
        writer.writeFixed64(side.stamp.hlc.rawValue)
        switch side.value {
        case .none:
            writer.writeByte(0)
        case .values(let values):
            writer.writeByte(1)
            writer.writeVarint(UInt64(values.count))
            for value in values { try writer.writeSQLValue(value) }
        case .columns(let row, let offsets):
            writer.writeByte(1)
            writer.writeVarint(UInt64(offsets.count))
            for offset in offsets { try writer.writeSQLValue(row[offset]) }
        case .json(let text):
            writer.writeByte(2)
            writer.writeString(text)
        }
    }

    // MARK: Reading

    /// The entries of a stored row, numbered from `first`, each with the offset its encoding
    /// ends at (so the leading entries of a row can be cut off without decoding the rest again).
    static func decode(_ bytes: UnsafeRawBufferPointer, first: Int64, count: Int64, cause: Dot) throws -> [(entry: ConflictEntry, end: Int)] {
        var reader = ByteReader(bytes)
        let version = try reader.readByte()
        guard version == formatVersion else {
            throw reader.failure("format version \(version) is not \(formatVersion)", at: 0)
        }
        var entries: [(entry: ConflictEntry, end: Int)] = []
        entries.reserveCapacity(Int(clamping: min(count, Int64(bytes.count))))
        while !reader.isAtEnd {
            let kindOffset = reader.offset
            let code = try reader.readByte()
            guard let kind = kind(code: code) else { throw reader.failure("\(code) is not a kind of conflict", at: kindOffset) }
            let entity = try reader.readString()
            let object = try reader.readUUID()
            let property = try flag(&reader) ? try reader.readString() : nil
            let winner = try flag(&reader) ? try side(&reader) : nil
            let loser = try side(&reader)
            let detail: String
            let detailOffset = reader.offset
            switch try reader.readByte() {
            case 0: detail = try reader.readString()
            case 1: detail = "concurrent writes to \(entity).\(property ?? "?"): the larger (HLC, replica) won"
            case let other: throw reader.failure("\(other) is not a kind of detail", at: detailOffset)
            }
            let entry = ConflictEntry(
                number: first + Int64(entries.count), kind: kind, entity: entity, objectID: object, property: property,
                winner: winner, loser: loser, cause: cause, detail: detail)
            entries.append((entry, reader.offset))
        }
        guard entries.count == count else {
            throw reader.failure("the row holds \(entries.count) entries, not \(count)")
        }
        return entries
    }

    private static func flag(_ reader: inout ByteReader) throws -> Bool {
        let offset = reader.offset
        switch try reader.readByte() {
        case 0: return false
        case 1: return true
        case let other: throw reader.failure("\(other) is not a flag (0 or 1)", at: offset)
        }
    }

    private static func side(_ reader: inout ByteReader) throws -> ConflictEntry.Side {
        let replica = try reader.readUUID()
        let seq = try reader.readVarint()
        let hlc = HLC(rawValue: try reader.readFixed64())
        let value: ConflictEntry.Value?
        let valueOffset = reader.offset
        switch try reader.readByte() {
        case 0:
            value = nil
        case 1:
            let count = try reader.readCount(of: "values")
            var values: [SQLValue] = []
            for _ in 0..<count { values.append(try reader.readSQLValue()) }
            value = ConflictEntry.Value(columns: values)
        case 2:
            let textOffset = reader.offset
            let text = try reader.readString()
            do {
                value = try ConflictEntry.Value(jsonText: text)
            } catch {
                throw reader.failure("the value is not JSON: \(error)", at: textOffset)
            }
        case let other:
            throw reader.failure("\(other) is not a kind of value", at: valueOffset)
        }
        return ConflictEntry.Side(value: value, dot: Dot(replica: replica, seq: seq), hlc: hlc)
    }

    // MARK: Kind codes

    /// Stored codes: fixed, unlike the enum's order or raw values, which may change.
    static func code(of kind: ConflictEntry.Kind) -> UInt8 {
        switch kind {
        case .attribute: 1
        case .updateVersusDelete: 2
        case .toOne: 3
        case .move: 4
        case .referenceDropped: 5
        case .cascadedDelete: 6
        case .voidedDelete: 7
        case .uniqueMerged: 8
        case .counterSaturated: 9
        case .aboveMaxCount: 10
        case .belowMinCount: 11
        }
    }

    static func kind(code: UInt8) -> ConflictEntry.Kind? {
        switch code {
        case 1: .attribute
        case 2: .updateVersusDelete
        case 3: .toOne
        case 4: .move
        case 5: .referenceDropped
        case 6: .cascadedDelete
        case 7: .voidedDelete
        case 8: .uniqueMerged
        case 9: .counterSaturated
        case 10: .aboveMaxCount
        case 11: .belowMinCount
        default: nil
        }
    }
}

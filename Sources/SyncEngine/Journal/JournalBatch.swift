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

/// The names (entities, properties) and replicas the entries of one journal row refer to by
/// number; the row lists them once, before its entries.
struct JournalTable {
    var names = InternTable<String>()
    var replicas = InternTable<ReplicaID>()

    func write(to writer: inout ByteWriter) {
        writer.writeVarint(UInt64(names.count))
        for name in names.elements { writer.writeString(name) }
        writer.writeVarint(UInt64(replicas.count))
        for replica in replicas.elements { writer.writeUUID(replica) }
    }
}

/// The part of an entry that names things by their number in a ``JournalTable``: what an entry
/// held for later (``SetRun``) keeps aside, to be numbered again in the table of its row.
struct JournalEntryHead {
    /// Reference codes of a side: no side, the cause's change set, or a replica's number plus two.
    static let noSide = 0, causeSide = 1

    /// The kind's code, with ``JournalBatch/standardSentence`` when the detail is not written.
    var code: UInt8
    var entity: Int
    /// 0 for none, else the name's number plus one.
    var property: Int
    var winner: Int
    var loser: Int

    func write(to writer: inout ByteWriter) {
        writer.writeByte(code)
        writer.writeVarint(UInt64(entity))
        writer.writeVarint(UInt64(property))
        writer.writeVarint(UInt64(winner))
        writer.writeVarint(UInt64(loser))
    }

    /// The same head with the names and replicas of `source` numbered in `table`.
    func renumbered(from source: JournalTable, into table: inout JournalTable) -> JournalEntryHead {
        func side(_ reference: Int) -> Int {
            reference <= JournalEntryHead.causeSide ? reference : table.replicas.intern(source.replicas.elements[reference - 2]).number + 2
        }
        return JournalEntryHead(
            code: code, entity: table.names.intern(source.names.elements[entity]).number,
            property: property == 0 ? 0 : table.names.intern(source.names.elements[property - 1]).number + 1,
            winner: side(winner), loser: side(loser))
    }
}

/// The journal entries one change set caused, packed into one row of ``ConflictTable``.
///
/// A merge that loses a hundred thousand stale writes journals a hundred thousand entries;
/// a row each, with four JSON texts, cost more than the rest of the merge. Packed, an entry is
/// about sixty bytes appended to a buffer: names and replicas are written once per row and
/// referred to by number, and a side written by the cause (the change set whose arrival made
/// the entry: the stale write that lost, or the write that won) is not written out at all.
/// Entries are numbered `first, first + 1, …` in order; the format (``ByteWriter``'s encodings):
///
/// ```
/// row   = 2 (version) · cause HLC (8 bytes, little-endian; 0 when no side is the cause's)
///         names (count, strings) · replicas (count, 16 bytes each) · entries
/// entry = kind code (1 byte, plus 128 when the detail is the attribute sentence)
///         entity (name number) · property (0, or name number + 1)
///         winner (0 none, 1 the cause, or replica number + 2) · loser (1 the cause, or replica number + 2)
///         object (16 bytes) · winner side (when there is one) · loser side · detail (string, unless 128)
/// side  = seq (varint) · HLC (8 bytes), unless it is the cause's · value
/// value = 0 (none) | 1, count (varint), SQL values (``SQLValueTag``) | 2, JSON text (string)
///       | 3, one SQL value
/// ```
///
/// Version 1 rows (every name and stamp written out in each entry) are still read.
///
/// `~Copyable`, like the writer it owns.
struct JournalBatch: ~Copyable {
    static let formatVersion: UInt8 = 2
    /// Added to an entry's kind code when its detail is the attribute sentence (not written).
    static let standardSentence: UInt8 = 0x80

    /// The change set that caused the entries; nil until the first is appended.
    private(set) var cause: Dot?
    /// The cause's HLC, once a side written by the cause was appended.
    private(set) var causeHLC: HLC?
    private(set) var count = 0
    private var table = JournalTable()
    private var entries = ByteWriter(reservingCapacity: 4096)

    init() {}

    /// The row's bytes: the header, then the entries.
    var data: Data {
        var header = ByteWriter(reservingCapacity: 256)
        header.writeByte(JournalBatch.formatVersion)
        header.writeFixed64(causeHLC?.rawValue ?? 0)
        table.write(to: &header)
        var data = Data(capacity: header.count + entries.count)
        header.withBytes { data.append(contentsOf: $0) }
        entries.withBytes { data.append(contentsOf: $0) }
        return data
    }

    /// Whether an entry caused by `cause` may join this row, its sides written by the cause
    /// having the HLC `hlc`.
    func accepts(cause: Dot, hlc: HLC?) -> Bool {
        count == 0 || (self.cause == cause && (causeHLC == nil || hlc == nil || causeHLC == hlc))
    }

    /// Adds an entry caused by `cause`, which must be the cause of the entries already here.
    mutating func append(
        _ kind: ConflictEntry.Kind, entity: String, object: UUID, property: String?, winner: JournalSide?,
        loser: JournalSide, cause: Dot, detail: JournalDetail
    ) throws {
        precondition(self.cause == nil || self.cause == cause, "a journal batch holds the entries of one cause")
        self.cause = cause
        let head = JournalBatch.head(kind, entity: entity, property: property, winner: winner, loser: loser, detail: detail,
                                     cause: cause, causeHLC: &causeHLC, table: &table)
        head.write(to: &entries)
        try JournalBatch.writeBody(head, object: object, winner: winner, loser: loser, detail: detail, into: &entries)
        count += 1
    }

    /// Adds an entry held elsewhere (see `MergeEngine+SetRuns.swift`): its head, numbered in
    /// `source`, and the bytes ``writeBody(_:object:winner:loser:detail:into:)`` wrote for it.
    /// `cause` is the change set that caused it; its sides written by the cause have its HLC.
    mutating func appendHeld(_ head: JournalEntryHead, body: UnsafeRawBufferPointer, numberedIn source: JournalTable, cause: Stamp) {
        precondition(accepts(cause: cause.dot, hlc: cause.hlc), "a journal batch holds the entries of one cause")
        self.cause = cause.dot
        if head.winner == JournalEntryHead.causeSide || head.loser == JournalEntryHead.causeSide { causeHLC = cause.hlc }
        head.renumbered(from: source, into: &table).write(to: &entries)
        entries.writeBytes(body)
        count += 1
    }

    /// The head of an entry caused by `cause`: its names and replicas numbered in `table`, a side
    /// written by the cause referred to as such. The first such side sets `causeHLC`; a side of
    /// the cause with another HLC (which no change set has) is written out.
    static func head(
        _ kind: ConflictEntry.Kind, entity: String, property: String?, winner: JournalSide?, loser: JournalSide,
        detail: JournalDetail, cause: Dot, causeHLC: inout HLC?, table: inout JournalTable
    ) -> JournalEntryHead {
        func reference(_ side: JournalSide) -> Int {
            if side.stamp.replica == cause.replica, side.stamp.seq == cause.seq, causeHLC == nil || causeHLC == side.stamp.hlc {
                causeHLC = side.stamp.hlc
                return JournalEntryHead.causeSide
            }
            return table.replicas.intern(side.stamp.replica).number + 2
        }
        var code = JournalBatch.code(of: kind)
        if case .concurrentAttributeWrites = detail { code |= JournalBatch.standardSentence }
        return JournalEntryHead(
            code: code, entity: table.names.intern(entity).number,
            property: property.map { table.names.intern($0).number + 1 } ?? 0,
            winner: winner.map(reference) ?? JournalEntryHead.noSide, loser: reference(loser))
    }

    /// About what the body of a lost write of one small value takes (the object, a stamp, the values).
    static let typicalHeldBodySize = 40

    /// Writes what follows an entry's head: the object, the sides (stamps only where `head` does
    /// not refer to the cause) and the detail.
    static func writeBody(
        _ head: JournalEntryHead, object: UUID, winner: JournalSide?, loser: JournalSide, detail: JournalDetail,
        into writer: inout ByteWriter
    ) throws {
        writer.writeUUID(object)
        if let winner { try write(winner, isCause: head.winner == JournalEntryHead.causeSide, into: &writer) }
        try write(loser, isCause: head.loser == JournalEntryHead.causeSide, into: &writer)
        if case .text(let text) = detail { writer.writeString(text) }
    }

    private static func write(_ side: JournalSide, isCause: Bool, into writer: inout ByteWriter) throws {
        if !isCause {
            writer.writeVarint(side.stamp.seq)
            writer.writeFixed64(side.stamp.hlc.rawValue)
        }
        switch side.value {
        case .none:
            writer.writeByte(0)
        case .values(let values):
            try writeColumns(values, values.indices, into: &writer)
        case .columns(let row, let offsets):
            try writeColumns(row, offsets, into: &writer)
        case .json(let text):
            writer.writeByte(2)
            writer.writeString(text)
        }
    }

    /// Writes the values of `row` at `offsets`: one value on its own, more with their count.
    private static func writeColumns(_ row: borrowing [SQLValue], _ offsets: some Collection<Int>, into writer: inout ByteWriter) throws {
        // Through the buffer, each value is borrowed where it lies instead of copied (and retained).
        try row.withUnsafeBufferPointer { row in
            if offsets.count == 1, let offset = offsets.first {
                writer.writeByte(3)
                try writer.writeSQLValue(row[offset])
                return
            }
            writer.writeByte(1)
            writer.writeVarint(UInt64(offsets.count))
            for offset in offsets { try writer.writeSQLValue(row[offset]) }
        }
    }

    // MARK: Reading

    /// A stored row's entries, numbered from its first, each with the offset its encoding ends at
    /// (so the leading entries of a row can be cut off without decoding the rest again).
    struct DecodedRow {
        /// Where the entries start: the bytes before belong to every entry of the row.
        var headerEnd: Int
        var entries: [(entry: ConflictEntry, end: Int)]
    }

    /// Decodes a stored row of `count` entries numbered from `first`, of either format version.
    static func decode(_ bytes: UnsafeRawBufferPointer, first: Int64, count: Int64, cause: Dot) throws -> DecodedRow {
        var reader = ByteReader(bytes)
        var row = DecodedRow(headerEnd: 0, entries: [])
        row.entries.reserveCapacity(Int(clamping: min(count, Int64(bytes.count))))
        switch try reader.readByte() {
        case 1:
            row.headerEnd = reader.offset
            while !reader.isAtEnd {
                let entry = try version1Entry(&reader, number: first + Int64(row.entries.count), cause: cause)
                row.entries.append((entry, reader.offset))
            }
        case formatVersion:
            let causeHLC = HLC(rawValue: try reader.readFixed64())
            var names: [String] = []
            for _ in 0..<(try reader.readCount(of: "names")) { names.append(try reader.readString()) }
            var replicas: [ReplicaID] = []
            for _ in 0..<(try reader.readCount(of: "replicas", minimumSize: 16)) { replicas.append(try reader.readUUID()) }
            row.headerEnd = reader.offset
            let table = (names: names, replicas: replicas, cause: Stamp(hlc: causeHLC, replica: cause.replica, seq: cause.seq))
            while !reader.isAtEnd {
                let entry = try version2Entry(&reader, number: first + Int64(row.entries.count), table: table)
                row.entries.append((entry, reader.offset))
            }
        case let version:
            throw reader.failure("format version \(version) is neither 1 nor \(formatVersion)", at: 0)
        }
        guard row.entries.count == count else {
            throw reader.failure("the row holds \(row.entries.count) entries, not \(count)")
        }
        return row
    }

    private static func version2Entry(
        _ reader: inout ByteReader, number: Int64, table: (names: [String], replicas: [ReplicaID], cause: Stamp)
    ) throws -> ConflictEntry {
        func name(_ number: UInt64, at offset: Int) throws -> String {
            guard number < UInt64(table.names.count) else {
                throw reader.failure("refers to name \(number), but the row names \(table.names.count)", at: offset)
            }
            return table.names[Int(number)]
        }
        /// The side a reference code introduces (nil for none), reading its stamp unless it is the cause's.
        func side(_ reference: UInt64, at offset: Int) throws -> ConflictEntry.Side? {
            let stamp: Stamp
            switch reference {
            case UInt64(JournalEntryHead.noSide):
                return nil
            case UInt64(JournalEntryHead.causeSide):
                stamp = table.cause
            default:
                guard reference - 2 < UInt64(table.replicas.count) else {
                    throw reader.failure("refers to replica \(reference - 2), but the row names \(table.replicas.count)", at: offset)
                }
                let seq = try reader.readVarint()
                stamp = Stamp(hlc: HLC(rawValue: try reader.readFixed64()), replica: table.replicas[Int(reference - 2)], seq: seq)
            }
            return ConflictEntry.Side(value: try value(&reader), dot: stamp.dot, hlc: stamp.hlc)
        }
        let codeOffset = reader.offset
        let code = try reader.readByte()
        guard let kind = kind(code: code & ~standardSentence) else { throw reader.failure("\(code) is not a kind of conflict", at: codeOffset) }
        let entityOffset = reader.offset
        let entity = try name(try reader.readVarint(), at: entityOffset)
        let propertyOffset = reader.offset
        let propertyReference = try reader.readVarint()
        let property = propertyReference == 0 ? nil : try name(propertyReference - 1, at: propertyOffset)
        let winnerOffset = reader.offset
        let winnerReference = try reader.readVarint()
        let loserOffset = reader.offset
        let loserReference = try reader.readVarint()
        guard loserReference != UInt64(JournalEntryHead.noSide) else { throw reader.failure("an entry has no loser", at: loserOffset) }
        let object = try reader.readUUID()
        let winner = try side(winnerReference, at: winnerOffset)
        guard let loser = try side(loserReference, at: loserOffset) else { throw reader.failure("an entry has no loser", at: loserOffset) }
        let detail = code & standardSentence != 0 ? attributeSentence(entity: entity, property: property) : try reader.readString()
        return ConflictEntry(number: number, kind: kind, entity: entity, objectID: object, property: property,
                             winner: winner, loser: loser, cause: table.cause.dot, detail: detail)
    }

    private static func version1Entry(_ reader: inout ByteReader, number: Int64, cause: Dot) throws -> ConflictEntry {
        let kindOffset = reader.offset
        let code = try reader.readByte()
        guard let kind = kind(code: code) else { throw reader.failure("\(code) is not a kind of conflict", at: kindOffset) }
        let entity = try reader.readString()
        let object = try reader.readUUID()
        let property = try flag(&reader) ? try reader.readString() : nil
        let winner = try flag(&reader) ? try version1Side(&reader) : nil
        let loser = try version1Side(&reader)
        let detail: String
        let detailOffset = reader.offset
        switch try reader.readByte() {
        case 0: detail = try reader.readString()
        case 1: detail = attributeSentence(entity: entity, property: property)
        case let other: throw reader.failure("\(other) is not a kind of detail", at: detailOffset)
        }
        return ConflictEntry(number: number, kind: kind, entity: entity, objectID: object, property: property,
                             winner: winner, loser: loser, cause: cause, detail: detail)
    }

    /// The detail of ``JournalDetail/concurrentAttributeWrites``.
    private static func attributeSentence(entity: String, property: String?) -> String {
        "concurrent writes to \(entity).\(property ?? "?"): the larger (HLC, replica) won"
    }

    private static func flag(_ reader: inout ByteReader) throws -> Bool {
        let offset = reader.offset
        switch try reader.readByte() {
        case 0: return false
        case 1: return true
        case let other: throw reader.failure("\(other) is not a flag (0 or 1)", at: offset)
        }
    }

    private static func version1Side(_ reader: inout ByteReader) throws -> ConflictEntry.Side {
        let replica = try reader.readUUID()
        let seq = try reader.readVarint()
        let hlc = HLC(rawValue: try reader.readFixed64())
        return ConflictEntry.Side(value: try value(&reader), dot: Dot(replica: replica, seq: seq), hlc: hlc)
    }

    private static func value(_ reader: inout ByteReader) throws -> ConflictEntry.Value? {
        let valueOffset = reader.offset
        switch try reader.readByte() {
        case 0:
            return nil
        case 1:
            let count = try reader.readCount(of: "values")
            var values: [SQLValue] = []
            for _ in 0..<count { values.append(try reader.readSQLValue()) }
            return ConflictEntry.Value(columns: values)
        case 2:
            let textOffset = reader.offset
            let text = try reader.readString()
            do {
                return try ConflictEntry.Value(jsonText: text)
            } catch {
                throw reader.failure("the value is not JSON: \(error)", at: textOffset)
            }
        case 3:
            return ConflictEntry.Value(columns: [try reader.readSQLValue()])
        case let other:
            throw reader.failure("\(other) is not a kind of value", at: valueOffset)
        }
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

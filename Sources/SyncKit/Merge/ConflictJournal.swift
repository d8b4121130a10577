import Foundation

/// Reads and writes the `_sync_journal` table.
///
/// Each side (winner, loser) is stored as JSON text, `{"dot":{"replica":…,"seq":…},"hlc":…,"value":…}`
/// with sorted keys, written and read by SyncKit's own JSON code: a merge that loses a hundred
/// thousand stale writes journals a hundred thousand entries.
enum ConflictJournal {
    /// The statement ``row(_:entity:object:property:winner:loser:cause:detail:)``'s values go into.
    static let insert = "INSERT INTO _sync_journal (kind, entity, object, property, winner, loser, cause_replica, cause_seq, detail)"
    static let columnCount = 9

    /// The values of one journal row, in the columns of ``insert``.
    static func row(
        _ kind: ConflictEntry.Kind, entity: String, object: UUID, property: String?, winner: ConflictEntry.Side?,
        loser: ConflictEntry.Side, cause: Dot, detail: String
    ) -> [SQLValue] {
        [.text(kind.rawValue), .text(entity), .text(object.storageText), property.map(SQLValue.text) ?? .null,
         winner.map { .text(json($0)) } ?? .null, .text(json(loser)),
         .text(cause.replica.storageText), .integer(Int64(cause.seq)), .text(detail)]
    }

    static func entries(on connection: SQLiteConnection) throws -> [ConflictEntry] {
        try connection.rows(
            "SELECT number, kind, entity, object, property, winner, loser, cause_replica, cause_seq, detail FROM _sync_journal ORDER BY number"
        ).map { row in
            guard case .integer(let number) = row[0], case .text(let kind) = row[1], let kindValue = ConflictEntry.Kind(rawValue: kind),
                  case .text(let entity) = row[2], case .text(let object) = row[3], let objectID = UUID(storageText: object),
                  case .text(let loser) = row[6], case .text(let causeReplica) = row[7], let cause = UUID(storageText: causeReplica),
                  case .integer(let causeSeq) = row[8], case .text(let detail) = row[9] else {
                throw SyncError(.notSyncable, "a conflict journal row is damaged")
            }
            var property: String?
            if case .text(let text) = row[4] { property = text }
            var winner: ConflictEntry.Side?
            if case .text(let text) = row[5] { winner = try side(text, entry: number) }
            return ConflictEntry(
                number: number, kind: kindValue, entity: entity, objectID: objectID, property: property, winner: winner,
                loser: try side(loser, entry: number), cause: Dot(replica: cause, seq: UInt64(causeSeq)), detail: detail)
        }
    }

    /// The JSON text a side is stored as (the bytes `JSONEncoder` with sorted keys made before,
    /// so entries written then still compare equal).
    static func json(_ side: ConflictEntry.Side) -> String {
        var writer = JSONWriter(reservingCapacity: 96 + (side.value?.utf8.count ?? 0), escapingSlashes: true)
        writer.beginObject()
        writer.writeKey("dot")
        writer.writeDot(side.dot)
        writer.writeKey("hlc")
        writer.writeUnsignedInteger(side.hlc.rawValue)
        if let value = side.value {
            writer.writeKey("value")
            writer.writeString(value)
        }
        writer.endObject()
        return writer.string
    }

    private static func side(_ text: String, entry number: Int64) throws -> ConflictEntry.Side {
        do {
            return try JSONReader.read(text) { reader in
                try reader.beginObject()
                var dot: Dot?
                var hlc: UInt64?
                var value: String?
                while let key = try reader.nextKey() {
                    if key.matches("dot") {
                        dot = try reader.readDot()
                    } else if key.matches("hlc") {
                        hlc = try reader.readUnsignedInteger()
                    } else if key.matches("value") {
                        value = reader.readNullIfPresent() ? nil : try reader.readString()
                    } else {
                        try reader.skipValue()
                    }
                }
                guard let dot, let hlc else { throw reader.failure("a side needs 'dot' and 'hlc'") }
                return ConflictEntry.Side(value: value, dot: dot, hlc: HLC(rawValue: hlc))
            }
        } catch {
            throw SyncError(.notSyncable, "conflict journal entry \(number) is damaged: \(error)")
        }
    }

    /// JSON text for a list of SQL values, as the journal stores attribute values: the value
    /// itself when there is one (most attributes have one column), else an array.
    static func json(_ values: [SQLValue]) -> String {
        var writer = JSONWriter(escapingSlashes: true)
        do {
            if values.count == 1 { try writer.writeSQLValue(values[0]) } else { try writer.writeSQLValues(values) }
        } catch {
            // Only a real that is infinite or NaN fails, which no SQLite column holds.
            return "null"
        }
        return writer.string
    }
}

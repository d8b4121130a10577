import Foundation

/// One entry of the conflict journal: a resolution that discarded or changed something a
/// replica committed, with what won, what lost and why.
///
/// ```swift
/// for entry in try replica.conflicts() where entry.kind == .attribute {
///     print("\(entry.entity).\(entry.property!) lost \(entry.loser.value ?? "nil")")
/// }
/// ```
public struct ConflictEntry: Hashable, Sendable, Codable {
    /// What kind of resolution this was.
    public enum Kind: String, Hashable, Sendable, Codable {
        /// Concurrent writes to one attribute: the larger `(HLC, replica ID)` won.
        case attribute
        /// An update to an object that was deleted concurrently: the delete won.
        case updateVersusDelete = "update_vs_delete"
        /// A to-one relationship set to different targets concurrently.
        case toOne = "to_one"
        /// Concurrent moves of one member of an ordered relationship.
        case move
        /// A new reference to an object deleted concurrently was dropped (delete rule nullify).
        case referenceDropped = "reference_dropped"
        /// An object was deleted because it referred to an object deleted concurrently (delete rule cascade).
        case cascadedDelete = "cascaded_delete"
        /// A delete was voided because a concurrent reference was added (delete rule deny).
        case voidedDelete = "voided_delete"
    }

    /// One side of a resolution: a value (as JSON text, `nil` for none) and the change set that wrote it.
    public struct Side: Hashable, Sendable, Codable {
        public var value: String?
        public var dot: Dot
        public var hlc: HLC
    }

    /// Position in the journal (increasing).
    public var number: Int64
    public var kind: Kind
    public var entity: String
    public var objectID: UUID
    /// The attribute or relationship concerned, if any.
    public var property: String?
    /// What won, if anything did.
    public var winner: Side?
    /// What was discarded.
    public var loser: Side
    /// The change set whose arrival caused the resolution.
    public var cause: Dot
    /// A sentence for people.
    public var detail: String
}

/// Reads and writes the `_sync_journal` table.
enum ConflictJournal {
    /// The statement ``row(_:entity:object:property:winner:loser:cause:detail:)``'s values go into.
    static let insert = "INSERT INTO _sync_journal (kind, entity, object, property, winner, loser, cause_replica, cause_seq, detail)"
    static let columnCount = 9

    /// The values of one journal row, in the columns of ``insert``.
    static func row(
        _ kind: ConflictEntry.Kind, entity: String, object: UUID, property: String?, winner: ConflictEntry.Side?,
        loser: ConflictEntry.Side, cause: Dot, detail: String
    ) throws -> [SQLValue] {
        [.text(kind.rawValue), .text(entity), .text(object.storageText), property.map(SQLValue.text) ?? .null,
                try winner.map { .text(try json($0)) } ?? .null, .text(try json(loser)),
                .text(cause.replica.storageText), .integer(Int64(cause.seq)), .text(detail)]
    }

    static func entries(on connection: SQLiteConnection) throws -> [ConflictEntry] {
        let decoder = JSONDecoder()
        return try connection.rows(
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
            if case .text(let text) = row[5] { winner = try decoder.decode(ConflictEntry.Side.self, from: Data(text.utf8)) }
            return ConflictEntry(
                number: number, kind: kindValue, entity: entity, objectID: objectID, property: property, winner: winner,
                loser: try decoder.decode(ConflictEntry.Side.self, from: Data(loser.utf8)),
                cause: Dot(replica: cause, seq: UInt64(causeSeq)), detail: detail)
        }
    }

    /// The JSON text a side is stored as.
    static func json(_ side: ConflictEntry.Side) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(side), as: UTF8.self)
    }

    /// JSON text for a list of SQL values, as the journal stores attribute values.
    static func json(_ values: [SQLValue]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let wire = values.count == 1 ? try? encoder.encode(values[0]) : try? encoder.encode(values)
        return wire.map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }
}

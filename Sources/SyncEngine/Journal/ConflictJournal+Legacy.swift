import Codecs
import Foundation
import LocalStoreCore

extension ConflictJournal {
    /// Moves the entries of `_sync_journal`, where stores made before the packed journal kept
    /// one row per entry, into `_sync_conflict`, keeping their numbers, then drops the old table.
    /// Runs when a replica opens the store, inside `SyncTables.install`'s transaction.
    static func migrateLegacyTable(on connection: SQLiteConnection) throws {
        guard try !connection.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sync_journal'").isEmpty else { return }
        var batch = JournalBatch()
        var batchFirst: Int64 = 0
        var last: Int64 = 0
        for row in try connection.rows(
            "SELECT number, kind, entity, object, property, winner, loser, cause_replica, cause_seq, detail FROM _sync_journal ORDER BY number"
        ) {
            guard case .integer(let number) = row[0], case .text(let kind) = row[1], let kindValue = ConflictEntry.Kind(rawValue: kind),
                  case .text(let entity) = row[2], case .text(let object) = row[3], let objectID = UUID(storageText: object),
                  case .text(let loser) = row[6], case .text(let causeReplica) = row[7], let replica = UUID(storageText: causeReplica),
                  case .integer(let causeSeq) = row[8], let causeSeq = UInt64(exactly: causeSeq), case .text(let detail) = row[9] else {
                throw SyncError(.notSyncable, "conflict journal entry \(row[0]) (table _sync_journal) is damaged")
            }
            let cause = Dot(replica: replica, seq: causeSeq)
            var property: String?
            if case .text(let text) = row[4] { property = text }
            var winner: JournalSide?
            if case .text(let text) = row[5] { winner = try legacySide(text, entry: number) }
            // A packed row holds consecutive numbers with one cause.
            if batch.count > 0, batch.cause != cause || number != batchFirst + Int64(batch.count) {
                try insert(batch, first: batchFirst, on: connection)
                batch = JournalBatch()
            }
            if batch.count == 0 { batchFirst = number }
            try batch.append(kindValue, entity: entity, object: objectID, property: property, winner: winner,
                             loser: try legacySide(loser, entry: number), cause: cause, detail: .text(detail))
            last = number
        }
        if batch.count > 0 { try insert(batch, first: batchFirst, on: connection) }
        // AUTOINCREMENT remembered numbers of entries since cleared: never hand those out again.
        var next = last + 1
        if try !connection.rows("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").isEmpty,
           case .integer(let used)? = try connection.rows("SELECT seq FROM sqlite_sequence WHERE name = '_sync_journal'").first?.first {
            next = max(next, used + 1)
        }
        try SyncTables.setIntegerState("journal_next", UInt64(max(next, 1)), on: connection)
        try connection.execute("DROP TABLE _sync_journal")
    }

    /// A side as the old table stored it: `{"dot":{"replica":…,"seq":…},"hlc":…,"value":…}`.
    private static func legacySide(_ text: String, entry number: Int64) throws -> JournalSide {
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
                return JournalSide(value: value.map(JournalSide.Value.json) ?? .none,
                                   stamp: Stamp(hlc: HLC(rawValue: hlc), replica: dot.replica, seq: dot.seq))
            }
        } catch {
            throw SyncError(.notSyncable, "conflict journal entry \(number) (table _sync_journal) is damaged: \(error)")
        }
    }
}

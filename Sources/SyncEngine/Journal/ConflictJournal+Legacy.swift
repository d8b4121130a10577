import Codecs
import Foundation
import LocalStoreCore

extension ConflictJournal {
    /// Moves the entries of ``LegacyJournalTable``, where stores made before the packed journal
    /// kept one row per entry, into ``ConflictTable``, keeping their numbers, then drops the old
    /// table. Runs when a replica opens such a store, inside `SyncTables.install`'s transaction.
    static func migrateLegacyTable(on connection: SQLiteConnection) throws {
        guard try LegacyJournalTable.exists(on: connection) else { return }
        var batch = JournalBatch()
        var batchFirst: Int64 = 0
        var last: Int64 = 0
        for entry in try LegacyJournalTable.entries(on: connection) {
            let number = entry.number
            let winner = try entry.winner.map { try legacySide($0, entry: number) }
            // A packed row holds consecutive numbers with one cause.
            if batch.count > 0, batch.cause != entry.cause || number != batchFirst + Int64(batch.count) {
                try insert(batch, first: batchFirst, on: connection)
                batch = JournalBatch()
            }
            if batch.count == 0 { batchFirst = number }
            try batch.append(entry.kind, entity: entry.object.entity, object: entry.object.id, property: entry.property, winner: winner,
                             loser: try legacySide(entry.loser, entry: number), cause: entry.cause, detail: .text(entry.detail))
            last = number
        }
        if batch.count > 0 { try insert(batch, first: batchFirst, on: connection) }
        // AUTOINCREMENT remembered numbers of entries since cleared: never hand those out again.
        var next = last + 1
        if let used = try LegacyJournalTable.highestNumberUsed(on: connection) { next = max(next, used + 1) }
        try SyncStateTable.set(.journalNext, to: UInt64(max(next, 1)), on: connection)
        try LegacyJournalTable.drop(on: connection)
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
            throw SyncError(.notSyncable, "conflict journal entry \(number) (table \(LegacyJournalTable.name)) is damaged: \(error)")
        }
    }
}

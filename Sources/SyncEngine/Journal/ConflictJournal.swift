import Codecs
import Foundation
import LocalStoreCore

/// Reads and writes the conflict journal, table `_sync_conflict`: one row per change set that
/// caused entries (per run of entries with one cause), holding them packed (``JournalBatch``).
///
/// Entry numbers increase and are never reused, even after the journal is cleared: the next
/// one is kept in `_sync_state` under `journal_next`.
enum ConflictJournal {
    static let statements = [
        """
        CREATE TABLE IF NOT EXISTS _sync_conflict (first INTEGER PRIMARY KEY, count INTEGER NOT NULL,
            cause_replica TEXT NOT NULL, cause_seq INTEGER NOT NULL, entries BLOB NOT NULL)
        """,
        "CREATE INDEX IF NOT EXISTS _sync_conflict_cause ON _sync_conflict (cause_replica, cause_seq)",
    ]

    /// Writes `batch` as one row, numbering its entries after every entry written before.
    static func write(_ batch: borrowing JournalBatch, on connection: SQLiteConnection) throws {
        guard batch.count > 0 else { return }
        let first = max(1, Int64(bitPattern: try SyncTables.integerState("journal_next", on: connection)))
        try insert(batch, first: first, on: connection)
        try SyncTables.setIntegerState("journal_next", UInt64(first) + UInt64(batch.count), on: connection)
    }

    static func insert(_ batch: borrowing JournalBatch, first: Int64, on connection: SQLiteConnection) throws {
        guard let cause = batch.cause else { return }
        try connection.run(
            "INSERT INTO _sync_conflict (first, count, cause_replica, cause_seq, entries) VALUES (?, ?, ?, ?, ?)",
            [.integer(first), .integer(Int64(batch.count)), .text(cause.replica.storageText),
             .integer(Int64(cause.seq)), .blob(batch.data)])
    }

    /// Every entry, oldest first.
    static func entries(on connection: SQLiteConnection) throws -> [ConflictEntry] {
        try rows("SELECT first, count, cause_replica, cause_seq, entries FROM _sync_conflict ORDER BY first", [], on: connection)
            .flatMap { $0.entries.map(\.entry) }
    }

    /// Entries caused by the change set `cause`.
    static func entries(causedBy cause: Dot, on connection: SQLiteConnection) throws -> [ConflictEntry] {
        try rows("SELECT first, count, cause_replica, cause_seq, entries FROM _sync_conflict WHERE cause_replica = ? AND cause_seq = ? ORDER BY first",
                 [.text(cause.replica.storageText), .integer(Int64(cause.seq))], on: connection)
            .flatMap { $0.entries.map(\.entry) }
    }

    /// How many entries have a number above `number`.
    static func count(after number: Int64, on connection: SQLiteConnection) throws -> Int {
        let rows = try connection.rows(
            "SELECT coalesce(sum(min(count, first + count - 1 - ?)), 0) FROM _sync_conflict WHERE first + count - 1 > ?",
            [.integer(number), .integer(number)])
        guard case .integer(let total)? = rows.first?.first else { return 0 }
        return Int(total)
    }

    /// The number of the newest entry, 0 if the journal is empty.
    static func lastNumber(on connection: SQLiteConnection) throws -> Int64 {
        guard case .integer(let last)? = try connection.rows("SELECT max(first + count - 1) FROM _sync_conflict").first?.first else { return 0 }
        return last
    }

    /// Removes the entries numbered up to `number` (all when nil). A row holding entries on
    /// both sides of `number` keeps the later ones.
    static func clear(through number: Int64?, on connection: SQLiteConnection) throws {
        guard let number else {
            try connection.run("DELETE FROM _sync_conflict")
            return
        }
        try connection.run("DELETE FROM _sync_conflict WHERE first + count - 1 <= ?", [.integer(number)])
        let straddling = try rows("SELECT first, count, cause_replica, cause_seq, entries FROM _sync_conflict WHERE first <= ?",
                                  [.integer(number)], on: connection)
        for row in straddling {
            let dropped = Int(number - row.first + 1)
            var kept = [JournalBatch.formatVersion]
            kept += row.bytes[row.entries[dropped - 1].end...]
            try connection.run("UPDATE _sync_conflict SET first = ?, count = ?, entries = ? WHERE first = ?",
                               [.integer(number + 1), .integer(Int64(row.entries.count - dropped)), .blob(Data(kept)), .integer(row.first)])
        }
    }

    private struct StoredRow {
        var first: Int64
        var bytes: [UInt8]
        var entries: [(entry: ConflictEntry, end: Int)]
    }

    private static func rows(_ sql: String, _ arguments: [SQLValue], on connection: SQLiteConnection) throws -> [StoredRow] {
        try connection.rows(sql, arguments).map { row in
            guard case .integer(let first) = row[0], case .integer(let count) = row[1], case .text(let causeReplica) = row[2],
                  let replica = UUID(storageText: causeReplica), case .integer(let causeSeq) = row[3], let causeSeq = UInt64(exactly: causeSeq),
                  case .blob(let data) = row[4] else {
                throw SyncError(.notSyncable, "a conflict journal row is damaged: \(row.prefix(4))")
            }
            let bytes = [UInt8](data)
            do {
                let entries = try bytes.withUnsafeBytes {
                    try JournalBatch.decode($0, first: first, count: count, cause: Dot(replica: replica, seq: causeSeq))
                }
                return StoredRow(first: first, bytes: bytes, entries: entries)
            } catch {
                throw SyncError(.notSyncable, "conflict journal entries \(first)...\(first + count - 1) are damaged: \(error)")
            }
        }
    }

    /// JSON text for a list of SQL values, as the journal shows attribute values: the value
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

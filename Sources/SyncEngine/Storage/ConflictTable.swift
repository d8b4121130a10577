import Codecs
import Foundation
import LocalStoreCore

/// `_sync_conflict`: the conflict journal, one row per run of entries with one cause, holding
/// them packed (``JournalBatch``); entries are numbered `first ..< first + count`.
enum ConflictTable {
    static let createStatements = [
        """
        CREATE TABLE IF NOT EXISTS _sync_conflict (first INTEGER PRIMARY KEY, count INTEGER NOT NULL,
            cause_replica BLOB NOT NULL, cause_seq INTEGER NOT NULL, entries BLOB NOT NULL)
        """,
        "CREATE INDEX IF NOT EXISTS _sync_conflict_cause ON _sync_conflict (cause_replica, cause_seq)",
    ]

    /// One stored row, its entries still packed.
    struct StoredRow {
        var first: Int64
        var count: Int64
        var cause: Dot
        var entries: Data
    }

    static func insert(first: Int64, count: Int, cause: Dot, entries: Data, on connection: SQLiteConnection) throws {
        try connection.run(
            "INSERT INTO _sync_conflict (first, count, cause_replica, cause_seq, entries) VALUES (?, ?, ?, ?, ?)",
            [.integer(first), .integer(Int64(count)), cause.replica.storedValue, .integer(Int64(cause.seq)), .blob(entries)])
    }

    /// Every row, by first number.
    static func rows(on connection: SQLiteConnection) throws -> [StoredRow] {
        try rows("SELECT first, count, cause_replica, cause_seq, entries FROM _sync_conflict ORDER BY first", [], on: connection)
    }

    /// The rows of entries the change set `cause` caused, by first number.
    static func rows(causedBy cause: Dot, on connection: SQLiteConnection) throws -> [StoredRow] {
        try rows("SELECT first, count, cause_replica, cause_seq, entries FROM _sync_conflict WHERE cause_replica = ? AND cause_seq = ? ORDER BY first",
                 cause.values, on: connection)
    }

    /// The rows whose first entry is numbered `number` or lower.
    static func rows(startingAtOrBefore number: Int64, on connection: SQLiteConnection) throws -> [StoredRow] {
        try rows("SELECT first, count, cause_replica, cause_seq, entries FROM _sync_conflict WHERE first <= ?", [.integer(number)], on: connection)
    }

    private static func rows(_ sql: String, _ arguments: [SQLValue], on connection: SQLiteConnection) throws -> [StoredRow] {
        try connection.rows(sql, arguments).map { row in
            guard case .integer(let first) = row[0], case .integer(let count) = row[1], let replica = UUID(stored: row[2]), case .integer(let causeSeq) = row[3], let causeSeq = UInt64(exactly: causeSeq),
                  case .blob(let data) = row[4] else {
                throw SyncError(.notSyncable, "a conflict journal row is damaged: \(row.prefix(4))")
            }
            return StoredRow(first: first, count: count, cause: Dot(replica: replica, seq: causeSeq), entries: data)
        }
    }

    /// How many entries have a number above `number`.
    static func count(after number: Int64, on connection: SQLiteConnection) throws -> Int {
        let rows = try connection.rows(
            "SELECT coalesce(sum(min(count, first + count - 1 - ?)), 0) FROM _sync_conflict WHERE first + count - 1 > ?",
            [.integer(number), .integer(number)])
        guard case .integer(let total)? = rows.first?.first else { return 0 }
        return Int(total)
    }

    /// The number of the newest entry, 0 if there is none.
    static func lastNumber(on connection: SQLiteConnection) throws -> Int64 {
        guard case .integer(let last)? = try connection.rows("SELECT max(first + count - 1) FROM _sync_conflict").first?.first else { return 0 }
        return last
    }

    /// Removes every row.
    static func removeAll(on connection: SQLiteConnection) throws {
        try connection.run("DELETE FROM _sync_conflict")
    }

    /// Removes the rows whose entries are all numbered above `number`.
    static func removeRows(startingAfter number: Int64, on connection: SQLiteConnection) throws {
        try connection.run("DELETE FROM _sync_conflict WHERE first > ?", [.integer(number)])
    }

    /// Removes the rows whose entries are all numbered `number` or lower.
    static func removeRows(endingAtOrBefore number: Int64, on connection: SQLiteConnection) throws {
        try connection.run("DELETE FROM _sync_conflict WHERE first + count - 1 <= ?", [.integer(number)])
    }

    /// Replaces the row starting at `oldFirst` by one holding the later entries `entries`.
    static func replace(rowStartingAt oldFirst: Int64, first: Int64, count: Int, entries: Data, on connection: SQLiteConnection) throws {
        try connection.run("UPDATE _sync_conflict SET first = ?, count = ?, entries = ? WHERE first = ?",
                           [.integer(first), .integer(Int64(count)), .blob(entries), .integer(oldFirst)])
    }
}

/// `_sync_journal`: the conflict journal of stores made before the packed one, one row per
/// entry; read once, into ``ConflictTable``, and dropped (see ``ConflictJournal/migrateLegacyTable(on:)``).
enum LegacyJournalTable {
    /// The table's name, for messages about its entries.
    static let name = "_sync_journal"

    /// One entry as the table kept it; sides are JSON text.
    struct StoredEntry {
        var number: Int64
        var kind: ConflictEntry.Kind
        var object: ObjectKey
        var property: String?
        var winner: String?
        var loser: String
        var cause: Dot
        var detail: String
    }

    static func exists(on connection: SQLiteConnection) throws -> Bool {
        try !connection.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sync_journal'").isEmpty
    }

    /// Every entry, by number.
    ///
    /// - Throws: ``SyncError`` `.notSyncable` naming the first damaged entry.
    static func entries(on connection: SQLiteConnection) throws -> [StoredEntry] {
        try connection.rows(
            "SELECT number, kind, entity, object, property, winner, loser, cause_replica, cause_seq, detail FROM _sync_journal ORDER BY number"
        ).map { row in
            guard case .integer(let number) = row[0], case .text(let kind) = row[1], let kindValue = ConflictEntry.Kind(rawValue: kind),
                  let object = ObjectKey(entity: row[2], id: row[3]),
                  case .text(let loser) = row[6], let replica = UUID(stored: row[7]),
                  case .integer(let causeSeq) = row[8], let causeSeq = UInt64(exactly: causeSeq), case .text(let detail) = row[9] else {
                throw SyncError(.notSyncable, "conflict journal entry \(row[0]) (table \(name)) is damaged")
            }
            return StoredEntry(number: number, kind: kindValue, object: object, property: row[4].textValue, winner: row[5].textValue,
                               loser: loser, cause: Dot(replica: replica, seq: causeSeq), detail: detail)
        }
    }

    /// The highest number `AUTOINCREMENT` ever handed out, even to entries cleared since.
    static func highestNumberUsed(on connection: SQLiteConnection) throws -> Int64? {
        guard try !connection.rows("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").isEmpty,
              case .integer(let used)? = try connection.rows("SELECT seq FROM sqlite_sequence WHERE name = '_sync_journal'").first?.first
        else { return nil }
        return used
    }

    static func drop(on connection: SQLiteConnection) throws {
        try connection.execute("DROP TABLE _sync_journal")
    }
}

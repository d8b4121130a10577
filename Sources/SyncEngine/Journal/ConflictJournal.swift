import Codecs
import Foundation
import LocalStoreCore

/// Reads and writes the conflict journal (``ConflictTable``): one row per change set that
/// caused entries (per run of entries with one cause), holding them packed (``JournalBatch``).
///
/// Entry numbers increase and are never reused, even after the journal is cleared: the next
/// one is kept in ``SyncStateTable`` (``SyncStateTable/Counter/journalNext``).
enum ConflictJournal {
    /// Writes `batch` as one row, numbering its entries after every entry written before.
    static func write(_ batch: borrowing JournalBatch, on connection: SQLiteConnection) throws {
        guard batch.count > 0 else { return }
        let first = max(1, Int64(bitPattern: try SyncStateTable.value(of: .journalNext, on: connection)))
        try insert(batch, first: first, on: connection)
        try SyncStateTable.set(.journalNext, to: UInt64(first) + UInt64(batch.count), on: connection)
    }

    static func insert(_ batch: borrowing JournalBatch, first: Int64, on connection: SQLiteConnection) throws {
        guard let cause = batch.cause else { return }
        try ConflictTable.insert(first: first, count: batch.count, cause: cause, entries: batch.data, on: connection)
    }

    /// Every entry, oldest first.
    static func entries(on connection: SQLiteConnection) throws -> [ConflictEntry] {
        try ConflictTable.rows(on: connection).map(unpack).flatMap { $0.entries.map(\.entry) }
    }

    /// Entries caused by the change set `cause`.
    static func entries(causedBy cause: Dot, on connection: SQLiteConnection) throws -> [ConflictEntry] {
        try ConflictTable.rows(causedBy: cause, on: connection).map(unpack).flatMap { $0.entries.map(\.entry) }
    }

    /// How many entries have a number above `number`.
    static func count(after number: Int64, on connection: SQLiteConnection) throws -> Int {
        try ConflictTable.count(after: number, on: connection)
    }

    /// The number of the newest entry, 0 if the journal is empty.
    static func lastNumber(on connection: SQLiteConnection) throws -> Int64 {
        try ConflictTable.lastNumber(on: connection)
    }

    /// Removes the entries numbered up to `number` (all when nil). A row holding entries on
    /// both sides of `number` keeps the later ones.
    static func clear(through number: Int64?, on connection: SQLiteConnection) throws {
        guard let number else {
            try ConflictTable.removeAll(on: connection)
            return
        }
        try ConflictTable.removeRows(endingAtOrBefore: number, on: connection)
        for row in try ConflictTable.rows(startingAtOrBefore: number, on: connection).map(unpack) {
            let dropped = Int(number - row.first + 1)
            // The row's header (its version, and the names its entries refer to) stays.
            var kept = Array(row.bytes[..<row.headerEnd])
            kept += row.bytes[row.entries[dropped - 1].end...]
            try ConflictTable.replace(rowStartingAt: row.first, first: number + 1, count: row.entries.count - dropped, entries: Data(kept), on: connection)
        }
    }

    private struct UnpackedRow {
        var first: Int64
        var bytes: [UInt8]
        var headerEnd: Int
        var entries: [(entry: ConflictEntry, end: Int)]
    }

    private static func unpack(_ row: ConflictTable.StoredRow) throws -> UnpackedRow {
        let bytes = [UInt8](row.entries)
        do {
            let decoded = try bytes.withUnsafeBytes {
                try JournalBatch.decode($0, first: row.first, count: row.count, cause: row.cause)
            }
            return UnpackedRow(first: row.first, bytes: bytes, headerEnd: decoded.headerEnd, entries: decoded.entries)
        } catch {
            throw SyncError(.notSyncable, "conflict journal entries \(row.first)...\(row.first + row.count - 1) are damaged: \(error)")
        }
    }
}

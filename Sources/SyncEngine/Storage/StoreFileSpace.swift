import Foundation
import LocalStoreCore

/// Gives the pages a compaction freed back to the file system, so that a store file shrinks
/// after its history is compacted (SQLite otherwise keeps freed pages in the file for reuse).
///
/// A compaction that leaves at least ``wholeVacuumFreeFraction`` of the store's pages free ends
/// with a whole `VACUUM`: it rewrites the file, which is worth its time only when the file shrinks
/// a lot, and it also repacks the pages that deletes left part empty (random identifiers spread
/// a table's rows over all its pages), which freeing pages alone never does. The first one
/// switches the store to `auto_vacuum = INCREMENTAL`; from then on a compaction that frees less
/// ends with `PRAGMA incremental_vacuum`, whose cost is the freed pages, not the file. Either way
/// a `wal_checkpoint(TRUNCATE)` follows, so that the WAL, which holds the moved pages first, does
/// not keep the size.
///
/// A whole `VACUUM` and a truncating checkpoint wait for every reader of the file to finish; an
/// app's open read transaction would hold the sync that compacted for the whole busy timeout. They
/// wait ``readerWaitMilliseconds`` at most: the file keeps its space until a later compaction
/// finds no reader in the way.
enum StoreFileSpace {
    /// The share of free pages at which a store is vacuumed whole.
    static let wholeVacuumFreeFraction = 0.25

    /// When space goes back to the file system.
    enum Policy {
        /// Whatever was freed (a compaction, an app clearing its journal).
        case always
        /// Only when a whole `VACUUM` is due: a removal that is about to be refilled (a journal
        /// trimmed to its retention after each pull) leaves its pages for the next rows, and the
        /// pull pays no vacuum or WAL checkpoint.
        case whenLarge
    }

    /// How long giving space back waits for other connections' readers and writers.
    static let readerWaitMilliseconds: Int32 = 100

    /// The bytes of the store file at `path` and of its WAL.
    static func fileBytes(of path: String) -> Int64 {
        ["", "-wal"].reduce(0) { total, suffix in
            let size = (try? FileManager.default.attributesOfItem(atPath: path + suffix)[.size] as? NSNumber)?.int64Value
            return total + (size ?? 0)
        }
    }

    /// Returns the free pages of the store on `connection` to the file system (see the type), and
    /// how many bytes smaller the file and its WAL are than `bytesBefore`. Runs outside any
    /// transaction, on a connection with no statement in progress.
    ///
    /// Best effort: a store another connection is reading or writing (the `VACUUM` or checkpoint
    /// times out) keeps its free pages, which later writes reuse, until its next compaction; the
    /// compaction itself has committed, so this reports what the file shrank by (maybe nothing)
    /// instead of failing it.
    static func reclaim(on connection: SQLiteConnection, bytesBefore: Int64, policy: Policy = .always) -> Int64 {
        connection.withBusyTimeout(milliseconds: readerWaitMilliseconds) { giveBackFreePages(on: connection, policy: policy) }
        return max(0, bytesBefore - fileBytes(of: connection.path))
    }

    /// Empties the WAL into the file and truncates it, waiting ``readerWaitMilliseconds`` at most
    /// for readers; best effort.
    static func truncateWAL(on connection: SQLiteConnection) {
        // A background checkpoint still copying (the `VACUUM`'s commit asks for one) would make
        // this one give up.
        connection.waitForBackgroundCheckpoints()
        connection.withBusyTimeout(milliseconds: readerWaitMilliseconds) {
            _ = try? connection.rows("PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    private static func giveBackFreePages(on connection: SQLiteConnection, policy: Policy) {
        connection.waitForBackgroundCheckpoints()
        do {
            let free = try integer("PRAGMA freelist_count", on: connection)
            let mode = try integer("PRAGMA auto_vacuum", on: connection)
            if free > 0, Double(free) >= Double(try integer("PRAGMA page_count", on: connection)) * wholeVacuumFreeFraction {
                try connection.execute(mode == 2 ? "VACUUM" : "PRAGMA auto_vacuum = INCREMENTAL; VACUUM")
            } else if policy == .whenLarge {
                // The pages stay for the rows that come next, and the WAL as it is.
                return
            } else if free > 0, mode == 2 {
                _ = try connection.rows("PRAGMA incremental_vacuum")
            }
            // Otherwise full auto-vacuum freed the pages at commit, or a store with few free
            // pages reuses them.
        } catch {
            // A reader or writer in the way: the pages stay free in the file until a later compaction.
        }
        truncateWAL(on: connection)
    }

    private static func integer(_ pragma: String, on connection: SQLiteConnection) throws -> Int64 {
        guard case .integer(let value)? = try connection.rows(pragma).first?.first else {
            throw SyncError(.notSyncable, "\(connection.path): \(pragma) returned no number")
        }
        return value
    }
}

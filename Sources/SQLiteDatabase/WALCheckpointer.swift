import CSQLite
import Dispatch
import Synchronization

/// Copies a database's write-ahead log into the database file on a connection and a queue of
/// its own, so that the commit that fills the log does not also pay for the copy.
///
/// By default SQLite checkpoints inside the commit that takes the log past 1,000 pages: that
/// commit then writes every logged page a second time, into the database file, and syncs both
/// files. For a large save or merge this is a good part of its time, and a pause for whoever
/// waits on it (an app's save, the other pushers of a dataset on a server). The connections a
/// checkpointer is installed on hand that work to a serial queue instead, where a passive
/// checkpoint on a connection of its own copies what no reader still needs; it never blocks a
/// writer, and writers never wait for it.
///
/// The log keeps a bound: a commit that finds it at ``synchronousPages`` or more checkpoints
/// itself, as SQLite would have, so that a checkpointer that cannot keep up (writes faster than
/// the copy, or a reader holding old pages) never lets the log grow without end. As without a
/// checkpointer, the first write after a checkpoint that copied the whole log starts the log
/// over, and cuts its file back to the connection's `journal_size_limit`.
package final class WALCheckpointer: Sendable {
    /// The database file.
    package let path: String
    /// The log size, in pages, at which a commit asks for a checkpoint in the background.
    package let backgroundPages: Int32
    /// The log size, in pages, at which a commit checkpoints itself.
    package let synchronousPages: Int32
    /// Where checkpoints run, one at a time.
    private let queue: DispatchQueue
    /// Whether a checkpoint is queued and has not started yet: commits meanwhile add none.
    private let isQueued = Atomic<Bool>(false)

    /// A checkpointer for the database at `path`, running its checkpoints on `queue` (a serial
    /// queue); it does nothing until ``install(on:)``. The default thresholds are SQLite's own
    /// (1,000 pages) and eight times it.
    package init(path: String, backgroundPages: Int32 = 1_000, synchronousPages: Int32 = 8_000,
                 queue: DispatchQueue = DispatchQueue(label: "SQLiteDatabase.WALCheckpointer", qos: .utility)) {
        precondition(0 < backgroundPages && backgroundPages <= synchronousPages, "the background threshold must be positive and at most the synchronous one")
        self.path = path
        self.backgroundPages = backgroundPages
        self.synchronousPages = synchronousPages
        self.queue = queue
    }

    /// Makes `connection`'s commits checkpoint through this checkpointer, in place of SQLite's
    /// automatic checkpoint. The connection keeps the checkpointer alive.
    package func install(on connection: SQLiteConnection) {
        connection.walCommitObserver = self
        install(onDatabase: connection.handle)
    }

    /// Makes the commits of the database connection `handle` checkpoint through this
    /// checkpointer. The caller keeps the checkpointer alive as long as the connection is open.
    package func install(onDatabase handle: OpaquePointer) {
        sqlite3_wal_hook(handle, walCommitHook, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Called by SQLite after each commit of an installed connection, with the log's size.
    fileprivate func committed(on handle: OpaquePointer, logPages: Int32) {
        if logPages >= synchronousPages {
            // The committing connection's own checkpoint, as SQLite's automatic one is: passive,
            // so it copies what it can without waiting for readers.
            sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        } else if logPages >= backgroundPages, !isQueued.exchange(true, ordering: .acquiringAndReleasing) {
            queue.async { self.checkpoint() }
        }
    }

    /// One passive checkpoint on a connection opened for it. Best effort: a database that cannot
    /// be opened now keeps its log until the next commit asks again, or the bound is reached; a
    /// file removed meanwhile is not made again.
    private func checkpoint() {
        // Cleared before the copy: a commit during it asks for another one, for its own pages.
        isQueued.store(false, ordering: .releasing)
        guard let connection = try? SQLiteConnection(path: path, creatingIfMissing: false, busyTimeoutMilliseconds: 0) else { return }
        // The checkpoint syncs the log before copying and the file after, as the stores'
        // `synchronous = NORMAL` asks of the checkpoints their commits run.
        try? connection.execute("PRAGMA synchronous = NORMAL")
        sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
    }

    /// Returns once the checkpoints asked for so far have run.
    package func waitUntilIdle() {
        queue.sync {}
    }
}

/// SQLite's WAL hook: the checkpointer it was registered with, the connection, the database's
/// name and the log's size in pages; returns SQLITE_OK (a commit cannot fail here).
private let walCommitHook: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
    context, handle, _, logPages in
    guard let context, let handle else { return SQLITE_OK }
    Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue().committed(on: handle, logPages: logPages)
    return SQLITE_OK
}

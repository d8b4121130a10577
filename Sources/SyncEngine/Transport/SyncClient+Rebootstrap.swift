import Foundation
import LocalStoreCore

/// Starting again from a snapshot when the server refuses the replica (`410 replica_retired`
/// or `410 history_compacted`), without losing what the user committed.
///
/// The store file keeps its path and stays open: its contents are replaced in one SQLite
/// transaction (SQLite's online backup) by a store built next to it from the server's snapshot
/// under a fresh replica ID, with the old store's unpushed change sets replayed on top as new
/// local change sets. A kill at any point leaves the old contents or the new ones, and at worst
/// a staging file (`<store>.rebootstrap`) the next attempt deletes. Every connection to the
/// file (this client's replica, the app's contexts and live queries) keeps working and reads
/// the new contents at its next read; objects a context already loaded keep their values until
/// it refreshes them, which ``SyncReport/rebootstrap`` tells the app to do.
extension SyncClient {
    /// Replaces the store's contents with the server's snapshot and replays the change sets the
    /// server never stored on top, under a new replica ID; ``sync()`` does this by itself when
    /// the server refuses the replica. Returns what it did.
    @discardableResult
    public func rebootstrap() async throws(SyncClientError) -> SyncReport.Rebootstrap {
        await gate.acquire()
        defer { gate.release() }
        return try await startAgainFromSnapshot()
    }

    /// ``rebootstrap()`` for a caller that holds the sync gate.
    func startAgainFromSnapshot() async throws(SyncClientError) -> SyncReport.Rebootstrap {
        let snapshot = try await transport.snapshot()
        let replica = replica, configuration = configuration
        return try await SyncClient.run(on: storeQueue) { () throws(SyncClientError) -> SyncReport.Rebootstrap in
            do {
                return try SyncClient.replaceContents(of: replica, with: snapshot, configuration: configuration)
            } catch let error as SyncClientError {
                throw error
            } catch {
                throw .local("cannot start \(replica.store.path) again from the server's snapshot: \(error)")
            }
        }
    }

    /// Builds the new store in `<store>.rebootstrap`, replays, and copies it over the store.
    static func replaceContents(of replica: SyncReplica, with snapshot: HTTPTransport.Snapshot,
                                configuration: Configuration) throws -> SyncReport.Rebootstrap {
        let path = replica.store.path
        let staging = path + ".rebootstrap"
        removeStoreFiles(at: staging)
        defer { removeStoreFiles(at: staging) }
        try OwnerOnlyFile.create(atPath: staging)
        try snapshot.data.write(to: URL(fileURLWithPath: staging))
        try SyncReplica.adoptSnapshot(at: staging)
        let retired = replica.replicaID
        let target = try replayTarget(for: replica, at: staging, snapshot: snapshot, configuration: configuration)
        // The journal stays the replica's own; entries the replay journals come after it. Merges
        // wait for the sync gate this holds, so nothing journals in the old store meanwhile.
        try target.takeConflictJournal(of: replica)
        // Most change sets are replayed while the user may still save; the last ones with the
        // store's write lock held through the replacement, so no save can fall between the two.
        var replay = Replay(held: try target.versionVector())
        try replay.carryOver(from: replica, to: target)
        try OwnerOnlyFile.restrictStore(atPath: path)
        try SQLiteConnection(path: path).replaceContents(withDatabaseAt: staging) {
            try replay.carryOver(from: replica, to: target)
        }
        try replica.adoptReplacedContents()
        return SyncReport.Rebootstrap(retiredReplica: retired, newReplica: target.replicaID, replayed: replay.count)
    }

    /// Opens the adopted snapshot at `staging` with the store's schema and saves the client's
    /// settings there.
    private static func replayTarget(for replica: SyncReplica, at staging: String, snapshot: HTTPTransport.Snapshot,
                                     configuration: Configuration) throws -> SyncReplica {
        let store = try ObjectStore(path: staging, schema: replica.store.schemaDocument, policy: .additiveOnly)
        let target = try SyncReplica(store: store)
        try configuration.save(in: target)
        try target.setPullCursor(snapshot.cursor, digest: snapshot.cursorDigest)
        try target.setSetting(SettingKey.cursorSource, configuration.source)
        try target.setSetting(SettingKey.schema, configuration.source + " " + store.schemaDocument.versionHash)
        return target
    }

    /// The replay of a store's unpushed change sets onto the snapshot, oldest first, in steps.
    private struct Replay {
        /// What the snapshot holds: change sets pushed before the refusal (even if their answer
        /// was lost) are not replayed, which would apply the same edits twice.
        let held: VersionVector
        /// The seq of the last change set looked at.
        var through: UInt64 = 0
        /// How many change sets were replayed.
        var count = 0

        /// Replays every unpushed change set of `replica` after ``through``, including those
        /// saved while it runs.
        mutating func carryOver(from replica: SyncReplica, to target: SyncReplica) throws {
            while true {
                let unpushed = try (replica.localChangeSets(status: .pending) + replica.localChangeSets(status: .sent))
                    .filter { $0.dot.seq > through && !held.covers($0.dot) }
                    .sorted { $0.dot.seq < $1.dot.seq }
                guard let last = unpushed.last else { return }
                for changeSet in unpushed where try target.replayLocally(changeSet) != nil { count += 1 }
                through = last.dot.seq
            }
        }
    }

    private static func removeStoreFiles(at path: String) {
        for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

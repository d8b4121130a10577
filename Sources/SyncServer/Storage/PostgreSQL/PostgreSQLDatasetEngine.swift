import Foundation
import LocalStoreCore
import PostgreSQLClient
import SQLiteDatabase
import SyncEngine

/// A ``DatasetEngine`` that keeps a dataset in a PostgreSQL database shared by any number of
/// syncd instances: the log (with the change sets themselves), the schema and the replicas'
/// keys live there; see <doc:SharedStorage>.
///
/// The merged state a snapshot needs, and the merge that decides what a push applies, come from
/// a store file of this instance (a cache): the merge result is a function of the set of change
/// sets applied, so replaying the shared log into a ``SQLiteDatasetEngine`` with the same merge
/// gives the state every other instance has at the same cursor. The cache's log mirrors the
/// shared one entry for entry (same cursors and digests), so a snapshot of it names a position
/// of the shared log.
///
/// A push takes the dataset's advisory lock in PostgreSQL, brings the cache up to the end of the
/// shared log, merges the batch into the cache and, inside the cache's transaction, appends what
/// it applied to the shared log and commits there first: the cache never holds a change set the
/// shared log lacks, and one the shared log holds but the cache lost (a crash between the two
/// commits) is replayed at the next catch-up.
final class PostgreSQLDatasetEngine: DatasetEngine, @unchecked Sendable {
    // @unchecked: `cache` is only accessed while holding `stateLock`; writes to the cache file
    // (catch-up, push, migration) run one at a time under `mergeLock`, which is always taken
    // before a connection is borrowed from the pool, never while holding one.

    let dataset: String
    let pool: PostgreSQLConnectionPool
    /// The horizon and clock of the dataset's replica registry.
    let replicaPolicy: ReplicaPolicy
    let stableVectorCache = StableVectorCache()
    /// The cache's store file.
    let cachePath: String
    private let mergeLock = NSLock()
    private let stateLock = NSLock()
    private var cache: SQLiteDatasetEngine

    /// How many log entries a catch-up replays per cache transaction.
    private static let replayPageSize = 500

    private init(dataset: String, pool: PostgreSQLConnectionPool, cachePath: String, cache: SQLiteDatasetEngine, replicaPolicy: ReplicaPolicy) {
        self.dataset = dataset
        self.pool = pool
        self.replicaPolicy = replicaPolicy
        self.cachePath = cachePath
        self.cache = cache
    }

    var currentCache: SQLiteDatasetEngine {
        stateLock.lock()
        defer { stateLock.unlock() }
        return cache
    }

    private func setCache(_ engine: SQLiteDatasetEngine) {
        stateLock.lock()
        cache = engine
        stateLock.unlock()
    }

    /// The engine of `dataset`, its cache at `cachePath` brought up to the shared log's end;
    /// `nil` while no schema is registered for it.
    static func open(dataset: String, pool: PostgreSQLConnectionPool, cachePath: String,
                     replicaPolicy: ReplicaPolicy) throws -> PostgreSQLDatasetEngine? {
        try pool.withConnection { connection in
            guard let schema = try PostgreSQLTables.schema(of: dataset, on: connection) else { return nil }
            let engine = PostgreSQLDatasetEngine(dataset: dataset, pool: pool, cachePath: cachePath,
                                                 cache: try openCache(at: cachePath, schema: schema, dataset: dataset, on: connection),
                                                 replicaPolicy: replicaPolicy)
            try engine.withMergeLock { try engine.catchUp(on: connection) }
            return engine
        }
    }

    /// Registers `schema` for `dataset` (creating it, or migrating it by additive changes) and
    /// returns its engine. The cache is migrated inside the registration's transaction, so an
    /// impossible migration changes nothing in PostgreSQL.
    static func create(dataset: String, schema: SchemaDocument, pool: PostgreSQLConnectionPool, cachePath: String,
                       replicaPolicy: ReplicaPolicy) throws -> PostgreSQLDatasetEngine {
        try pool.withConnection { connection in
            let engine = try connection.inTransaction {
                try PostgreSQLTables.lockDataset(dataset, on: connection)
                let stored = try PostgreSQLTables.schema(of: dataset, on: connection)
                let cache = try openCache(at: cachePath, schema: stored ?? schema, dataset: dataset, on: connection)
                let engine = PostgreSQLDatasetEngine(dataset: dataset, pool: pool, cachePath: cachePath, cache: cache, replicaPolicy: replicaPolicy)
                try engine.withMergeLock {
                    try engine.catchUp(on: connection)
                    if stored?.versionHash != schema.versionHash {
                        // Renames merge the history again, which a compacted log no longer holds.
                        if let stored, SchemaRenames(from: stored, to: schema).renamesSomething,
                           let point = try PostgreSQLTables.compactionPoint(of: dataset, on: connection) {
                            throw StoreError(.migrationImpossible,
                                             "dataset \(dataset): the schema renames entities, attributes or relationships, which needs every change set merged again, but the log was compacted up to cursor \(point.cursor)")
                        }
                        // Throws `.migrationImpossible` before anything is written to PostgreSQL.
                        engine.setCache(try SQLiteDatasetEngine.create(at: cachePath, schema: schema))
                        try PostgreSQLTables.setSchema(schema, of: dataset, on: connection)
                    }
                }
                return engine
            }
            return engine
        }
    }

    /// The cache at `path` with `schema`; a cache whose log is not a prefix of the shared log
    /// (the database was replaced or restored) is deleted and rebuilt from scratch.
    private static func openCache(at path: String, schema: SchemaDocument, dataset: String,
                                  on connection: PostgreSQLConnection) throws -> SQLiteDatasetEngine {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        if FileManager.default.fileExists(atPath: path) {
            do {
                let cache = try SQLiteDatasetEngine.create(at: path, schema: schema)
                let end = try cache.logEnd()
                if try PostgreSQLTables.digest(of: dataset, at: end.cursor, on: connection) == end.digest { return cache }
            } catch let error as PostgreSQLError {
                throw error
            } catch {
                // A cache that cannot take the shared schema is rebuilt like a stale one.
            }
            removeCacheFiles(at: path)
        }
        return try SQLiteDatasetEngine.create(at: path, schema: schema)
    }

    private static func removeCacheFiles(at path: String) {
        for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    private func withMergeLock<T>(_ body: () throws -> T) rethrows -> T {
        mergeLock.lock()
        defer { mergeLock.unlock() }
        return try body()
    }

    /// Brings the cache to the end of the shared log: migrates it when another instance
    /// registered a new schema, then replays the entries it lacks, page by page. Called under `mergeLock`.
    private func catchUp(on connection: PostgreSQLConnection) throws {
        if let schema = try PostgreSQLTables.schema(of: dataset, on: connection), schema.versionHash != currentCache.schema.versionHash {
            do {
                setCache(try SQLiteDatasetEngine.create(at: cachePath, schema: schema))
            } catch let error as StoreError where error.code == .migrationImpossible {
                // The cache took a schema whose registration did not commit: rebuild it.
                PostgreSQLDatasetEngine.removeCacheFiles(at: cachePath)
                setCache(try SQLiteDatasetEngine.create(at: cachePath, schema: schema))
            }
        }
        while true {
            let cache = currentCache
            let end = try cache.logEnd()
            let entries = try PostgreSQLTables.entries(of: dataset, after: end.cursor, limit: PostgreSQLDatasetEngine.replayPageSize,
                                                       excluding: nil, on: connection)
            guard !entries.isEmpty else { return }
            // An entry without its change set was compacted, and below the floor not even its row
            // is left: the cache lies before the compaction point and starts again from the base.
            let replayable = entries.enumerated().allSatisfy { offset, entry in
                entry.mirrored.cursor == end.cursor + Int64(offset) + 1 && entry.changeSet != nil
            }
            if !replayable {
                guard let point = try PostgreSQLTables.compactionPoint(of: dataset, on: connection), end.cursor < point.cursor else {
                    throw SyncError(.notSyncable, "dataset \(dataset): the shared log lacks change sets after cursor \(end.cursor), which is not before its compaction point; the cache at \(cachePath) cannot catch up")
                }
                try restoreBase(on: connection)
                // A base is a cache at or after its compaction point: restoring it again would not help.
                guard try currentCache.logEnd().cursor >= point.cursor else {
                    throw SyncError(.notSyncable, "dataset \(dataset): the base ends before the compaction point \(point.cursor)")
                }
                continue
            }
            let changeSets = entries.compactMap(\.changeSet)
            let batch = try ValidatedBatch(validating: changeSets, against: cache.schema)
            let result = try cache.apply(batch) { cacheConnection, _ in
                try SQLiteDatasetEngine.appendMirroredLogEntries(entries.map(\.mirrored), on: cacheConnection)
            }
            guard result.alreadyApplied.isEmpty else {
                throw SyncError(.notSyncable, "dataset \(dataset): the cache at \(cachePath) already holds change sets logged after its cursor \(end.cursor) (\(result.alreadyApplied.first!)); delete the file to rebuild it")
            }
        }
    }

    // MARK: DatasetEngine

    /// The schema the cache holds: the one last registered that this instance knows of.
    var schema: SchemaDocument { currentCache.schema }

    /// The schema registered in PostgreSQL now: one registered through another instance is
    /// taken by the cache first.
    func currentSchema() throws -> SchemaDocument {
        try refreshSchema()
        return currentCache.schema
    }

    /// Every schema the dataset was registered with, from PostgreSQL, oldest first.
    func schemaVersions() throws -> [SchemaVersion] {
        try pool.withConnection { try PostgreSQLTables.schemaVersions(of: dataset, on: $0) }
    }

    /// Brings the cache to the schema registered in PostgreSQL when another instance changed it.
    private func refreshSchema() throws {
        let sql = "SELECT version_hash FROM syncd_dataset WHERE name = $1"
        let hash = try pool.withConnection { try $0.execute(sql, [dataset]).scalar }
        guard let hash, hash != currentCache.schema.versionHash else { return }
        // The merge lock first, then a connection, as a push takes them: holding a connection
        // while waiting for the lock could leave a push waiting for a connection forever.
        try withMergeLock { try pool.withConnection { try catchUp(on: $0) } }
    }

    /// Brings the cache to the end of the shared log (the merge lock first, then a connection,
    /// as a push takes them).
    func catchUpCache() throws {
        try withMergeLock { try pool.withConnection { try catchUp(on: $0) } }
    }


    func versionVector() throws -> VersionVector {
        try pool.withConnection { try PostgreSQLTables.versionVector(of: dataset, on: $0) }
    }

    /// Validates against the dataset's current schema: when another instance registered a new
    /// one, the cache takes it first, so a push using it is not refused by a stale schema.
    func validate(_ changeSets: [ChangeSet]) throws -> ValidatedBatch {
        try refreshSchema()
        return try currentCache.validate(changeSets)
    }

    func apply(_ batch: ValidatedBatch, pushedBy pusher: ReplicaCredentials?) throws -> DatasetApplyResult {
        try withMergeLock {
            try pool.withConnection { connection in
                try connection.execute("BEGIN")
                var committed = false
                defer { if !committed { _ = try? connection.execute("ROLLBACK") } }
                try PostgreSQLTables.lockDataset(dataset, on: connection)
                try catchUp(on: connection)
                let cache = currentCache
                var position = try cache.logEnd()
                let result = try cache.apply(batch) { cacheConnection, applied in
                    if let pusher { try recordPush(by: pusher.replica, of: batch.changeSets, on: connection) }
                    try ChangeSetAuthenticator.verify(
                        applied, pushedBy: pusher,
                        registeredKey: { try PostgreSQLTables.replicaKey(of: $0, in: dataset, on: connection) },
                        register: { try PostgreSQLTables.registerReplicaKey($0, in: dataset, on: connection) })
                    let entries = applied.map { changeSet in
                        position = LogPosition(cursor: position.cursor + 1, digest: position.digest.appending(changeSet.dot))
                        return (entry: LogEntry(cursor: position.cursor, dot: changeSet.dot, digest: position.digest), changeSet: changeSet)
                    }
                    try PostgreSQLTables.append(entries, of: dataset, on: connection)
                    try SQLiteDatasetEngine.appendMirroredLogEntries(entries.map(\.entry), on: cacheConnection)
                    // The shared log commits first: if the cache's commit fails after it, the
                    // next catch-up replays what the cache lacks.
                    committed = true
                    try connection.execute("COMMIT")
                }
                return DatasetApplyResult(applied: result.applied, alreadyApplied: result.alreadyApplied,
                                          vector: try cache.versionVector(), cursor: position.cursor, digest: position.digest)
            }
        }
    }

    func readLog(after cursor: Int64, digest: LogDigest?, limit: Int, excluding: ReplicaID?) throws -> ChangeSetLogPage {
        try pool.withConnection { connection in
            let highest = try PostgreSQLTables.highestCursor(of: dataset, on: connection)
            guard cursor >= 0, cursor <= highest else { throw DatasetEngineError.unknownCursor(cursor, logEnd: highest) }
            var stored = try PostgreSQLTables.digest(of: dataset, at: cursor, on: connection)
            // As the SQLite engine does: below the floor no digest is left, the puller's vector decides.
            if let digest, digest != stored,
               try stored != nil || cursor >= (PostgreSQLTables.floor(of: dataset, on: connection)?.position.cursor ?? 0) {
                throw DatasetEngineError.cursorMismatch(cursor)
            }
            var start = cursor
            // As the SQLite engine does: a cursor before the compaction point reads on from it
            // when the puller provably has every compacted entry after the cursor.
            if let point = try PostgreSQLTables.compactionPoint(of: dataset, on: connection), cursor < point.cursor {
                let known = try excluding.map { try PostgreSQLTables.latestVector(of: $0, in: dataset, on: connection) } ?? VersionVector()
                if let unknown = try PostgreSQLTables.firstUnknown(in: dataset, after: cursor, through: point.cursor, to: excluding,
                                                                   known: known, on: connection) {
                    throw DatasetEngineError.historyCompacted(cursor, logStart: point.cursor, unknown: unknown)
                }
                (start, stored) = (point.cursor, point.digest)
            }
            let entries = try PostgreSQLTables.entries(of: dataset, after: start, limit: limit + 1, excluding: excluding, on: connection)
            let page = entries.prefix(limit)
            return ChangeSetLogPage(changeSets: page.compactMap(\.changeSet), cursor: page.last?.mirrored.cursor ?? start,
                                    digest: page.last?.mirrored.digest ?? stored ?? .empty, hasMore: entries.count > limit)
        }
    }

    /// Brings the cache to the end of the shared log and copies it: the copy's position is a
    /// position of the shared log, since the cache mirrors it.
    func writeSnapshot(to path: String) throws -> LogPosition {
        try withMergeLock {
            try pool.withConnection { try catchUp(on: $0) }
            return try currentCache.writeSnapshot(to: path)
        }
    }

    /// Compacts this instance's cache below `stable`, then, in one PostgreSQL transaction under
    /// the dataset's lock, stores a copy of the cache as the dataset's base and drops the change
    /// sets of the shared log's entries up to the compaction point (see
    /// ``PostgreSQLTables/compact(_:through:base:on:)``). The report counts what left the
    /// shared log. Other instances keep their caches; one whose cache lies before the point, or
    /// a new one, restores the base and replays the tail.
    func compactLog(stable: VersionVector) throws -> CompactionReport {
        try withMergeLock {
            try pool.withConnection { connection in
                try connection.inTransaction {
                    try PostgreSQLTables.lockDataset(dataset, on: connection)
                    try catchUp(on: connection)
                    let cache = currentCache
                    // No forgotten identifier is released (no replica records are given): the
                    // caches of other instances keep the merged state they replayed, forgotten
                    // objects included, until they restore a base, and a create of a released
                    // identifier through this instance would not merge in theirs.
                    let compacted = try cache.compactLog(stable: stable, replicas: [])
                    // Pulls read the shared log, never the cache's: it keeps no per-entry record.
                    try cache.foldCompactedLog()
                    let previous = try PostgreSQLTables.compactionPoint(of: dataset, on: connection)
                    guard compacted.logStart.cursor > previous?.cursor ?? 0 else {
                        var report = CompactionReport(entriesRemoved: 0, changeSetsRemoved: 0, changeSetsKept: 0, payloadBytesRemoved: 0,
                                                      logStart: previous ?? compacted.logStart)
                        if let previous { report.entriesFolded = try raiseFloor(below: previous.cursor, on: connection) }
                        return report
                    }
                    let copy = cachePath + ".base-\(UUID().uuidString)"
                    defer { PostgreSQLDatasetEngine.removeCacheFiles(at: copy) }
                    try cache.copyStoreFile(to: copy)
                    let store = try [UInt8](Data(contentsOf: URL(fileURLWithPath: copy)))
                    let dropped = try PostgreSQLTables.compact(dataset, through: compacted.logStart, base: store, on: connection)
                    var report = CompactionReport(entriesRemoved: Int(compacted.logStart.cursor - (previous?.cursor ?? 0)),
                                                  changeSetsRemoved: dropped.changeSets, changeSetsKept: compacted.changeSetsKept,
                                                  payloadBytesRemoved: dropped.bytes, logStart: compacted.logStart,
                                                  fileBytesFreed: compacted.fileBytesFreed)
                    report.changeSetStampsKept = compacted.changeSetStampsKept
                    report.mergedState = compacted.mergedState
                    report.journalEntriesRemoved = compacted.journalEntriesRemoved
                    report.entriesFolded = try raiseFloor(below: compacted.logStart.cursor, on: connection)
                    return report
                }
            }
        }
    }

    /// Folds into the floor the shared log's compacted entries up to `point` that every active
    /// replica has pulled past (see ``LogFloor``); returns how many. Called inside the
    /// compaction's transaction.
    private func raiseFloor(below point: Int64, on connection: PostgreSQLConnection) throws -> Int {
        let records = try PostgreSQLTables.replicaRecords(of: dataset, on: connection)
        guard let cursor = LogFloor.cursor(below: point, records: records, policy: replicaPolicy) else { return 0 }
        return try PostgreSQLTables.raiseFloor(of: dataset, to: cursor, on: connection)
    }

    /// Replaces the cache with the dataset's base: the shared log no longer holds the change sets
    /// the cache lacks. Called under `mergeLock`.
    private func restoreBase(on connection: PostgreSQLConnection) throws {
        guard let store = try PostgreSQLTables.baseStore(of: dataset, on: connection) else {
            throw SyncError(.notSyncable, "dataset \(dataset): the shared log lacks change sets before its compaction point, and has no base")
        }
        let schema = currentCache.schema
        PostgreSQLDatasetEngine.removeCacheFiles(at: cachePath)
        try Data(store).write(to: URL(fileURLWithPath: cachePath))
        setCache(try SQLiteDatasetEngine.create(at: cachePath, schema: schema))
    }
}

/// Keeps datasets in a PostgreSQL database shared by several syncd instances (see
/// ``PostgreSQLDatasetEngine``), with each instance's cache in `DIR/datasets/<name>/cache.sqlite`.
struct PostgreSQLDatasetEngineProvider: DatasetEngineProvider {
    let pool: PostgreSQLConnectionPool
    /// `DIR/datasets`: one directory per dataset, holding the cache and snapshots being sent.
    let directory: URL
    /// The horizon and clock of every dataset's replica registry.
    let replicaPolicy: ReplicaPolicy

    /// A provider on `pool`; creates syncd's tables when they do not exist.
    init(pool: PostgreSQLConnectionPool, directory: URL, replicaPolicy: ReplicaPolicy = ReplicaPolicy()) throws {
        self.pool = pool
        self.directory = directory
        self.replicaPolicy = replicaPolicy
        try pool.withConnection { try PostgreSQLTables.install(on: $0) }
    }

    private func cachePath(of dataset: String) -> String {
        directory.appendingPathComponent(dataset).appendingPathComponent("cache.sqlite").path
    }

    func openEngine(for dataset: String) throws -> (any DatasetEngine)? {
        try PostgreSQLDatasetEngine.open(dataset: dataset, pool: pool, cachePath: cachePath(of: dataset), replicaPolicy: replicaPolicy)
    }

    func createEngine(for dataset: String, schema: SchemaDocument) throws -> any DatasetEngine {
        try PostgreSQLDatasetEngine.create(dataset: dataset, schema: schema, pool: pool, cachePath: cachePath(of: dataset),
                                           replicaPolicy: replicaPolicy)
    }
}

import Codecs
import Foundation
import LocalStoreCore

/// A ``DatasetEngine`` that keeps a dataset in one SQLite store file: the entity tables and
/// sync metadata of a ``SyncReplica`` (the server is itself a replica and runs the same merge
/// as clients), and the log in the same file, written in the merge's own transaction.
public final class SQLiteDatasetEngine: DatasetEngine {
    /// The store file.
    public let path: String
    /// The server's replica of the dataset: it merges and validates every batch.
    let replica: SyncReplica
    /// The horizon and clock of the replica registry.
    public let replicaPolicy: ReplicaPolicy
    let stableVectorCache = StableVectorCache()

    /// The schema the store file has.
    public var schema: SchemaDocument { replica.store.schemaDocument }

    /// The engine of the store file at `path`, or `nil` when it has no schema: a file whose
    /// registration never committed (the server died during it) is still unregistered.
    public static func open(at path: String, replicaPolicy: ReplicaPolicy = ReplicaPolicy()) throws -> SQLiteDatasetEngine? {
        guard try ObjectStore.storedSchema(at: path) != nil else { return nil }
        return try SQLiteDatasetEngine(replica: SyncReplica(serving: try ObjectStore(existingAt: path)), isNew: false, replicaPolicy: replicaPolicy)
    }

    /// Creates the store file at `path` with `schema`, or migrates it to `schema` (additive
    /// changes only). The file's directory must exist.
    ///
    /// - Throws: ``StoreError`` `.migrationImpossible` or `.invalidSchema`, leaving the file as it was.
    public static func create(at path: String, schema: SchemaDocument, replicaPolicy: ReplicaPolicy = ReplicaPolicy()) throws -> SQLiteDatasetEngine {
        let existed = FileManager.default.fileExists(atPath: path)
        if existed { try refuseRenamesAfterCompaction(at: path, schema: schema) }
        return try SQLiteDatasetEngine(replica: SyncReplica(serving: try ObjectStore(path: path, schema: schema, policy: .additiveOnly)),
                                       isNew: !existed, replicaPolicy: replicaPolicy)
    }

    private init(replica: SyncReplica, isNew: Bool, replicaPolicy: ReplicaPolicy) throws {
        self.replica = replica
        self.replicaPolicy = replicaPolicy
        path = replica.store.path
        try replica.withConnection { connection in
            try ServerLogTable.install(on: connection)
            try ServerCompactedLogTable.install(on: connection)
            try ServerReplicaKeyTable.install(on: connection)
            try ServerSchemaHistoryTable.install(on: connection)
            try ServerReplicaTable.install(on: connection)
            let hadHistory = try !ServerSchemaHistoryTable.isEmpty(on: connection)
            // A store from before the history was kept has its schema recorded without a time.
            try ServerSchemaHistoryTable.record(replica.store.schemaDocument, registeredAt: isNew || hadHistory ? Date() : nil, on: connection)
        }
    }

    /// Every schema the store was registered with, oldest first.
    public func schemaVersions() throws -> [SchemaVersion] {
        try replica.withConnection { try ServerSchemaHistoryTable.versions(on: $0) }
    }

    /// The store's version vector.
    public func versionVector() throws -> VersionVector {
        try replica.versionVector()
    }

    /// Refuses seqs and vector entries that do not fit SQLite's integers, and values that do not
    /// fit the schema's columns, as ``SyncReplica/apply(_:)`` does.
    ///
    /// - Throws: ``SyncError`` `.malformedChangeSet` or `.schemaMismatch`, naming the change set.
    public func validate(_ changeSets: [ChangeSet]) throws -> ValidatedBatch {
        try replica.validate(changeSets)
    }

    /// Merges the batch as ``SyncReplica/apply(_:)`` does (validating it again only if it was
    /// validated against another schema), checks the authors of what it applied against the
    /// registered keys (registering the pusher's) and logs it, all in the same transaction; the
    /// vector and cursor are read right after it, on the same connection.
    public func apply(_ batch: ValidatedBatch, pushedBy pusher: ReplicaCredentials?) throws -> DatasetApplyResult {
        let result = try replica.apply(batch) { connection, applied in
            if let pusher { try recordPush(by: pusher.replica, of: batch.changeSets, on: connection) }
            try ChangeSetAuthenticator.verify(
                applied, pushedBy: pusher, registeredKey: { try ServerReplicaKeyTable.key(of: $0, on: connection) },
                register: { try ServerReplicaKeyTable.register($0, on: connection) })
            try ServerLogTable.append(applied, on: connection)
        }
        return try answer(to: result)
    }

    /// What a push answers: what it applied, and the vector and log end right after it.
    func answer(to result: SyncReplica.MergeResult) throws -> DatasetApplyResult {
        try replica.withConnection { connection in
            let end = try ServerLogTable.end(on: connection)
            return DatasetApplyResult(applied: result.applied, alreadyApplied: result.alreadyApplied,
                                      vector: try VersionVectorTable.vector(on: connection), cursor: end.cursor, digest: end.digest)
        }
    }

    /// Checks the digest against the one stored with the cursor's entry (logged or compacted),
    /// then reads the log entries and their change sets, which are committed before they are
    /// logged. A cursor before the compaction point reads on from it when the puller provably
    /// has what was compacted after the cursor (see <doc:ServerStorage>).
    public func readLog(after cursor: Int64, digest: LogDigest?, limit: Int, excluding: ReplicaID?) throws -> ChangeSetLogPage {
        try replica.withConnection { connection in
            let highest = try ServerLogTable.highestAssignedCursor(on: connection)
            guard cursor >= 0, cursor <= highest else { throw DatasetEngineError.unknownCursor(cursor, logEnd: highest) }
            // Without an entry at the cursor (none was ever logged there) the digest cannot match.
            // Below the log's floor the digests are gone: there the puller's vector alone decides
            // (`readStart`), and a mismatch shows only as an entry it is not known to have.
            var stored = try ServerLogTable.digest(at: cursor, on: connection)
            if let digest, digest != stored,
               try stored != nil || cursor >= (ServerCompactedLogTable.floor(on: connection)?.position.cursor ?? 0) {
                throw DatasetEngineError.cursorMismatch(cursor)
            }
            var start = cursor
            if let point = try readStart(after: cursor, puller: excluding, on: connection) {
                (start, stored) = (point.cursor, point.digest)
            }
            let entries = try ServerLogTable.entries(after: start, limit: limit + 1, on: connection)
            let page = entries.prefix(limit)
            let changeSets = try page.compactMap { entry in
                entry.dot.replica == excluding ? nil : try ChangeSetTable.changeSet(entry.dot, on: connection)
            }
            return ChangeSetLogPage(changeSets: changeSets, cursor: page.last?.cursor ?? start,
                                    digest: page.last?.digest ?? stored ?? .empty, hasMore: entries.count > limit)
        }
    }

    /// Copies the file with SQLite's `VACUUM INTO` and drops from the copy the log (clients have
    /// no use for it) and every secret: the replicas' registered keys and the server's own key.
    /// The position is read from the copy before its log is dropped, so it is the copy's own.
    public func writeSnapshot(to path: String) throws -> LogPosition {
        try replica.withConnection { try $0.run("VACUUM INTO ?", [.text(path)]) }
        let copy = try SQLiteConnection(path: path)
        let end = try ServerLogTable.end(on: copy)
        try ServerReplicaKeyTable.removeFromCopy(on: copy)
        try ServerSchemaHistoryTable.removeFromCopy(on: copy)
        try ServerReplicaTable.removeFromCopy(on: copy)
        try ServerForgottenObjectTable.removeFromCopy(on: copy)
        try SyncStateTable.removeReplicaKey(on: copy)
        // A journal left by a syncd that still kept one: entries are each replica's own.
        try ConflictTable.removeAll(on: copy)
        // Last: it compacts the copy, so the removed keys leave no trace in free pages.
        try ServerCompactedLogTable.removeFromCopy(on: copy)
        try ServerLogTable.removeFromCopy(on: copy)
        return end
    }
}

/// Keeps each dataset in `DIR/<dataset>/store.sqlite` (see ``SQLiteDatasetEngine``).
public struct SQLiteDatasetEngineProvider: DatasetEngineProvider {
    /// The directory holding one directory per dataset.
    public let directory: URL
    /// The horizon and clock of every dataset's replica registry.
    public var replicaPolicy: ReplicaPolicy

    /// A provider keeping datasets under `directory`, whose replicas follow `replicaPolicy`.
    public init(directory: URL, replicaPolicy: ReplicaPolicy = ReplicaPolicy()) {
        self.directory = directory
        self.replicaPolicy = replicaPolicy
    }

    /// The directory of `dataset`'s files.
    public func directory(of dataset: String) -> URL {
        directory.appendingPathComponent(dataset)
    }

    /// The store file of `dataset`.
    public func storePath(of dataset: String) -> String {
        directory(of: dataset).appendingPathComponent("store.sqlite").path
    }

    /// The ``SQLiteDatasetEngine`` of the dataset's store file, `nil` while it has no schema.
    public func openEngine(for dataset: String) throws -> (any DatasetEngine)? {
        try SQLiteDatasetEngine.open(at: storePath(of: dataset), replicaPolicy: replicaPolicy)
    }

    /// Creates the dataset's directory if needed.
    public func createEngine(for dataset: String, schema: SchemaDocument) throws -> any DatasetEngine {
        try FileManager.default.createDirectory(at: directory(of: dataset), withIntermediateDirectories: true)
        return try SQLiteDatasetEngine.create(at: storePath(of: dataset), schema: schema, replicaPolicy: replicaPolicy)
    }
}

import Codecs
import Foundation
import LocalStoreCore
import SyncEngine

/// One dataset on the server: its store file (entity tables, SyncKit metadata and the
/// `_server_log`), opened without Swift types from the schema clients register.
///
/// The server is itself a replica of the dataset and runs the same merge code as clients. All
/// writes (schema registration, pushes) take `writeLock`, so they run one at a time; reads
/// (pulls, snapshots) run on the replica's connection and see committed state only. Every
/// operation either completes or leaves the dataset unchanged.
///
/// The server is the only writer of its store files, so it also remembers where the log ends:
/// a pull that is already at the end (the common poll) is answered without touching SQLite.
package final class DatasetStore: @unchecked Sendable {
    // @unchecked: `opened`, `logEnd`, `logGeneration` and `isLogChanging` are only accessed
    // while holding `stateLock`.

    /// What a schema registration did.
    package enum Registration: String, Sendable {
        case created, unchanged, migrated
    }

    /// What a push did.
    package struct PushResult: Sendable {
        package var applied: [Dot]
        package var alreadyApplied: [Dot]
        package var vector: VersionVector
        package var cursor: Int64
    }

    /// One page of the log.
    package struct PullPage: Sendable {
        package var changeSets: [ChangeSet]
        package var cursor: Int64
        package var more: Bool
    }

    /// A consistent copy of the store file.
    package struct Snapshot: Sendable {
        package var data: Data
        package var cursor: Int64
    }

    package let name: String
    package let directory: URL
    package var storePath: String { directory.appendingPathComponent("store.sqlite").path }

    private let maxClockSkewMilliseconds: UInt64
    private let clock: @Sendable () -> UInt64
    private let writeLock = NSLock()
    private let stateLock = NSLock()
    private var opened: SyncReplica?
    /// A cursor no logged entry lies beyond (one a pull found nothing after, or a push's last),
    /// never above the highest cursor assigned; `nil` when unknown.
    private var logEnd: Int64?
    /// Bumped when a push starts: a pull that read the log before may not record what it saw.
    private var logGeneration: UInt64 = 0
    /// While a push runs, the end is unknown (it may commit and then fail to say where it ended).
    private var isLogChanging = false

    /// - Parameters:
    ///   - directory: `DIR/datasets/<name>`; created at the first schema registration.
    ///   - maxClockSkew: how far (seconds) a change set's HLC may lie ahead of `clock`.
    ///   - clock: the server's wall clock in milliseconds since 1970.
    package init(name: String, directory: URL, maxClockSkew: Double,
                 clock: @escaping @Sendable () -> UInt64 = HybridLogicalClock.wallClockMilliseconds) {
        self.name = name
        self.directory = directory
        self.maxClockSkewMilliseconds = UInt64(max(0, min(maxClockSkew, 1e12)) * 1000)
        self.clock = clock
    }

    // MARK: Opening

    /// The replica, opening the store file the first time; `nil` while no schema is registered.
    private func replicaIfRegistered() throws -> SyncReplica? {
        stateLock.lock()
        defer { stateLock.unlock() }
        if let opened { return opened }
        // A file without a schema is one whose registration never committed (the server died
        // during it): the dataset is still unregistered.
        guard try ObjectStore.storedSchema(at: storePath) != nil else { return nil }
        let replica = try SyncReplica(store: try ObjectStore(existingAt: storePath))
        try replica.withConnection { try ServerLog.install(on: $0) }
        opened = replica
        return replica
    }

    /// The server's replica of this dataset; throws ``DatasetError/schemaNotRegistered(dataset:)`` before registration.
    package func requireReplica() throws -> SyncReplica {
        guard let replica = try replicaIfRegistered() else { throw DatasetError.schemaNotRegistered(dataset: name) }
        return replica
    }

    private func replace(with replica: SyncReplica) {
        stateLock.lock()
        opened = replica
        logGeneration &+= 1
        logEnd = nil
        stateLock.unlock()
    }

    /// What a pull needs before reading: the replica, the remembered end of the log and the
    /// generation to hand back to ``noteLogEnd(_:of:generation:)``.
    private func replicaAndLogEnd() throws -> (replica: SyncReplica, end: Int64?, generation: UInt64) {
        let replica = try requireReplica()
        stateLock.lock()
        defer { stateLock.unlock() }
        return (replica, opened === replica ? logEnd : nil, logGeneration)
    }

    /// Records that a pull found nothing logged after `cursor`, unless a push started since.
    private func noteLogEnd(_ cursor: Int64, of replica: SyncReplica, generation: UInt64) {
        stateLock.lock()
        defer { stateLock.unlock() }
        guard opened === replica, generation == logGeneration, !isLogChanging else { return }
        logEnd = max(logEnd ?? cursor, cursor)
    }

    /// Forgets the end of the log while a push runs. Called under `writeLock`.
    private func beginLogChange() {
        stateLock.lock()
        defer { stateLock.unlock() }
        logGeneration &+= 1
        isLogChanging = true
        logEnd = nil
    }

    /// Records where a push left the log (`nil` if it failed and the end is unknown). Called
    /// under `writeLock`, before the push answers, so any pull that starts after the answer
    /// sees the new end.
    private func endLogChange(_ end: Int64?, of replica: SyncReplica) {
        stateLock.lock()
        defer { stateLock.unlock() }
        isLogChanging = false
        if let end, opened === replica { logEnd = end }
    }

    // MARK: Schema

    /// The registered schema, or `nil` before the first registration.
    package func schema() throws -> SchemaDocument? {
        try replicaIfRegistered()?.store.schemaDocument
    }

    /// Registers `json` (a LocalStore `SchemaDocument`): creates the store the first time, accepts
    /// the same schema again, migrates to an additive change, refuses anything else.
    package func registerSchema(_ json: Data) throws -> (document: SchemaDocument, registration: Registration) {
        let document = try DatasetStore.parseSchema(json)
        writeLock.lock()
        defer { writeLock.unlock() }
        let current = try replicaIfRegistered()
        if let current, current.store.schemaDocument.versionHash == document.versionHash {
            return (current.store.schemaDocument, .unchanged)
        }
        if current == nil {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        let store: ObjectStore
        do {
            store = try ObjectStore(path: storePath, schema: document, policy: .additiveOnly)
        } catch let error as StoreError where error.code == .migrationImpossible {
            throw DatasetError.schemaIncompatible(error.message)
        } catch let error as StoreError where error.code == .invalidSchema {
            throw DatasetError.invalidSchema(error.message)
        }
        let replica = try SyncReplica(store: store)
        try replica.withConnection { try ServerLog.install(on: $0) }
        replace(with: replica)
        return (store.schemaDocument, current == nil ? .created : .migrated)
    }

    /// Decodes a schema document; decoding checks that its `versionHash` is the hash of its
    /// entities (the one definition of that hash is LocalStore's).
    static func parseSchema(_ json: Data) throws -> SchemaDocument {
        let document: SchemaDocument
        do {
            document = try SchemaDocument(jsonData: json)
        } catch let error as StoreError {
            throw DatasetError.invalidSchema(error.message + "; send the schema exactly as ObjectStore.exportSchema() writes it")
        } catch {
            throw DatasetError.invalidSchema("the body is not a schema document: \(error)")
        }
        guard document.formatVersion == 1 else {
            throw DatasetError.invalidSchema("schema formatVersion \(document.formatVersion) is not supported (expected 1)")
        }
        return document
    }

    // MARK: Push

    /// Applies a batch (the body of a push) in one transaction and logs what it applied.
    package func push(_ body: Data) throws -> PushResult {
        _ = try requireReplica()
        let (changeSets, _) = try ChangeSetCoding.decode(body)
        try ChangeSet.checkStorableRanges(changeSets)
        try checkClockSkew(changeSets)
        writeLock.lock()
        defer { writeLock.unlock() }
        // A schema registration may have replaced the replica while this push waited.
        let current = try requireReplica()
        beginLogChange()
        var newLogEnd: Int64?
        defer { endLogChange(newLogEnd, of: current) }
        let result: SyncReplica.MergeResult
        do {
            result = try current.apply(changeSets) { connection, applied in
                try ServerLog.append(applied, on: connection)
            }
        } catch let error as SyncError where error.code == .causalityViolation {
            throw DatasetError.causalityViolation(error.message, vector: try current.versionVector())
        }
        // Both read under the write lock, so they describe the state right after this push.
        let vector = try current.versionVector()
        let cursor = try current.withConnection { try ServerLog.lastCursor(on: $0) }
        newLogEnd = cursor
        return PushResult(applied: result.applied, alreadyApplied: result.alreadyApplied, vector: vector, cursor: cursor)
    }

    private func checkClockSkew(_ changeSets: [ChangeSet]) throws {
        let now = clock()
        let allowed = now &+ maxClockSkewMilliseconds
        if let ahead = changeSets.first(where: { $0.hlc.milliseconds > allowed }) {
            throw DatasetError.clockSkew(
                "change set \(ahead.dot) has HLC time \(ahead.hlc.milliseconds) ms, \(ahead.hlc.milliseconds - now) ms ahead of the server clock (\(now) ms); at most \(maxClockSkewMilliseconds) ms are allowed: correct the device clock",
                serverTime: now)
        }
    }

    // MARK: Pull

    /// The change sets logged after `cursor`: at most `limit` log entries are scanned, those of
    /// `excluding` are left out (they still advance the returned cursor).
    package func pull(after cursor: Int64, limit: Int, excluding: ReplicaID?) throws -> PullPage {
        let (replica, end, generation) = try replicaAndLogEnd()
        if let end, cursor == end {
            // Nothing is logged after the end and every push moves the end before it answers: a
            // pull racing a push may miss it, as if it had arrived first; a later pull cannot.
            return PullPage(changeSets: [], cursor: cursor, more: false)
        }
        let (entries, highest) = try replica.withConnection { connection in
            let highest = try ServerLog.highestAssignedCursor(on: connection)
            guard cursor >= 0, cursor <= highest else { return ([ServerLog.Entry](), highest) }
            return (try ServerLog.entries(after: cursor, limit: limit + 1, on: connection), highest)
        }
        guard cursor >= 0, cursor <= highest else {
            throw DatasetError.invalidCursor("cursor \(cursor) is not one this server handed out (its log ends at \(highest))")
        }
        if entries.isEmpty { noteLogEnd(cursor, of: replica, generation: generation) }
        let page = entries.prefix(limit)
        let dots = page.map(\.dot).filter { $0.replica != excluding }
        // Logged change sets are committed, so reading them after releasing the connection is safe.
        return PullPage(changeSets: try replica.storedChangeSets(dots), cursor: page.last?.cursor ?? cursor, more: entries.count > limit)
    }

    // MARK: Snapshot

    /// A consistent copy of the store file (SQLite `VACUUM INTO`) and the log cursor it includes.
    /// The copy leaves out the server's log, which clients have no use for.
    package func snapshot() throws -> Snapshot {
        let replica = try requireReplica()
        let temporary = directory.appendingPathComponent("snapshot-\(UUID().uuidString).sqlite").path
        defer {
            for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: temporary + suffix) }
        }
        try replica.withConnection { try $0.run("VACUUM INTO ?", [.text(temporary)]) }
        let cursor = try DatasetStore.finishSnapshot(at: temporary)
        return Snapshot(data: try Data(contentsOf: URL(fileURLWithPath: temporary)), cursor: cursor)
    }

    /// Reads the cursor the copy includes, then drops the log from it.
    private static func finishSnapshot(at path: String) throws -> Int64 {
        let connection = try SQLiteConnection(path: path)
        let cursor = try ServerLog.lastCursor(on: connection)
        try connection.execute("DROP TABLE IF EXISTS _server_log; DELETE FROM sqlite_sequence WHERE name = '_server_log'; VACUUM")
        return cursor
    }
}

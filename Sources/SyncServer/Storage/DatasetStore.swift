import Codecs
import Foundation
import LocalStoreCore
import SyncEngine

/// One dataset on the server: its ``DatasetEngine`` (merged state and change-set log), opened
/// from the schema clients register, and the protocol's rules around it (schema checks, clock
/// skew, cursors).
///
/// All writes (schema registration, pushes) take `writeLock`, so they run one at a time; reads
/// (pulls, snapshots) see committed state only. Every operation either completes or leaves the
/// dataset unchanged.
///
/// A server that is the only writer of its datasets also remembers where the log ends: a pull
/// that is already at the end (the common poll) is answered without asking the engine. With
/// shared storage (several instances on one PostgreSQL database) every pull asks the engine.
package final class DatasetStore: @unchecked Sendable {
    // @unchecked: `opened`, `logEnd`, `logGeneration` and `isLogChanging` are only accessed
    // while holding `stateLock`.

    /// What a schema registration did.
    package enum Registration: String, Sendable {
        /// The first registration created the dataset's store.
        case created
        /// The dataset holds this schema already.
        case unchanged
        /// An additive change: the store migrated to it.
        case migrated
        /// An older app's schema: the dataset's current one extends it additively, so the app
        /// syncs as it is (it keeps what it does not know) and nothing changes.
        case older
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
        /// The digest of the log up to `cursor`, which the client sends back with it.
        package var digest: LogDigest
        package var more: Bool
        /// The dataset's stable vector (``DatasetEngine/stableVector()``).
        package var stable: VersionVector = VersionVector()
    }

    /// A consistent copy of the store file.
    package struct Snapshot: Sendable {
        package var data: Data
        /// The log position the copy includes: the client pulls after its cursor, sending its digest.
        package var position: LogPosition
    }

    package let name: String
    /// Where the dataset's files are; snapshots are written there before they are sent.
    package let directory: URL
    /// The store file, with the SQLite engine (``DatasetRegistry``'s default).
    package var storePath: String { directory.appendingPathComponent("store.sqlite").path }
    private let engines: any DatasetEngineProvider

    private let maxClockSkewMilliseconds: UInt64
    private let clock: @Sendable () -> UInt64
    /// Whether other processes append to the log too, so the remembered end cannot be trusted.
    private let logIsShared: Bool
    private let writeLock = NSLock()
    private let stateLock = NSLock()
    private var opened: (any DatasetEngine)?
    /// A cursor no logged entry lies beyond (one a pull found nothing after, or a push's last),
    /// never above the highest cursor assigned, with the log's digest there; `nil` when unknown.
    private var logEnd: (cursor: Int64, digest: LogDigest)?
    /// Bumped when a push starts: a pull that read the log before may not record what it saw.
    private var logGeneration: UInt64 = 0
    /// While a push runs, the end is unknown (it may commit and then fail to say where it ended).
    private var isLogChanging = false

    /// - Parameters:
    ///   - directory: `DIR/datasets/<name>`; created at the first schema registration.
    ///   - engines: opens and creates the dataset's engine.
    ///   - maxClockSkew: how far (seconds) a change set's HLC may lie ahead of `clock`.
    ///   - clock: the server's wall clock in milliseconds since 1970.
    ///   - logIsShared: whether other processes append to the dataset's log too.
    package init(name: String, directory: URL, engines: any DatasetEngineProvider, maxClockSkew: Double,
                 clock: @escaping @Sendable () -> UInt64 = HybridLogicalClock.wallClockMilliseconds, logIsShared: Bool = false) {
        self.name = name
        self.logIsShared = logIsShared
        self.directory = directory
        self.engines = engines
        self.maxClockSkewMilliseconds = UInt64(max(0, min(maxClockSkew, 1e12)) * 1000)
        self.clock = clock
    }

    // MARK: Opening

    /// The engine, opening it the first time; `nil` while no schema is registered.
    private func engineIfRegistered() throws -> (any DatasetEngine)? {
        stateLock.lock()
        defer { stateLock.unlock() }
        if let opened { return opened }
        guard let engine = try engines.openEngine(for: name) else { return nil }
        opened = engine
        return engine
    }

    /// The dataset's engine; throws ``DatasetError/schemaNotRegistered(dataset:)`` before registration.
    package func requireEngine() throws -> any DatasetEngine {
        guard let engine = try engineIfRegistered() else { throw DatasetError.schemaNotRegistered(dataset: name) }
        return engine
    }

    private func replace(with engine: any DatasetEngine) {
        stateLock.lock()
        opened = engine
        logGeneration &+= 1
        logEnd = nil
        stateLock.unlock()
    }

    /// What a pull needs before reading: the engine, the remembered end of the log and the
    /// generation to hand back to ``noteLogEnd(_:of:generation:)``.
    private func engineAndLogEnd() throws -> (engine: any DatasetEngine, end: (cursor: Int64, digest: LogDigest)?, generation: UInt64) {
        let engine = try requireEngine()
        stateLock.lock()
        defer { stateLock.unlock() }
        return (engine, opened === engine ? logEnd : nil, logGeneration)
    }

    /// Records that a pull found nothing logged after `cursor`, unless a push started since.
    private func noteLogEnd(_ cursor: Int64, digest: LogDigest, of engine: any DatasetEngine, generation: UInt64) {
        stateLock.lock()
        defer { stateLock.unlock() }
        guard !logIsShared, opened === engine, generation == logGeneration, !isLogChanging else { return }
        if let logEnd, logEnd.cursor >= cursor { return }
        logEnd = (cursor, digest)
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
    private func endLogChange(_ end: (cursor: Int64, digest: LogDigest)?, of engine: any DatasetEngine) {
        stateLock.lock()
        defer { stateLock.unlock() }
        isLogChanging = false
        if let end, !logIsShared, opened === engine { logEnd = end }
    }

    // MARK: Schema

    /// The registered schema, or `nil` before the first registration.
    package func schema() throws -> SchemaDocument? {
        try engineIfRegistered()?.currentSchema()
    }

    /// Every schema the dataset was registered with, oldest first (empty before the first registration).
    package func schemaVersions() throws -> [SchemaVersion] {
        try engineIfRegistered()?.schemaVersions() ?? []
    }

    /// Registers `json` (a LocalStore `SchemaDocument`): creates the store the first time, accepts
    /// the same schema again, migrates to an additive change, accepts an older app's schema that
    /// the current one extends additively (changing nothing), refuses anything else. Returns the
    /// schema the dataset holds afterwards.
    package func registerSchema(_ json: Data) throws -> (document: SchemaDocument, registration: Registration) {
        let document = try DatasetStore.parseSchema(json)
        writeLock.lock()
        defer { writeLock.unlock() }
        let current = try engineIfRegistered()
        if let current {
            let currentSchema = try current.currentSchema()
            if currentSchema.versionHash == document.versionHash { return (currentSchema, .unchanged) }
            if case .additive = currentSchema.compatibility(with: document) { return (currentSchema, .older) }
        }
        let engine: any DatasetEngine
        do {
            engine = try engines.createEngine(for: name, schema: document)
        } catch let error as StoreError where error.code == .migrationImpossible {
            throw DatasetError.schemaIncompatible(error.message)
        } catch let error as StoreError where error.code == .invalidSchema {
            throw DatasetError.invalidSchema(error.message)
        }
        replace(with: engine)
        return (engine.schema, current == nil ? .created : .migrated)
    }

    /// Decodes a schema document (which checks that its `versionHash` is the hash of its entities).
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
        do {
            // Checked here too, not only when a store is made: an older app's schema is accepted
            // without one.
            try document.validateTableNames()
            try document.validateColumnNames()
        } catch let error as StoreError {
            throw DatasetError.invalidSchema(error.message)
        }
        return document
    }

    // MARK: Push

    /// Applies a batch (the body of a push by `pusher`) in one transaction and logs what it applied.
    package func push(_ body: Data, pushedBy pusher: ReplicaCredentials?) throws -> PushResult {
        let engine = try requireEngine()
        let (changeSets, _) = try ChangeSetCoding.decode(body)
        // Validated once, before waiting for the lock; the engine validates it again only if a
        // schema registration replaced it with one of another schema while this push waited.
        let batch = try engine.validate(changeSets)
        try checkClockSkew(changeSets)
        return try pushUnderWriteLock { try $0.apply(batch, pushedBy: pusher) }
    }

    /// Runs `apply` on the current engine under the write lock, with the log end published when
    /// it is done, and answers what it did.
    func pushUnderWriteLock(_ apply: (any DatasetEngine) throws -> DatasetApplyResult) throws -> PushResult {
        writeLock.lock()
        defer { writeLock.unlock() }
        let current = try requireEngine()
        beginLogChange()
        var newLogEnd: (cursor: Int64, digest: LogDigest)?
        defer { endLogChange(newLogEnd, of: current) }
        let result: DatasetApplyResult
        do {
            result = try apply(current)
        } catch let error as SyncError where error.code == .causalityViolation {
            throw DatasetError.causalityViolation(error.message, vector: try current.versionVector())
        } catch DatasetEngineError.replicaRetired(let replica, let state) {
            throw DatasetStore.retiredError(replica, state: state, dataset: name)
        }
        // The result's vector and cursor were read under the write lock: the state right after this push.
        newLogEnd = (result.cursor, result.digest)
        return PushResult(applied: result.applied, alreadyApplied: result.alreadyApplied, vector: result.vector, cursor: result.cursor)
    }

    func checkClockSkew(_ changeSets: [ChangeSet]) throws {
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
    /// `excluding` are left out (they still advance the returned cursor). With a `digest`, the
    /// log up to `cursor` must be the one it names.
    ///
    /// `excluding` names the pulling replica: a retired one is refused, and the pull records
    /// that it holds the log up to `cursor` and what it reported of its unpushed change sets and
    /// of the deleted objects it forgot (see ``DatasetEngine/recordPull(by:after:unpushed:forgotten:)``).
    package func pull(after cursor: Int64, digest: LogDigest? = nil, limit: Int, excluding: ReplicaID?,
                      unpushed: UnpushedBounds = .none, forgotten: VersionVector? = nil) throws -> PullPage {
        let engine = try requireEngine()
        var page = try readPage(after: cursor, digest: digest, limit: limit, excluding: excluding)
        do {
            // After the read, which refuses a cursor the log never handed out.
            if let excluding { try engine.recordPull(by: excluding, after: cursor, unpushed: unpushed, forgotten: forgotten) }
        } catch DatasetEngineError.replicaRetired(let replica, let state) {
            throw DatasetStore.retiredError(replica, state: state, dataset: name)
        }
        page.stable = try engine.stableVector()
        return page
    }

    /// The error a refused replica gets.
    static func retiredError(_ replica: ReplicaID, state: ReplicaState, dataset: String) -> DatasetError {
        let why = state == .silent ? "was silent for longer than the server's replica horizon" : "was retired by an operator"
        return .replicaRetired(
            "replica \(replica.storageText) of dataset '\(dataset)' \(why): start again from a snapshot under a new replica ID, replaying its unpushed change sets")
    }

    private func readPage(after cursor: Int64, digest: LogDigest?, limit: Int, excluding: ReplicaID?) throws -> PullPage {
        let (engine, end, generation) = try engineAndLogEnd()
        if let end, cursor == end.cursor, digest == nil || digest == end.digest {
            // Nothing is logged after the end and every push moves the end before it answers: a
            // pull racing a push may miss it, as if it had arrived first; a later pull cannot.
            return PullPage(changeSets: [], cursor: cursor, digest: end.digest, more: false)
        }
        let page: ChangeSetLogPage
        do {
            page = try engine.readLog(after: cursor, digest: digest, limit: limit, excluding: excluding)
        } catch DatasetEngineError.unknownCursor(let unknown, let logEnd) {
            throw DatasetError.invalidCursor("cursor \(unknown) is not one this server handed out (its log ends at \(logEnd))")
        } catch DatasetEngineError.historyCompacted(let compacted, let logStart, let unknown) {
            throw DatasetError.historyCompacted(
                "the log was compacted up to cursor \(logStart), and change set \(unknown) logged after cursor \(compacted) is not one the puller is known to have: start again from a snapshot",
                logStart: logStart)
        } catch DatasetEngineError.cursorMismatch(let mismatched) {
            throw DatasetError.invalidCursor(
                "the log up to cursor \(mismatched) is not the one afterDigest names (the server was restored from a backup or its log was rebuilt): pull again from cursor 0")
        }
        // Cursors only grow: a page that did not move the cursor found nothing after it.
        if page.cursor == cursor { noteLogEnd(cursor, digest: page.digest, of: engine, generation: generation) }
        return PullPage(changeSets: page.changeSets, cursor: page.cursor, digest: page.digest, more: page.hasMore)
    }

    // MARK: Replicas

    /// Every replica the dataset knows, and the policy that tells their states.
    package func replicas() throws -> (records: [ReplicaRecord], policy: ReplicaPolicy) {
        let engine = try requireEngine()
        return (try engine.replicas(), engine.replicaPolicy)
    }

    /// Retires `replica` (see ``DatasetEngine/retire(_:)``).
    package func retire(_ replica: ReplicaID) throws {
        try requireEngine().retire(replica)
    }

    /// `syncd_stable_vector_lag`: how far the stable vector lags the dataset's vector, summed
    /// over its entries; `nil` while the dataset is not open.
    package func stableVectorLag() throws -> UInt64? {
        stateLock.lock()
        let engine = opened
        stateLock.unlock()
        guard let engine else { return nil }
        return ReplicaRegistry.lag(of: try engine.stableVector(), behind: try engine.versionVector())
    }

    // MARK: Compaction

    /// Compacts the log below the vector `stableVector` gives for the engine (see
    /// ``DatasetEngine/compactLog(stable:)``), one write at a time with pushes; `nil` when the
    /// dataset has no schema or `stableVector` gives no vector.
    package func compactLog(stableVector: (any DatasetEngine) throws -> VersionVector?) throws -> CompactionReport? {
        writeLock.lock()
        defer { writeLock.unlock() }
        guard let engine = try engineIfRegistered(), let stable = try stableVector(engine) else { return nil }
        return try engine.compactLog(stable: stable)
    }

    // MARK: Snapshot

    /// A consistent copy of the dataset as a store file, and the log position it includes.
    package func snapshot() throws -> Snapshot {
        let engine = try requireEngine()
        let temporary = directory.appendingPathComponent("snapshot-\(UUID().uuidString).sqlite").path
        defer {
            for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: temporary + suffix) }
        }
        let position = try engine.writeSnapshot(to: temporary)
        return Snapshot(data: try Data(contentsOf: URL(fileURLWithPath: temporary)), position: position)
    }
}

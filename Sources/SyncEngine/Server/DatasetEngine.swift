import Codecs
import Foundation
import LocalStoreCore

/// The storage and merge engine behind one dataset of a sync server: everything a server
/// needs, and all it may use, to store a dataset's change sets and hand them out again.
///
/// An engine keeps the dataset's merged state and a log of every change set it applied, in the
/// order it applied them (which respects causality). Each log entry has a cursor: an integer
/// that only grows and is never reused, so a client that has seen the log up to a cursor pulls
/// exactly what follows it. See <doc:ServerStorage>.
///
/// Engines serialize their own writes and reads; a server may call them from any thread.
public protocol DatasetEngine: AnyObject, Sendable {
    /// The schema of the dataset's store as this engine last knew it (no I/O).
    var schema: SchemaDocument { get }

    /// The dataset's schema as its storage holds it now: a storage shared by several servers
    /// may hold one another server registered, which the engine takes first.
    ///
    /// - Throws: when the storage cannot be read.
    func currentSchema() throws -> SchemaDocument

    /// Every schema the dataset was registered with, oldest first; the last is the current one.
    func schemaVersions() throws -> [SchemaVersion]

    /// The highest seq applied from every replica.
    func versionVector() throws -> VersionVector

    /// Refuses a batch this engine could not store, before anything is applied and without
    /// taking any lock: seqs out of range, and values that do not fit the schema's columns.
    ///
    /// Servers validate a pushed batch with this before they wait for their write lock, and
    /// hand the result to ``apply(_:pushedBy:)``, which does not validate it again unless the
    /// schema changed meanwhile. Engines build the result with
    /// ``ValidatedBatch/init(validating:against:)``, which runs the protocol's checks.
    ///
    /// - Throws: ``SyncError`` `.malformedChangeSet` or `.schemaMismatch`, naming the change set.
    func validate(_ changeSets: [ChangeSet]) throws -> ValidatedBatch

    /// Applies a validated batch of change sets atomically: merges what was not applied before,
    /// checks the author of each change set it applies and appends what it applied to the log,
    /// all in one transaction, or changes nothing. A batch validated against another schema
    /// than ``schema`` (one registered while the batch waited) is validated again first.
    ///
    /// Authors are checked as ``ChangeSetAuthenticator/verify(_:pushedBy:registeredKey:register:)``
    /// describes: the engine keeps each replica's key, registered by the replica's first push as
    /// `pusher`, and every change set it stores must carry its author's authenticator.
    ///
    /// - Throws: ``SyncError`` (`.causalityViolation` when a change set needs change sets
    ///   neither applied nor in the batch, `.conflictingChangeSet` naming a dot that was applied
    ///   before with other contents or appears twice in the batch with different contents,
    ///   `.schemaMismatch` when a value does not fit its column, `.replicaKeyMismatch` when
    ///   `pusher`'s key is not the one registered for it, `.unverifiedAuthor` naming a change set
    ///   whose author cannot be verified), or a ``StoreError`` from the storage.
    func apply(_ batch: ValidatedBatch, pushedBy pusher: ReplicaCredentials?) throws -> DatasetApplyResult

    /// The log after `cursor`: at most `limit` entries are read; the change sets of `excluding`
    /// are left out of the page but still advance its cursor.
    ///
    /// With a `digest` (one a page handed out with `cursor`), the log up to `cursor` must be the
    /// one that digest names; without one, the cursor is trusted.
    ///
    /// - Throws: ``DatasetEngineError/unknownCursor(_:logEnd:)`` for a cursor the log never
    ///   handed out (negative, or beyond its end), ``DatasetEngineError/cursorMismatch(_:)``
    ///   when the log up to `cursor` is not the one `digest` names.
    func readLog(after cursor: Int64, digest: LogDigest?, limit: Int, excluding: ReplicaID?) throws -> ChangeSetLogPage

    /// Writes a consistent copy of the dataset as a store file a client can open (see
    /// ``SyncReplica/adoptSnapshot(at:)``) to `path`, and returns the position in the log the
    /// copy includes: its cursor, and the digest of the log up to it, which the client sends
    /// back with the cursor on its first pull. The copy holds no replica keys.
    func writeSnapshot(to path: String) throws -> LogPosition

    // MARK: Replicas (see ReplicaRegistry.swift)

    /// The horizon and clock of the dataset's replica registry. ``apply(_:pushedBy:)`` also
    /// refuses a retired (or silent beyond the horizon) pusher with
    /// ``DatasetEngineError/replicaRetired(_:state:)`` and records what it pushed, in its transaction.
    var replicaPolicy: ReplicaPolicy { get }

    /// Records that `replica` pulled after `cursor` (a cursor the log handed out, which the
    /// replica merged up to), reporting `unpushed` of what it has yet to push and, when it says,
    /// the vector it holds no deleted object below (`forgotten`, see
    /// ``ReplicaRecord/forgottenBelow``): its acknowledged vector grows to cover the log up to
    /// `cursor`, its unpushed bounds are replaced, and so is its forgotten vector when given.
    /// Writes only when something changed or the last-seen time is stale.
    ///
    /// - Throws: ``DatasetEngineError/replicaRetired(_:state:)`` when the replica is refused.
    func recordPull(by replica: ReplicaID, after cursor: Int64, unpushed: UnpushedBounds, forgotten: VersionVector?) throws

    /// Every replica the dataset heard from or retired, in replica order.
    func replicas() throws -> [ReplicaRecord]

    /// Retires `replica` (recording it if the dataset never heard from it): its pushes and
    /// pulls are refused from now on, and the stable vector no longer waits for it.
    func retire(_ replica: ReplicaID) throws

    /// The meet of the acknowledged vectors of the active replicas: what every one of them
    /// has seen (the dataset's vector when none is active), lowered to what each change set the
    /// dataset holds that not every active replica has yet had seen when it was written (see
    /// ``ReplicaRecord/settled``). Recomputed at most every second.
    func stableVector() throws -> VersionVector
    /// Compacts the log below `stable` (a vector every active replica has seen): see
    /// <doc:ServerStorage> and ``CompactionReport``.
    ///
    /// - Throws: a ``StoreError`` from the storage, or ``SyncError`` `.notSyncable` when the
    ///   storage cannot compact.
    func compactLog(stable: VersionVector) throws -> CompactionReport
}

extension DatasetEngine {
    /// ``schema``: an engine whose storage only it writes always knows the current schema.
    public func currentSchema() throws -> SchemaDocument { schema }

    /// The log after `cursor`, trusting the cursor (see ``readLog(after:digest:limit:excluding:)``).
    public func readLog(after cursor: Int64, limit: Int, excluding: ReplicaID?) throws -> ChangeSetLogPage {
        try readLog(after: cursor, digest: nil, limit: limit, excluding: excluding)
    }
}

/// Opens and creates the engines of datasets: where a server's storage backend is chosen.
public protocol DatasetEngineProvider: Sendable {
    /// The engine of `dataset`, or `nil` while no schema was registered for it.
    func openEngine(for dataset: String) throws -> (any DatasetEngine)?

    /// Creates `dataset` with `schema`, or migrates its store to `schema` when it has another one.
    ///
    /// - Throws: ``StoreError`` `.migrationImpossible` when the stored schema cannot change into
    ///   `schema` by additive changes, `.invalidSchema` when `schema` is inconsistent.
    func createEngine(for dataset: String, schema: SchemaDocument) throws -> any DatasetEngine
}

/// A batch of change sets that passed the protocol's checks before it is applied: seqs and
/// vector entries that fit SQLite's integers, and values that fit the schema's columns (see
/// ``DatasetEngine/validate(_:)``).
///
/// It can only be made by validating, and it remembers the schema it was checked against, so
/// that an engine applies it without checking it again unless its schema changed since.
public struct ValidatedBatch: Sendable {
    /// The change sets, as they were given.
    public let changeSets: [ChangeSet]
    /// The ``SchemaDocument/versionHash`` of the schema the batch was validated against.
    public let schemaVersionHash: String

    /// Validates `changeSets` against `schema`.
    ///
    /// - Throws: ``SyncError`` `.malformedChangeSet` or `.schemaMismatch`, naming the change set.
    public init(validating changeSets: [ChangeSet], against schema: SchemaDocument) throws {
        try self.init(validating: changeSets, with: ChangeSetValidator(schema), schemaVersionHash: schema.versionHash)
    }

    /// What a replica applies of each change set it does not apply as it is (translated from
    /// older names, or without what its schema does not know), by dot; empty unless validated
    /// with a ``ChangeSetProjection``.
    let knownParts: [Dot: ChangeSet]

    /// Validates `changeSets` with the validator of the schema whose hash is `schemaVersionHash`
    /// (replicas keep theirs, which is costly to build for every batch). With a `projection`,
    /// older names are translated and, on a client, what the schema does not know is left out of
    /// what is validated and applied, and kept; without one, the merge refuses it.
    init(validating changeSets: [ChangeSet], with validator: ChangeSetValidator, schemaVersionHash: String,
         projection: ChangeSetProjection? = nil) throws {
        try ChangeSet.checkStorableRanges(changeSets)
        var knownParts: [Dot: ChangeSet] = [:]
        // A batch sets the same few attributes again and again: comparing two short names costs
        // less than hashing them (see ``ChangeSetValidator/validate(_:startingAt:created:last:)``).
        var last: ChangeSetValidator.Attribute?
        var runsOfSets: Set<Dot> = []
        for changeSet in changeSets {
            var created: Set<UUID> = []
            // Almost every change set is known and valid as it is, which one pass over its
            // operations finds; only one that is not is projected, then checked as projected.
            if let projection, let found = try? validator.validate(changeSet, startingAt: 0, created: &created, last: &last),
               found.setsNameKnownAttributes, projection.knowsEveryOperationButSets(of: changeSet) {
                if found.onlyLastWriterWinsSets { runsOfSets.insert(changeSet.dot) }
                continue
            }
            created = []
            let known = projection?.knownPart(of: changeSet)
            if let known { knownParts[changeSet.dot] = known }
            let findings = try validator.validate(known ?? changeSet, startingAt: 0, created: &created, last: &last)
            if findings.onlyLastWriterWinsSets { runsOfSets.insert(changeSet.dot) }
        }
        self.runsOfSets = runsOfSets
        self.changeSets = changeSets
        self.schemaVersionHash = schemaVersionHash
        self.knownParts = knownParts
    }

    /// The change sets whose applicable part (``applicablePart(of:)``) sets last-writer-wins
    /// attributes only: the merge holds them and resolves them together (``SetRun``).
    let runsOfSets: Set<Dot>

    /// What a replica applies of `changeSet`: itself, or its translated or known part.
    func applicablePart(of changeSet: ChangeSet) -> ChangeSet {
        knownParts.isEmpty ? changeSet : knownParts[changeSet.dot] ?? changeSet
    }
}

/// One schema a dataset was registered with (``DatasetEngine/schemaVersions()``).
public struct SchemaVersion: Sendable {
    /// The schema document; its `versionHash` names the version.
    public var schema: SchemaDocument
    /// When the server first held it; `nil` when it held it before it kept a history.
    public var registeredAt: Date?

    /// A version of `schema`, registered at `registeredAt`.
    public init(schema: SchemaDocument, registeredAt: Date?) {
        self.schema = schema
        self.registeredAt = registeredAt
    }
}

/// A position in a dataset's log: a cursor, and the digest of the log up to it.
public struct LogPosition: Sendable, Hashable {
    /// The cursor of the last log entry included (0: none).
    public var cursor: Int64
    /// The digest of the log up to ``cursor``.
    public var digest: LogDigest

    /// A position with these fields.
    public init(cursor: Int64, digest: LogDigest) {
        self.cursor = cursor
        self.digest = digest
    }
}

/// What ``DatasetEngine/apply(_:pushedBy:)`` did, and the state right after it.
public struct DatasetApplyResult: Sendable, Equatable {
    /// Change sets applied now, in the order they were logged.
    public var applied: [Dot]
    /// Change sets skipped because they were applied before.
    public var alreadyApplied: [Dot]
    /// The dataset's version vector after the batch.
    public var vector: VersionVector
    /// The cursor of the last log entry after the batch.
    public var cursor: Int64
    /// The digest of the log up to ``cursor``.
    public var digest: LogDigest

    /// A result with these fields.
    public init(applied: [Dot], alreadyApplied: [Dot], vector: VersionVector, cursor: Int64, digest: LogDigest) {
        self.applied = applied
        self.alreadyApplied = alreadyApplied
        self.vector = vector
        self.cursor = cursor
        self.digest = digest
    }
}

/// One page of a dataset's log (see ``DatasetEngine/readLog(after:limit:excluding:)``).
public struct ChangeSetLogPage: Sendable {
    /// The change sets of the entries read, in log order.
    public var changeSets: [ChangeSet]
    /// The cursor of the last entry read; the cursor asked for when there was none.
    public var cursor: Int64
    /// The digest of the log up to ``cursor``, for the client to send back with it.
    public var digest: LogDigest
    /// Whether entries follow the last one read.
    public var hasMore: Bool

    /// A page with these fields.
    public init(changeSets: [ChangeSet], cursor: Int64, digest: LogDigest, hasMore: Bool) {
        self.changeSets = changeSets
        self.cursor = cursor
        self.digest = digest
        self.hasMore = hasMore
    }
}

/// A failure of a ``DatasetEngine`` that is not a ``SyncError`` or a ``StoreError``.
public enum DatasetEngineError: Error, Sendable, Equatable {
    /// A cursor the log never handed out; `logEnd` is the highest it did.
    case unknownCursor(Int64, logEnd: Int64)
    /// A cursor whose log entry differs from the one the client's digest names: the log was
    /// restored from a backup or rebuilt since the client pulled up to the cursor.
    case cursorMismatch(Int64)
    /// A replica that was retired, or was silent for longer than the horizon (`state`), pushed or pulled.
    case replicaRetired(ReplicaID, state: ReplicaState)
    /// A cursor before the compaction point (`logStart`, see ``DatasetEngine/compactLog(stable:)``)
    /// whose puller cannot be shown to have every compacted entry after it, such as `unknown`.
    case historyCompacted(Int64, logStart: Int64, unknown: Dot)
}

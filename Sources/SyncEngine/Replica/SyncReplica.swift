import Codecs
import Foundation
import LocalStoreCore
import Synchronization

/// A store set up for sync: every save records a change set, and change sets from other
/// replicas merge into it so that all replicas converge.
///
/// ```swift
/// let store = try ObjectStore(path: "todos.sqlite", entities: [TodoList.self, Todo.self])
/// let replica = try SyncReplica(store: store)
/// // … saves through store.makeContext() are recorded …
/// let missing = try replica.changeSets(missingFrom: peer.versionVector())
/// try peer.apply(missing)
/// ```
public final class SyncReplica: Sendable {
    /// The store this replica records and merges into.
    public let store: ObjectStore
    /// This replica's ID: permanent, unless the store starts again from a snapshot after the
    /// server retired the replica (``SyncClient/rebootstrap()``), which gives it a new one.
    public var replicaID: ReplicaID { identity.withLock { $0 } }
    let identity: Mutex<ReplicaID>
    let schema: SyncSchema
    /// Checks the values of arriving change sets against the schema.
    let validator: ChangeSetValidator
    /// Translates older names of arriving operations and, on a client, leaves out of a merge what
    /// the schema does not know (a newer app's), which is kept; a server refuses it.
    let projection: ChangeSetProjection
    /// How many batches ``validate(_:)`` checked: what tests count to see that a batch pushed to
    /// a server is validated once, not again under the write lock.
    let batchesValidated = Atomic<Int>(0)
    private let connection: SerializedConnection
    let wallClock: @Sendable () -> UInt64
    /// Whether merges write the conflict journal: every client does; syncd's replica does not.
    let keepsConflictJournal: Bool

    /// Sets `store` up for sync (creating its sync tables and replica ID the first time) and
    /// starts recording its saves.
    ///
    /// - Parameter wallClock: milliseconds since 1970 used to stamp local change sets; tests
    ///   inject a fake one. Merging never reads it.
    public convenience init(store: ObjectStore, wallClock: @escaping @Sendable () -> UInt64 = HybridLogicalClock.wallClockMilliseconds) throws {
        try self.init(store: store, wallClock: wallClock, newReplicaID: UUID())
    }

    /// `newReplicaID` is the ID a store gets when it is set up for sync for the first time;
    /// seeded tests pass their own so runs replay exactly. A server's replica (`serving: true`)
    /// does not keep unknown operations (its schema is the newest, and what it does not know is
    /// an error) and keeps no conflict journal: no route serves one, and every replica that
    /// applies a change set journals what it loses there.
    init(store: ObjectStore, wallClock: @escaping @Sendable () -> UInt64, newReplicaID: ReplicaID, serving: Bool = false) throws {
        self.store = store
        self.wallClock = wallClock
        keepsConflictJournal = !serving
        schema = SyncSchema(store.schemaDocument, customMerges: store.customAttributeMerges)
        validator = ChangeSetValidator(store.schemaDocument)
        projection = ChangeSetProjection(schema: schema, validator: validator, keepsUnknown: !serving)
        let connection = try store.openConnection()
        let replicaID = try SyncTables.install(on: connection, newReplicaID: newReplicaID)
        identity = Mutex(replicaID)
        self.connection = SerializedConnection(connection)
        try mergeHistoryAgainIfSchemaChanged()
        store.saveObserver = ChangeRecorder(schema: schema, wallClock: wallClock)
    }

    /// Runs `body` with this replica's own connection.
    func withConnection<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try connection.withConnection(body)
    }

    /// This replica's secret key (32 bytes), which authenticates the change sets it authors.
    func replicaKey() throws -> [UInt8] {
        try withConnection { connection in
            guard let key = try SyncStateTable.replicaKey(on: connection) else {
                throw SyncError(.notSyncable, "\(connection.path) has no replica key")
            }
            return key
        }
    }

    /// This replica's ID and secret key, as a push sends them (``HTTPTransport/push(_:base:as:)``).
    /// The key proves to the server that a push comes from this replica: keep it secret.
    public func credentials() throws -> ReplicaCredentials {
        ReplicaCredentials(replica: replicaID, key: try replicaKey())
    }

    /// The highest seq applied from every replica.
    public func versionVector() throws -> VersionVector {
        try withConnection { try VersionVectorTable.vector(on: $0) }
    }

    /// This replica's latest HLC (issued or observed).
    public func latestHLC() throws -> HLC {
        try withConnection { HLC(rawValue: try SyncStateTable.value(of: .hlc, on: $0)) }
    }

    /// The change sets this replica has that a peer with `vector` lacks, in an order that
    /// respects causality (by `(HLC, replica ID)`).
    ///
    /// - Throws: ``SyncError`` `.historyCompacted` when the peer lacks change sets this store
    ///   dropped (``compactHistory(stable:droppingDeletedObjects:)``), naming the replica and range: the peer must
    ///   bootstrap from a server's snapshot instead.
    public func changeSets(missingFrom vector: VersionVector, limit: Int? = nil) throws -> [ChangeSet] {
        try withConnection { connection in
            if let dropped = try CompactionTable.droppedRange(missingFrom: vector, on: connection) {
                throw SyncError(.historyCompacted, """
                    \(connection.path) compacted its history: of the change sets of \(dropped.replica) after \(dropped.after) through \(dropped.through), \
                    which a peer at \(vector) lacks, some are dropped; bootstrap the peer from a server's snapshot
                    """)
            }
            return try ChangeSetTable.changeSets(missingFrom: vector, limit: limit, on: connection)
        }
    }

    /// What ``apply(_:)`` did.
    public struct MergeResult: Sendable, Equatable {
        /// Change sets applied now.
        public var applied: [Dot]
        /// Change sets skipped because they were applied before (applying twice changes nothing).
        public var alreadyApplied: [Dot]
        /// Objects whose stored rows changed; refresh contexts with them.
        public var changedObjectIDs: Set<UUID>
    }

    /// Applies a batch of remote change sets in one transaction: all or nothing.
    ///
    /// Change sets may arrive in any order within the batch; each is applied after those its
    /// version vector covers. A batch containing a change set whose predecessors are neither
    /// applied nor in the batch is refused with ``SyncError/Code/causalityViolation`` and
    /// changes nothing. A change set whose dot was applied before with other contents, or that
    /// appears twice in the batch with different contents, is refused with
    /// ``SyncError/Code/conflictingChangeSet`` naming the dot, and the batch changes nothing;
    /// the same contents again are skipped (``MergeResult/alreadyApplied``).
    /// A batch writing a value its column does not hold (another SQL type, out of range, `NULL`
    /// in a non-optional attribute, invalid JSON) is refused with
    /// ``SyncError/Code/schemaMismatch`` before anything is applied.
    public func apply(_ changeSets: [ChangeSet]) throws -> MergeResult {
        try apply(validate(changeSets)) { _, _ in }
    }

    /// ``apply(_:)`` of a batch validated before, with one more step in the same transaction:
    /// `alsoInTransaction` gets the change sets actually applied, in the order they were applied
    /// (``SQLiteDatasetEngine`` logs them there). A batch validated against another schema than
    /// this store's is validated again.
    func apply(_ batch: ValidatedBatch, alsoInTransaction: (SQLiteConnection, [ChangeSet]) throws -> Void) throws -> MergeResult {
        let batch = batch.schemaVersionHash == store.schemaDocument.versionHash ? batch : try validate(batch.changeSets)
        let changeSets = batch.changeSets
        let hub = store.changeHub
        return try hub.publishing { ticket, storeChange in try withConnection { connection in
            try connection.inTransaction {
                var vector = try VersionVectorTable.vector(on: connection)
                var result = MergeResult(applied: [], alreadyApplied: [], changedObjectIDs: [])
                var remaining: [ChangeSet] = []
                var firstInBatch: [Dot: ChangeSet] = [:]
                for changeSet in changeSets.sorted(by: { $0.stamp < $1.stamp }) {
                    // A dot names one change set forever: the same dot with other contents is a
                    // forgery or a corrupted replica, and taking either copy silently would let
                    // replicas diverge for good.
                    if let earlier = firstInBatch[changeSet.dot] {
                        guard try ChangeSetTable.sameContents(earlier, changeSet) else {
                            throw SyncError(.conflictingChangeSet, "change set \(changeSet.dot) appears twice in the batch with different contents")
                        }
                        result.alreadyApplied.append(changeSet.dot)
                        continue
                    }
                    firstInBatch[changeSet.dot] = changeSet
                    if vector.covers(changeSet.dot) {
                        guard try ChangeSetTable.storedContents(of: changeSet.dot, match: changeSet, on: connection) != false else {
                            throw SyncError(.conflictingChangeSet, "change set \(changeSet.dot) was applied before with different contents")
                        }
                        result.alreadyApplied.append(changeSet.dot)
                    } else {
                        remaining.append(changeSet)
                    }
                }
                let engine = try MergeEngine(schema: schema, connection: connection, keepsJournal: keepsConflictJournal)
                engine.storeChangeRecord = hub.hasSubscribers ? StoreChangeRecord() : nil
                var appliedInOrder: [ChangeSet] = []
                var keptObjects: Set<UUID>?
                var latest = HLC(rawValue: try SyncStateTable.value(of: .hlc, on: connection))
                while !remaining.isEmpty {
                    var next: [ChangeSet] = []
                    for changeSet in remaining {
                        if SyncReplica.isApplicable(changeSet, to: vector) {
                            try ChangeSetTable.store(changeSet, status: .remote, on: connection)
                            try merge(changeSet, of: batch, with: engine, keptObjects: &keptObjects, on: connection)
                            appliedInOrder.append(changeSet)
                            vector[changeSet.dot.replica] = changeSet.dot.seq
                            latest = max(latest, changeSet.hlc)
                            result.applied.append(changeSet.dot)
                        } else {
                            next.append(changeSet)
                        }
                    }
                    if next.count == remaining.count {
                        throw SyncReplica.causalityError(next[0], vector: vector)
                    }
                    remaining = next
                }
                result.changedObjectIDs = try engine.materialize()
                try SyncStateTable.set(.hlc, to: latest.rawValue, on: connection)
                try alsoInTransaction(connection, appliedInOrder)
                if let record = engine.storeChangeRecord {
                    storeChange = record.storeChange(origin: .merge)
                    ticket = hub.reserveTicket()
                }
                return result
            }
        } }
    }

    /// Refuses a batch this replica could not store, before anything is applied: seqs that do
    /// not fit SQLite's integers, and values that do not fit the schema's columns (wrong count,
    /// SQL type or range, `NULL` in a non-optional attribute, invalid JSON).
    ///
    /// - Throws: ``SyncError`` `.malformedChangeSet` or `.schemaMismatch`, naming the change set.
    func validate(_ changeSets: [ChangeSet]) throws -> ValidatedBatch {
        batchesValidated.add(1, ordering: .relaxed)
        return try ValidatedBatch(validating: changeSets, with: validator, schemaVersionHash: store.schemaDocument.versionHash,
                                  projection: projection)
    }

    static func isApplicable(_ changeSet: ChangeSet, to vector: VersionVector) -> Bool {
        guard vector[changeSet.dot.replica] == changeSet.dot.seq - 1 else { return false }
        return changeSet.vector.entries.allSatisfy { replica, seq in replica == changeSet.dot.replica || vector[replica] >= seq }
    }

    static func causalityError(_ changeSet: ChangeSet, vector: VersionVector) -> SyncError {
        var missing: [String] = []
        if vector[changeSet.dot.replica] < changeSet.dot.seq - 1 {
            missing.append("\(changeSet.dot.replica.storageText):\(vector[changeSet.dot.replica] + 1)...\(changeSet.dot.seq - 1)")
        }
        for (replica, seq) in changeSet.vector.sortedEntries where replica != changeSet.dot.replica && vector[replica] < seq {
            missing.append("\(replica.storageText):\(vector[replica] + 1)...\(seq)")
        }
        return SyncError(.causalityViolation,
                         "change set \(changeSet.dot) depends on change sets neither applied nor in the batch: \(missing.joined(separator: ", "))")
    }

    // MARK: Editing without Swift types

    /// Commits the edits `body` makes as one change set, in one transaction; returns it, or
    /// `nil` when nothing changed. See ``RecordEditor``.
    @discardableResult
    public func edit(_ body: (RecordEditor) throws -> Void) throws -> ChangeSet? {
        let hub = store.changeHub
        return try hub.publishing { ticket, storeChange in try withConnection { connection in
            try connection.inTransaction {
                let engine = try MergeEngine(schema: schema, connection: connection, keepsJournal: keepsConflictJournal)
                engine.storeChangeRecord = hub.hasSubscribers ? StoreChangeRecord() : nil
                let editor = RecordEditor(schema: schema, engine: engine)
                try body(editor)
                let operations = editor.operations
                guard !operations.isEmpty else { return nil }
                let changeSet = try ChangeSetTable.commitLocal(operations, wallClock: wallClock(), on: connection)
                // Values given without Swift types are checked as peers will check them: a value
                // they refuse would stay in the outbox for good.
                let findings = try validator.validate(changeSet)
                try engine.apply(changeSet, onlyLastWriterWinsSets: findings.onlyLastWriterWinsSets)
                try engine.materialize()
                try editor.checkSaveRules()
                if let record = engine.storeChangeRecord {
                    storeChange = record.storeChange(origin: .recordEdit)
                    ticket = hub.reserveTicket()
                }
                return changeSet
            }
        } }
    }

    /// Every stored object of `entity`, sorted by identifier.
    public func records(_ entity: String) throws -> [Record] {
        let description = try recordEntity(entity)
        return try withConnection { connection in
            return try description.rows.allRows(on: connection).compactMap {
                try StoredRelationships.record(description, row: $0, on: connection)
            }
        }
    }

    /// The stored object `id` of `entity`, if it exists.
    public func record(_ entity: String, id: UUID) throws -> Record? {
        let description = try recordEntity(entity)
        return try withConnection { connection in
            return try description.rows.row(id, on: connection).flatMap {
                try StoredRelationships.record(description, row: $0, on: connection)
            }
        }
    }

    private func recordEntity(_ name: String) throws -> SyncSchema.Entity {
        guard let entity = schema.entity(name) else { throw SyncError(.schemaMismatch, "the schema has no entity '\(name)'") }
        return entity
    }

    // MARK: Settings

    /// A value kept in the store file for tools built on SyncKit (server URL, dataset, cursor, …).
    public func setting(_ key: String) throws -> String? {
        try withConnection { try SyncStateTable.setting(key, on: $0) }
    }

    /// Stores (or, with `nil`, removes) a setting.
    public func setSetting(_ key: String, _ value: String?) throws {
        try withConnection { try SyncStateTable.setSetting(key, to: value, on: $0) }
    }

    /// Makes a store file copied from another replica (a server snapshot) a replica of its own:
    /// a fresh replica ID, seq restarting at 0, every change set in it counted as received.
    /// Call it before opening the file as a ``SyncReplica``.
    ///
    /// - Throws: ``SyncError`` `.notSyncable` when the file is not set up for sync,
    ///   `.unsupportedStoreFormat` when a newer release wrote it.
    public static func adoptSnapshot(at path: String) throws {
        let connection = try SQLiteConnection(path: path)
        try connection.inTransaction {
            guard try SyncStateTable.exists(on: connection) else {
                throw SyncError(.notSyncable, "\(path) is not a store set up for sync")
            }
            try SyncFormatTable.checkReadable(on: connection)
            try SyncStateTable.becomeNewReplica(UUID(), on: connection)
            try ChangeSetTable.markAllRemote(on: connection)
            // Journal entries are each replica's own, never exchanged: a new replica starts with
            // none (a snapshot of a syncd that kept a journal still carries its entries).
            try ConflictTable.removeAll(on: connection)
        }
    }

    /// Copies `other`'s conflict journal, numbers included, into this replica's empty one: a
    /// replica that starts again from a snapshot keeps the entries it journaled before.
    func takeConflictJournal(of other: SyncReplica) throws {
        let (rows, next) = try other.withConnection { connection in
            (try ConflictTable.rows(on: connection), try SyncStateTable.value(of: .journalNext, on: connection))
        }
        try withConnection { connection in
            try connection.inTransaction {
                for row in rows {
                    try ConflictTable.insert(first: row.first, count: Int(row.count), cause: row.cause, entries: row.entries, on: connection)
                }
                // Numbers go on from the other's, so none it gave is given again.
                try SyncStateTable.set(.journalNext, to: max(next, try SyncStateTable.value(of: .journalNext, on: connection)), on: connection)
            }
        }
    }

    // MARK: Conflict journal

    /// Every entry of the conflict journal, oldest first.
    public func conflicts() throws -> [ConflictEntry] {
        try withConnection { try ConflictJournal.entries(on: $0) }
    }

    /// How many journal entries are numbered above `number` (all of them, by default), without
    /// reading them.
    ///
    /// ```swift
    /// let before = try replica.lastConflictNumber()
    /// _ = try replica.apply(changeSets)
    /// print("\(try replica.conflictCount(after: before)) new conflicts")
    /// ```
    public func conflictCount(after number: Int64 = 0) throws -> Int {
        try withConnection { try ConflictJournal.count(after: number, on: $0) }
    }

    /// The number of the newest journal entry, 0 when the journal is empty.
    public func lastConflictNumber() throws -> Int64 {
        try withConnection { try ConflictJournal.lastNumber(on: $0) }
    }

    /// Removes journal entries up to and including `number` (all when `nil`). Numbers are never
    /// reused: later entries keep counting up. The pages the entries took go back to the file
    /// system as after a history compaction (``compactHistory(stable:droppingDeletedObjects:)``,
    /// "File size"), so a store whose journal grew large shrinks when its app clears it.
    public func clearConflicts(through number: Int64? = nil) throws {
        try withConnection { connection in
            _ = try clearingConflicts(on: connection) { () -> Int? in
                try ConflictJournal.clear(through: number, on: connection)
                return nil
            }
        }
    }

    /// Removes every journal entry but the newest `count` (none when `count` is 0 or less) and
    /// returns how many went: what ``SyncClient/Configuration/conflictRetention`` does after each
    /// pull that journaled. Entries are numbered one after the other and only the oldest are ever
    /// removed, so the entries kept are the `count` numbered up to ``lastConflictNumber()``.
    /// The freed pages stay in the file for the entries later merges journal, unless they are a
    /// quarter of it or more (a lower retention than before, a journal that had grown): those go
    /// back as with ``clearConflicts(through:)``.
    @discardableResult
    public func clearConflicts(keepingNewest count: Int) throws -> Int {
        try withConnection { connection in
            try clearingConflicts(on: connection, policy: .whenLarge) {
                let held = try ConflictJournal.count(after: 0, on: connection)
                let kept = max(0, count)
                guard held > kept else { return 0 }
                try ConflictJournal.clear(through: try ConflictJournal.lastNumber(on: connection) - Int64(kept), on: connection)
                return held - kept
            }
        }
    }

    /// Runs `clear` in a transaction (it returns how many entries went, `nil` when it does not
    /// count them), then gives the freed pages back to the file system as `policy` says, unless
    /// nothing went: a pull that leaves the journal under its retention pays no vacuum or WAL
    /// checkpoint.
    private func clearingConflicts(on connection: SQLiteConnection, policy: StoreFileSpace.Policy = .always,
                                   _ clear: () throws -> Int?) throws -> Int {
        let bytesBefore = StoreFileSpace.fileBytes(of: connection.path)
        let removed = try connection.inTransaction(clear)
        if removed != 0 { _ = StoreFileSpace.reclaim(on: connection, bytesBefore: bytesBefore, policy: policy) }
        return removed ?? 0
    }

    // MARK: Outbox

    /// Local change sets with the given status, oldest first.
    public func localChangeSets(status: OutboxStatus) throws -> [ChangeSet] {
        try withConnection { try ChangeSetTable.changeSets(of: replicaID, status: status, on: $0) }
    }

    /// Marks local change sets as sent, or acknowledged, in one transaction; dots of other
    /// replicas are skipped (they are not in the outbox).
    ///
    /// - Throws: ``SyncError`` `.invalidOutboxTransition` when a change set is not stored or
    ///   cannot move to `status` (see ``OutboxStatus/moving(to:changeSet:)``); nothing is marked then.
    public func mark(_ dots: [Dot], as status: OutboxStatus) throws {
        try withConnection { connection in
            try connection.inTransaction {
                for dot in dots where dot.replica == replicaID {
                    // A change set compaction dropped was acknowledged (the outbox's others stay).
                    let stored = try ChangeSetTable.status(of: dot, on: connection)
                    guard let current = try stored ?? (CompactionTable.compactedVector(on: connection).covers(dot) ? .acknowledged : nil) else {
                        throw SyncError(.invalidOutboxTransition, "change set \(dot) cannot become \(status.rawValue): this replica has not stored it")
                    }
                    let next = try current.moving(to: status, changeSet: dot)
                    if next != current, stored != nil { try ChangeSetTable.setStatus(next, of: dot, on: connection) }
                }
            }
        }
    }

    /// How many local change sets are not acknowledged yet.
    public func unacknowledgedCount() throws -> Int {
        try withConnection { try ChangeSetTable.unacknowledgedCount(of: replicaID, on: $0) }
    }
}

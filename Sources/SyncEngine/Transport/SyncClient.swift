import Foundation
import Codecs
import LocalStoreCore
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Syncs a ``SyncReplica`` with one dataset of a `syncd` server over HTTP (protocol v1).
///
/// A sync registers the store's schema if the server does not have it yet, pushes every
/// unacknowledged local change set, then pulls the server's log page by page until it is
/// caught up, applying each page in one transaction. The pull cursor is saved in the store
/// only after its page is applied, so a sync that breaks off resumes where it stopped, and
/// pushes are idempotent, so a retried one stores nothing twice.
///
/// ```swift
/// let replica = try SyncReplica(store: store)
/// let client = SyncClient(replica: replica, configuration: .init(
///     serverURL: URL(string: "https://sync.example.com")!, dataset: "todos", token: token))
/// let report = try await client.sync()
/// try context.refresh(objectIDs: report.changedObjectIDs)
///
/// for await status in client.statusUpdates() { print(status.pendingCount, status.lastError as Any) }
/// client.startPeriodicSync(every: .seconds(30))
/// ```
///
/// Network errors and `5xx` responses are retried per ``Configuration/backoff``; refusals
/// (`4xx`) throw the matching ``SyncClientError`` at once. Syncs on one client run one after
/// another, never overlapping.
public final class SyncClient: Sendable {
    /// Where and how to sync.
    public struct Configuration: Sendable {
        /// The server's base URL, e.g. `http://127.0.0.1:8080`.
        public var serverURL: URL
        /// The dataset on the server.
        public var dataset: String
        /// The bearer token for the dataset (`syncd token add`).
        public var token: String
        /// Change sets per push request (halved automatically on `413 payload_too_large`).
        public var pushBatchSize: Int = 200
        /// A push body larger than this goes through an upload in parts of at most this size
        /// (a batch of several change sets is halved first); see "Large change sets" in
        /// `Protocol/README.md`.
        public var largeChangeSetBytes: Int = 8 << 20
        /// Change sets per pull page (`limit`; the server caps it at 5000).
        public var pullPageSize: Int = 500
        /// What the client drops of its history once the server's stable vector covers it
        /// (``SyncReplica/compactHistory(stable:droppingDeletedObjects:)``), after each pull that
        /// moved that vector; nothing by default.
        ///
        /// A store that dropped change sets can no longer hand them out: not to a server restored
        /// from a backup older than them (it asks its clients to push again what they hold), and
        /// not to peers it exchanges with directly (``SyncReplica/changeSets(missingFrom:limit:)``).
        /// Turn it on where neither happens, or where such a server or peer starts again from a
        /// snapshot instead.
        public var historyCompaction: HistoryCompaction = .off
        /// How much of its conflict journal the client keeps: every entry until the app removes
        /// them (``SyncReplica/clearConflicts(through:)``, the default), or the newest few, the
        /// older ones removed after each pull that journaled (``SyncReport/conflictsRemoved``
        /// says how many). The journal is the record of what merges discarded; an app that never
        /// reads it can bound it here instead of letting it grow with every conflict.
        public var conflictRetention: ConflictRetention = .all
        /// Retry policy for network errors and `5xx`.
        public var backoff: Backoff = Backoff()
        /// Time allowed for one request.
        public var requestTimeout: Duration = .seconds(60)
        /// A PEM file of the certificate authorities an `https` server's certificate is checked
        /// against instead of the system's: for a server behind a private certificate authority.
        /// `nil` (the default) trusts the system's. Requests then go through libcurl (as every
        /// request does on Linux), because `URLSession` on Linux cannot be told which authorities to trust.
        public var certificateAuthorities: URL?

        /// How much of its history a client drops below the server's stable vector.
        public enum HistoryCompaction: Sendable {
            /// Nothing: the store keeps every change set, tombstone and stamp.
            case off
            /// Change sets every active replica holds (acknowledged ones of this replica, and
            /// other replicas'). Deleted objects keep their last values and stamps,
            /// which an app on an older schema may still need (see
            /// ``SyncReplica/compactHistory(stable:droppingDeletedObjects:)``).
            case changeSets
            /// Change sets, the last values, stamps and positions of objects deleted for good,
            /// and removed edges no merge asks about again: for datasets whose apps all run the
            /// current schema.
            case changeSetsAndDeletedObjects
        }

        /// How many conflict journal entries a client keeps (``conflictRetention``).
        public enum ConflictRetention: Sendable, Equatable {
            /// Every entry, until the app removes them.
            case all
            /// The newest `count` entries (none for 0 or less): after each pull that journaled,
            /// the older ones are removed (``SyncReplica/clearConflicts(keepingNewest:)``).
            case newest(Int)
        }

        /// Syncs with `dataset` on the server at `serverURL`, authenticated by `token`, with the
        /// default batch sizes, retries and timeout.
        public init(serverURL: URL, dataset: String, token: String) {
            self.serverURL = serverURL
            self.dataset = dataset
            self.token = token
        }

        /// The configuration saved in the store with ``save(in:)``, if any.
        public static func stored(in replica: SyncReplica) throws -> Configuration? {
            guard let server = try replica.setting(SettingKey.server), let url = URL(string: server),
                  let dataset = try replica.setting(SettingKey.dataset) else { return nil }
            var configuration = Configuration(serverURL: url, dataset: dataset, token: try replica.setting(SettingKey.token) ?? "")
            configuration.certificateAuthorities = try replica.setting(SettingKey.certificateAuthorities).map { URL(fileURLWithPath: $0) }
            return configuration
        }

        /// Saves server URL, dataset, token and certificate authorities file in the store file
        /// (so tools like `sync` find them).
        ///
        /// The token is a secret: the store file and its `-wal`/`-shm` files are first given mode
        /// `0600` (owner only), whatever the umask was when they were created.
        public func save(in replica: SyncReplica) throws {
            try OwnerOnlyFile.restrictStore(atPath: replica.store.path)
            try replica.setSetting(SettingKey.server, serverURL.absoluteString)
            try replica.setSetting(SettingKey.dataset, dataset)
            try replica.setSetting(SettingKey.token, token)
            try replica.setSetting(SettingKey.certificateAuthorities, certificateAuthorities?.path)
        }

        /// Identifies the server log a cursor belongs to.
        var source: String { serverURL.absoluteString + " " + dataset }
    }

    /// What the store remembers about syncing with a server.
    public struct StoredState: Sendable, Equatable {
        /// The pull cursor (`"0"`: nothing pulled yet).
        public var cursor: String
        /// The server's digest of its log up to ``cursor``, sent back with it so that a server
        /// restored from a backup refuses a cursor that names other change sets there; `nil`
        /// when the server sent none.
        public var cursorDigest: String?
        /// The server and dataset the cursor belongs to.
        public var cursorSource: String?
        /// When the last successful sync finished.
        public var lastSuccessfulSync: Date?
        /// The schema hash last registered with the server.
        public var registeredSchemaHash: String?

        /// Reads the state from `replica`'s store.
        public static func read(from replica: SyncReplica) throws -> StoredState {
            StoredState(
                cursor: try replica.setting(SettingKey.cursor) ?? "0", cursorDigest: try replica.setting(SettingKey.cursorDigest),
                cursorSource: try replica.setting(SettingKey.cursorSource),
                lastSuccessfulSync: try replica.setting(SettingKey.lastSync).flatMap(Double.init).map { Date(timeIntervalSince1970: $0 / 1000) },
                registeredSchemaHash: try replica.setting(SettingKey.schema)?.split(separator: " ").last.map(String.init))
        }
    }

    /// The keys of the client's settings in the store.
    enum SettingKey {
        static let server = "sync.server"
        static let dataset = "sync.dataset"
        static let token = "sync.token"
        static let cursor = "sync.cursor"
        static let cursorDigest = "sync.cursorDigest"
        static let cursorSource = "sync.cursorSource"
        static let lastSync = "sync.lastSync"
        static let schema = "sync.schema"
        static let certificateAuthorities = "sync.certificateAuthorities"
        /// `<upload ID> <SHA-256 of its bytes>`: the upload in progress, resumed after a restart.
        static let upload = "sync.upload"
    }

    /// The replica this client syncs.
    public let replica: SyncReplica
    /// Where it syncs to.
    public let configuration: Configuration
    /// The protocol endpoints, for callers that need one request rather than a sync.
    public let transport: HTTPTransport

    private let ownsSession: Bool
    let gate = AsyncGate()
    private let state: Mutex<State>
    /// Where the client's store work runs (reading the outbox and settings, merging pulled
    /// pages): SQLite calls block their thread, and blocking one of Swift's cooperative threads
    /// would stall unrelated tasks. Serial, so the client's store work runs in order.
    let storeQueue: DispatchQueue

    private struct State {
        var status: SyncStatus
        var observers: [UUID: AsyncStream<SyncStatus>.Continuation] = [:]
        var periodic: Task<Void, Never>?
    }

    /// Creates a client for `replica`; nothing is sent until ``sync()``.
    ///
    /// - Parameters:
    ///   - session: the session requests go through. By default, on Linux, requests go through
    ///     libcurl (FoundationNetworking's `URLSession` keeps about a core busy while a large body
    ///     is in flight), elsewhere through an ephemeral session of the client's own.
    ///   - sleep: waits between retries (and periodic syncs); tests inject one that returns at once.
    public init(
        replica: SyncReplica, configuration: Configuration, session: URLSession? = nil,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.replica = replica
        self.configuration = configuration
        ownsSession = session == nil
        transport = HTTPTransport(configuration, session: session ?? HTTPTransport.ownSession(), sleep: sleep)
        storeQueue = DispatchQueue(label: "SyncClient.store \(replica.replicaID.uuidString)", qos: .utility)
        let stored = try? StoredState.read(from: replica)
        state = Mutex(State(status: SyncStatus(
            pendingCount: (try? replica.unacknowledgedCount()) ?? 0, lastSuccessfulSync: stored?.lastSuccessfulSync)))
    }

    deinit {
        let (periodic, observers) = state.withLock { ($0.periodic, Array($0.observers.values)) }
        periodic?.cancel()
        for observer in observers { observer.finish() }
        if ownsSession { transport.session?.finishTasksAndInvalidate() }
    }

    // MARK: Status

    /// The current status.
    public var status: SyncStatus { state.withLock { $0.status } }

    /// The current status, then every change to it, until the client is released or the
    /// consumer stops iterating.
    public func statusUpdates() -> AsyncStream<SyncStatus> {
        let (stream, continuation) = AsyncStream.makeStream(of: SyncStatus.self, bufferingPolicy: .bufferingNewest(64))
        let id = UUID()
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
        state.withLock { state in
            state.observers[id] = continuation
            continuation.yield(state.status)
        }
        return stream
    }

    /// Re-reads the pending count from the store (call after local saves to update observers).
    public func refreshStatus() {
        guard let pending = try? replica.unacknowledgedCount() else { return }
        updateStatus { $0.pendingCount = pending }
    }

    private func updateStatus(_ change: (inout SyncStatus) -> Void) {
        state.withLock { state in
            var status = state.status
            change(&status)
            guard status != state.status else { return }
            state.status = status
            for observer in state.observers.values { observer.yield(status) }
        }
    }

    // MARK: Syncing

    /// Registers the schema if needed, pushes every unacknowledged local change set, then
    /// pulls until caught up.
    @discardableResult
    public func sync() async throws(SyncClientError) -> SyncReport {
        try await run(push: true, pull: true)
    }

    /// Registers the schema if needed and pushes every unacknowledged local change set.
    @discardableResult
    public func push() async throws(SyncClientError) -> SyncReport {
        try await run(push: true, pull: false)
    }

    /// Registers the schema if needed and pulls until caught up.
    @discardableResult
    public func pull() async throws(SyncClientError) -> SyncReport {
        try await run(push: false, pull: true)
    }

    /// Registers the store's schema with the server unless this store already did so for the
    /// same schema, server and dataset (or `force`). Returns whether it sent the schema.
    @discardableResult
    public func registerSchema(force: Bool = false) async throws(SyncClientError) -> Bool {
        let schema = replica.store.schemaDocument
        let marker = configuration.source + " " + schema.versionHash
        let replica = replica
        if !force, (try? await local { try replica.setting(SettingKey.schema) }) == marker { return false }
        let json: Data
        do { json = try replica.store.exportSchema() } catch { throw .local("cannot export the schema: \(error)") }
        _ = try await transport.registerSchema(json)
        try await local { try replica.setSetting(SettingKey.schema, marker) }
        return true
    }

    private func run(push: Bool, pull: Bool) async throws(SyncClientError) -> SyncReport {
        let replica = replica
        await gate.acquire()
        defer { gate.release() }
        updateStatus { $0.isSyncing = true }
        do {
            var report = SyncReport()
            report.registeredSchema = try await registerSchema()
            do {
                try await exchange(push: push, pull: pull, &report)
            } catch .replicaRetired, .historyCompacted {
                // The server will not serve this replica again: start over from a snapshot with
                // the unpushed change sets replayed, then push them and pull the rest.
                report.rebootstrap = try await startAgainFromSnapshot()
                try await exchange(push: true, pull: true, &report)
            }
            report.pendingAfter = try await local { try replica.unacknowledgedCount() }
            report.cursor = try await local { try StoredState.read(from: replica).cursor }
            let finished = Date()
            try await local { try replica.setSetting(SettingKey.lastSync, String(Int64(finished.timeIntervalSince1970 * 1000))) }
            let done = report
            updateStatus {
                $0.isSyncing = false
                $0.pendingCount = done.pendingAfter
                $0.lastSuccessfulSync = finished
                $0.lastError = nil
                $0.lastReport = done
            }
            return report
        } catch {
            let pending = try? await local { try replica.unacknowledgedCount() }
            updateStatus {
                $0.isSyncing = false
                if let pending { $0.pendingCount = pending }
                $0.lastError = error
            }
            throw error
        }
    }

    /// Pushes and/or pulls, each registering the schema again if the server lost it.
    private func exchange(push: Bool, pull: Bool, _ report: inout SyncReport) async throws(SyncClientError) {
        if push { try await retryingOnceIfUnregistered(&report) { report throws(SyncClientError) in try await self.pushAll(&report) } }
        if pull { try await retryingOnceIfUnregistered(&report) { report throws(SyncClientError) in try await self.pullAll(&report) } }
    }

    /// Runs `step`; if the server says the schema is not registered (its data was reset),
    /// registers it and runs `step` once more.
    private func retryingOnceIfUnregistered(
        _ report: inout SyncReport, _ step: (inout SyncReport) async throws(SyncClientError) -> Void
    ) async throws(SyncClientError) {
        do {
            try await step(&report)
        } catch .schemaNotRegistered {
            report.registeredSchema = try await registerSchema(force: true) || report.registeredSchema
            try await step(&report)
        }
    }

    /// Pushes unacknowledged change sets oldest first, marking each batch sent before it goes
    /// and acknowledged once the server stored it, until none are left.
    private func pushAll(_ report: inout SyncReport) async throws(SyncClientError) {
        let replica = replica
        var batchSize = max(1, configuration.pushBatchSize)
        var resent = false
        let credentials = try await local { try replica.credentials() }
        outbox: while true {
            let outbox = try await local {
                (try replica.localChangeSets(status: .pending) + replica.localChangeSets(status: .sent)).sorted { $0.dot.seq < $1.dot.seq }
            }
            if outbox.isEmpty { return }
            var start = 0
            while start < outbox.count {
                let batch = Array(outbox[start..<min(outbox.count, start + batchSize)])
                let dots = batch.map(\.dot)
                try await local { try replica.mark(dots, as: .sent) }
                let result: HTTPTransport.PushResult
                do {
                    guard let pushed = try await push(batch, as: credentials) else {
                        batchSize = max(1, batch.count / 2)
                        continue
                    }
                    result = pushed
                } catch {
                    switch error.error {
                    case .payloadTooLarge where batch.count > 1:
                        batchSize = max(1, batch.count / 2)
                        continue
                    case .causality where !resent && error.serverVector != nil:
                        // The server lacks change sets it once had (restored from a backup):
                        // send it everything it is missing, then go on with the outbox.
                        resent = true
                        try await resend(missingFrom: error.serverVector ?? VersionVector(), batchSize: batchSize, as: credentials, &report)
                        continue outbox
                    case .causality(let message) where !report.unrelayedAuthors.isEmpty:
                        let authors = report.unrelayedAuthors.map(\.storageText).joined(separator: ", ")
                        throw .causality("\(message); the server lost change sets of \(authors), which only those replicas can push again")
                    default:
                        throw error.error
                    }
                }
                try await acknowledge(dots, pushedAs: result, in: &report)
                start += batch.count
                if let pending = try? await local({ try replica.unacknowledgedCount() }) { updateStatus { $0.pendingCount = pending } }
            }
        }
    }

    /// Marks the change sets `dots`, which the server stored, acknowledged, and counts the push in `report`.
    private func acknowledge(_ dots: [Dot], pushedAs result: HTTPTransport.PushResult, in report: inout SyncReport) async throws(SyncClientError) {
        let replica = replica
        try await local { try replica.mark(dots, as: .acknowledged) }
        report.pushed += result.applied.count
        report.alreadyOnServer += result.alreadyApplied.count
        report.pushBatches += 1
    }

    /// Pushes `batch` in one request, or a single change set too large for one through an upload
    /// (resuming the upload a stopped client left); `nil` when a batch of several is too large
    /// and should be halved.
    private func push(_ batch: [ChangeSet], as credentials: ReplicaCredentials?) async throws(HTTPFailure) -> HTTPTransport.PushResult? {
        let body = try HTTPTransport.encodeBatch(batch, base: VersionVector())
        let threshold = max(1024, configuration.largeChangeSetBytes)
        if body.count <= threshold {
            do {
                return try await transport.pushEncoded(body, as: credentials)
            } catch where batch.count == 1 && error.error.code == "payload_too_large" {
                // The server's body limit is below the client's threshold: upload it.
            }
        } else if batch.count > 1 {
            return nil
        }
        let replica = replica
        let sha256 = LowercaseHex.encode(SHA256.hash(body))
        let stored = try? await local { try replica.setting(SettingKey.upload) }
        let resumable = stored.flatMap { $0 }.flatMap { setting -> String? in
            let fields = setting.split(separator: " ")
            return fields.count == 2 && fields[1] == sha256 ? String(fields[0]) : nil
        }
        let result = try await transport.pushThroughUpload(body, as: credentials, partBytes: threshold, resumable: resumable) {
            id throws(HTTPFailure) in
            do throws(SyncClientError) {
                try await local { try replica.setSetting(SettingKey.upload, "\(id) \(sha256)") }
            } catch {
                throw HTTPFailure(error: error)
            }
        }
        try? await local { try replica.setSetting(SettingKey.upload, nil) }
        return result
    }

    /// Pushes every change set this replica has (its own and others') that `serverVector` lacks.
    ///
    /// A server restored from a backup verifies relayed change sets only for authors whose keys
    /// the backup holds. When it refuses one (`403 unverified_author`), its author's change sets
    /// and those depending on them are left out, the author is recorded in
    /// ``SyncReport/unrelayedAuthors``, and the rest is sent: each refusal removes one author, so
    /// this ends after at most one extra request per author.
    private func resend(
        missingFrom serverVector: VersionVector, batchSize: Int, as credentials: ReplicaCredentials, _ report: inout SyncReport
    ) async throws(SyncClientError) {
        let replica = replica
        var missing = try await local { try replica.changeSets(missingFrom: serverVector) }
        var unrelayed: Set<ReplicaID> = []
        var start = 0
        var batchSize = batchSize
        while start < missing.count {
            let batch = Array(missing[start..<min(missing.count, start + batchSize)])
            let result: HTTPTransport.PushResult
            do {
                guard let pushed = try await push(batch, as: credentials) else {
                    batchSize = max(1, batch.count / 2)
                    continue
                }
                result = pushed
            } catch {
                guard case .unverifiedAuthor = error.error, let author = error.unverifiedAuthor,
                      author != replica.replicaID, !unrelayed.contains(author) else { throw error.error }
                unrelayed.insert(author)
                report.unrelayedAuthors = unrelayed.sorted { $0.precedesInStorageOrder($1) }
                var sendable = serverVector
                for changeSet in missing[..<start] { sendable[changeSet.dot.replica] = changeSet.dot.seq }
                missing = Array(missing[..<start]) + SyncClient.sendable(missing[start...], to: sendable, leavingOut: unrelayed)
                continue
            }
            try await acknowledge(batch.map(\.dot), pushedAs: result, in: &report)
            start += batch.count
        }
    }

    /// The change sets of `changeSets` (in causal order) a server with `vector` can store when
    /// the change sets of `authors` are left out: those whose predecessors are all stored or sendable.
    static func sendable(_ changeSets: ArraySlice<ChangeSet>, to vector: VersionVector, leavingOut authors: Set<ReplicaID>) -> [ChangeSet] {
        var vector = vector
        var result: [ChangeSet] = []
        for changeSet in changeSets where !authors.contains(changeSet.dot.replica) && SyncReplica.isApplicable(changeSet, to: vector) {
            result.append(changeSet)
            vector[changeSet.dot.replica] = changeSet.dot.seq
        }
        return result
    }

    /// Pulls the log after the saved cursor page by page, applying each page and then saving
    /// its cursor, until the server says there is no more.
    private func pullAll(_ report: inout SyncReport) async throws(SyncClientError) {
        let replica = replica
        let stored = try await local { try StoredState.read(from: replica) }
        let sameSource = stored.cursorSource == configuration.source
        var cursor = sameSource ? stored.cursor : "0"
        var digest = sameSource ? stored.cursorDigest : nil
        if !sameSource {
            let source = configuration.source
            try await local {
                try replica.setPullCursor("0", digest: nil)
                try replica.setSetting(SettingKey.cursorSource, source)
            }
        }
        let journalBefore = try await local { try replica.lastConflictNumber() }
        var restarted = false
        var stable: VersionVector?
        // Change sets written while the pages arrive are written on top of what they brought:
        // the bounds of those unpushed now hold for the whole pull.
        let unpushed = try await local { try replica.unpushedBounds() }
        let forgotten = try await local { try replica.forgottenBelow() }
        while true {
            var page: HTTPTransport.PullPage
            do {
                // Cursor 0 names the empty log, which every server has: it needs no digest.
                page = try await transport.pull(after: cursor, digest: cursor == "0" ? nil : digest,
                                                limit: max(1, configuration.pullPageSize), excluding: replica.replicaID,
                                                unpushed: unpushed, forgotten: forgotten)
            } catch .invalidCursor(let message) {
                // The server no longer knows the cursor, or its log up to there holds other change
                // sets than the client pulled (it was restored from a backup): start over.
                // Applying change sets twice changes nothing, so this is safe, only slower.
                guard !restarted, cursor != "0" else { throw .invalidCursor(message) }
                restarted = true
                cursor = "0"
                digest = nil
                continue
            }
            report.pages += 1
            if let pageStable = page.stable { stable = pageStable }
            if let reference = page.largeChangeSet {
                do {
                    try await pullLargeChangeSet(reference, into: &report)
                } catch .server(code: "transfer_not_found", _, _) {
                    // Its parts expired between the page and the fetch: asking again stages them again.
                    continue
                }
            }
            if !page.changeSets.isEmpty {
                let changeSets = page.changeSets
                let result: SyncReplica.MergeResult = try await local { try replica.apply(changeSets) }
                report.pulled += result.applied.count
                report.pulledAlreadyApplied += result.alreadyApplied.count
                report.changedObjectIDs.formUnion(result.changedObjectIDs)
                // The merge result lists rows it rewrote; attribute-only updates are written in
                // place, so add every object the applied change sets name.
                let applied = Set(result.applied)
                for changeSet in page.changeSets where applied.contains(changeSet.dot) {
                    for operation in changeSet.operations { report.changedObjectIDs.formUnion(SyncClient.objectIDs(operation)) }
                }
            }
            if page.more && page.cursor == cursor {
                throw .invalidResponse("the server said more change sets follow cursor \(cursor) but did not advance it")
            }
            if page.cursor != cursor || page.cursorDigest != digest {
                let (newCursor, newDigest) = (page.cursor, page.cursorDigest)
                try await local { try replica.setPullCursor(newCursor, digest: newDigest) }
                cursor = newCursor
                digest = newDigest
            }
            if !page.more { break }
        }
        let retention = configuration.conflictRetention
        let (journaled, removed) = try await local { () -> (Int, Int) in
            let journaled = try replica.conflictCount(after: journalBefore)
            guard journaled > 0, case .newest(let count) = retention else { return (journaled, 0) }
            return (journaled, try replica.clearConflicts(keepingNewest: count))
        }
        report.newConflicts += journaled
        report.conflictsRemoved += removed
        if let stable, configuration.historyCompaction != .off {
            let droppingDeletedObjects = configuration.historyCompaction == .changeSetsAndDeletedObjects
            report.compaction = try await local { () -> SyncReplica.HistoryCompaction? in
                // Only when the server's stable vector moved past what the store compacted below.
                let compacted = try replica.compactedVector()
                guard !compacted.dominates(stable) else { return nil }
                return try replica.compactHistory(stable: stable, droppingDeletedObjects: droppingDeletedObjects)
            }
        }
    }

    /// The objects an operation writes to.
    static func objectIDs(_ operation: Operation) -> [UUID] {
        switch operation {
        case .create(_, let id), .set(_, let id, _, _), .delete(_, let id, _), .increment(_, let id, _, _): return [id]
        case .link(_, let id, _, let target), .unlink(_, let id, _, let target, _): return [id, target]
        case .position(_, let id, _, let member, _): return [id, member]
        }
    }

    /// Runs a store operation on the client's store queue, off the cooperative thread pool,
    /// turning its errors into ``SyncClientError``.
    func local<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws(SyncClientError) -> T {
        try await SyncClient.run(on: storeQueue) { () throws(SyncClientError) -> T in try SyncClient.storeResult(body) }
    }

    /// Runs blocking `body` on `queue`, suspending the calling task (not blocking its thread)
    /// until it is done.
    static func run<T: Sendable>(
        on queue: DispatchQueue, _ body: @escaping @Sendable () throws(SyncClientError) -> T
    ) async throws(SyncClientError) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, SyncClientError>, Never>) in
            queue.async { continuation.resume(returning: Result(catching: body)) }
        }
        return try result.get()
    }

    /// Runs `body`, turning its errors into ``SyncClientError``.
    private static func storeResult<T>(_ body: () throws -> T) throws(SyncClientError) -> T {
        do {
            return try body()
        } catch let error as SyncError {
            switch error.code {
            case .causalityViolation: throw .causality(error.message)
            case .schemaMismatch: throw .schemaMismatch(error.message)
            case .malformedChangeSet, .conflictingChangeSet: throw .invalidResponse(error.description)
            default: throw .local(error.description)
            }
        } catch {
            throw .local("\(error)")
        }
    }

    // MARK: Periodic sync

    /// Syncs now and then every `interval` until ``stop()`` (replacing an earlier schedule).
    /// Failures show in ``status`` and do not stop the schedule.
    public func startPeriodicSync(every interval: Duration) {
        let sleep = transport.sleep
        let task = Task { [weak self] in
            while !Task.isCancelled {
                do {
                    guard let client = self else { return }
                    _ = try? await client.sync()
                }
                do { try await sleep(interval) } catch { return }
            }
        }
        let previous = state.withLock { state in
            defer { state.periodic = task }
            return state.periodic
        }
        previous?.cancel()
    }

    /// Stops periodic sync; a sync in progress is cancelled.
    public func stop() {
        let task = state.withLock { state in
            defer { state.periodic = nil }
            return state.periodic
        }
        task?.cancel()
    }
}

/// A lock for async code: ``acquire()`` suspends, without blocking a thread, until it is free.
final class AsyncGate: Sendable {
    private let state = Mutex<(locked: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { state in
                if !state.locked {
                    state.locked = true
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if acquired { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.locked = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}

extension SyncReplica {
    /// Saves the pull cursor with the server's digest of its log up to it: a cursor stored
    /// with another cursor's digest would be refused, and cost a pull from the start.
    func setPullCursor(_ cursor: String, digest: String?) throws {
        try withConnection { connection in
            try SyncStateTable.setSettings([SyncClient.SettingKey.cursor: cursor, SyncClient.SettingKey.cursorDigest: digest], on: connection)
        }
    }
}

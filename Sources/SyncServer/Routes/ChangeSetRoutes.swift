import Codecs
import Foundation
import HTTPServer
import SyncEngine

/// `POST /v1/datasets/{dataset}/changesets` (push) and `GET` (pull by cursor).
enum ChangeSetRoutes {
    static let pattern = "/v1/datasets/{dataset}/changesets"
    static let defaultLimit = 500
    static let maxLimit = 5000
    /// The batch of an empty page, encoded once: most pulls are polls that find nothing new,
    /// and running the encoder for nothing costs more than the rest of such a pull.
    static let emptyBatch: Data? = try? ChangeSetCoding.encode([], base: VersionVector())

    static func register(in router: inout Router, _ context: RouteContext) {
        router.add(.post, pattern, admission: context.datasetAdmission(for: .readWrite)) { request, parameters in
            let dataset = try context.authorizedDataset(request, parameters, for: .readWrite)
            return .json(data: try push(request.body, to: dataset, pushedBy: try pusher(of: request), context))
        }
        router.add(.get, pattern, admission: context.datasetAdmission) { request, parameters in
            let dataset = try context.authorizedDataset(request, parameters)
            let query = try PullQuery(request)
            var page = try dataset.pull(after: query.after, digest: query.afterDigest, limit: query.limit, excluding: query.exclude,
                                        unpushed: query.unpushed, forgotten: query.forgotten)
            var batch: Data
            if page.changeSets.isEmpty, let emptyBatch {
                batch = emptyBatch
            } else {
                batch = try ChangeSetCoding.encode(page.changeSets, base: VersionVector())
            }
            var largeChangeSet: JSONValue?
            if query.largeChangeSetsByReference && batch.count > context.transfers.partBytes {
                (page, batch, largeChangeSet) = try pageWithinPartSize(query, changeSets: page.changeSets.count, dataset, context)
            }
            if !page.more { context.metrics.recordLogEnd(dataset: dataset.name, cursor: page.cursor) }
            var answer: [String: JSONValue] = [
                "changeSets": .encoded(batch), "cursor": .string(String(page.cursor)),
                "cursorDigest": .string(page.digest.description), "more": .bool(page.more), "stable": .vector(page.stable),
            ]
            answer["largeChangeSet"] = largeChangeSet
            return .json(data: JSONValue.object(answer).data)
        }
    }

    /// Applies a push's body for `pusher` and answers the protocol's push result (also the
    /// answer to an upload's commit).
    static func push(_ body: Data, to dataset: DatasetStore, pushedBy pusher: ReplicaCredentials?, _ context: RouteContext) throws -> Data {
        try answer(to: dataset.push(body, pushedBy: pusher), of: dataset, context)
    }

    /// The answer to a push that did `result`, with the metrics recorded.
    static func answer(to result: DatasetStore.PushResult, of dataset: DatasetStore, _ context: RouteContext) -> Data {
        context.metrics.recordStored(dataset: dataset.name, count: result.applied.count)
        context.metrics.recordLogEnd(dataset: dataset.name, cursor: result.cursor)
        func dots(_ dots: [Dot]) -> JSONValue {
            .array(dots.map { .object(["replica": .string($0.replica.storageText), "seq": .unsignedInteger($0.seq)]) })
        }
        return JSONValue.object([
            "applied": dots(result.applied), "alreadyApplied": dots(result.alreadyApplied),
            "vector": .vector(result.vector), "cursor": .string(String(result.cursor)),
        ]).data
    }

    /// A page whose batch fits in one part: fewer log entries, down to one; when one entry's
    /// change set alone is larger, the page holds no change set and names it by reference
    /// (`largeChangeSet`), staged in parts for the client to fetch, with the page's cursor
    /// being that entry's. Only pages over the part size take this path, so small pages cost
    /// what they did.
    static func pageWithinPartSize(_ query: PullQuery, changeSets: Int, _ dataset: DatasetStore, _ context: RouteContext) throws
        -> (DatasetStore.PullPage, Data, JSONValue?) {
        var limit = query.limit
        var changeSets = changeSets
        while true {
            // At most half the change sets of the page that was too large (entries left out by
            // `exclude` only make the page smaller), straight to one entry when it held one.
            limit = max(1, min(limit, changeSets) / 2)
            let page = try dataset.pull(after: query.after, digest: query.afterDigest, limit: limit, excluding: query.exclude,
                                        unpushed: query.unpushed, forgotten: query.forgotten)
            changeSets = page.changeSets.count
            let batch = try ChangeSetCoding.encode(page.changeSets, base: VersionVector())
            if batch.count <= context.transfers.partBytes { return (page, batch, nil) }
            guard limit == 1, let changeSet = page.changeSets.first else { continue }
            let staging = try context.transfers.staging(of: dataset)
            let download = try staging.stageDownload(entry: page.cursor, body: batch, partBytes: context.transfers.partBytes)
            let reference = JSONValue.object([
                "entry": .string(String(page.cursor)), "replica": .string(changeSet.dot.replica.storageText),
                "seq": .unsignedInteger(changeSet.dot.seq), "totalBytes": .integer(download.totalBytes),
                "sha256": .string(download.sha256), "partBytes": .integer(Int64(download.partBytes)),
                "parts": .integer(Int64(download.partCount)),
            ])
            return (DatasetStore.PullPage(changeSets: [], cursor: page.cursor, digest: page.digest, more: page.more, stable: page.stable),
                    emptyBatch ?? Data(#"{"base":{},"changeSets":[]}"#.utf8), reference)
        }
    }

    /// The replica named by a push's `Sync-Replica-ID` and `Sync-Replica-Key` headers; `nil`
    /// when it sends neither (it can then only re-send change sets the server verifies).
    static func pusher(of request: HTTPRequest) throws -> ReplicaCredentials? {
        let replica = request.headers["Sync-Replica-ID"], key = request.headers["Sync-Replica-Key"]
        if replica == nil && key == nil { return nil }
        guard let replica, let key else {
            throw APIError.invalidParameter("a push names its replica with both Sync-Replica-ID and Sync-Replica-Key, or neither")
        }
        guard let credentials = ReplicaCredentials(replicaHeader: replica, keyHeader: key) else {
            // The key is a secret: the message never repeats it.
            throw APIError.invalidParameter(
                "Sync-Replica-ID must be a replica UUID and Sync-Replica-Key 64 hex digits (\(ReplicaCredentials.keyLength) bytes)")
        }
        return credentials
    }

    /// The pull's query parameters, validated.
    struct PullQuery {
        var after: Int64 = 0
        var afterDigest: LogDigest?
        var limit = ChangeSetRoutes.defaultLimit
        var exclude: ReplicaID?
        /// Whether the client takes a change set larger than a part by reference (`largeChangeSets=byReference`).
        var largeChangeSetsByReference = false
        /// What the puller reported of the change sets it has yet to push (`Sync-Unpushed-Bounds`).
        var unpushed = UnpushedBounds.none
        /// The vector the puller reported holding no deleted object below (`Sync-Forgotten-Below`).
        var forgotten: VersionVector?

        init(_ request: HTTPRequest) throws {
            if let text = request.queryValue("after") {
                guard let value = PullQuery.decimal(text) else {
                    throw DatasetError.invalidCursor("after must be a cursor this server returned (a decimal string), not '\(text.prefix(40))'")
                }
                after = value
            }
            if let text = request.queryValue("afterDigest") {
                guard let digest = LogDigest(hex: text) else {
                    throw APIError.invalidParameter(
                        "afterDigest must be the cursorDigest a pull returned (\(LogDigest.byteCount * 2) hex digits), not '\(text.prefix(40))'")
                }
                afterDigest = digest
            }
            if let text = request.queryValue("limit") {
                guard let value = PullQuery.decimal(text), value >= 1 else {
                    throw APIError.invalidParameter("limit must be an integer from 1 to \(ChangeSetRoutes.maxLimit), not '\(text.prefix(40))'")
                }
                limit = Int(min(value, Int64(ChangeSetRoutes.maxLimit)))
            }
            if let text = request.queryValue("exclude") {
                guard let replica = UUID(storageText: text) else {
                    throw APIError.invalidParameter("exclude must be a replica UUID, not '\(text.prefix(40))'")
                }
                exclude = replica
            }
            if let text = request.queryValue("largeChangeSets") {
                guard text == "byReference" else {
                    throw APIError.invalidParameter("largeChangeSets must be 'byReference', not '\(text.prefix(40))'")
                }
                largeChangeSetsByReference = true
            }
            if let text = request.headers["Sync-Unpushed-Bounds"] {
                guard let bounds = UnpushedBounds(text: text) else {
                    throw APIError.invalidParameter(
                        "Sync-Unpushed-Bounds must be '*' or replica:seq pairs separated by commas (each replica a UUID once, each seq a decimal), not '\(text.prefix(80))'")
                }
                unpushed = bounds
            }
            if let text = request.headers["Sync-Forgotten-Below"] {
                guard let vector = ReplicaRegistry.vector(fromHeader: text) else {
                    throw APIError.invalidParameter(
                        "Sync-Forgotten-Below must be replica:seq pairs separated by commas (each replica a UUID once, each seq a decimal), not '\(text.prefix(80))'")
                }
                forgotten = vector
            }
        }

        /// Digits only (no sign, no spaces), fitting in Int64.
        static func decimal(_ text: String) -> Int64? {
            guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return Int64(text)
        }
    }
}

import Foundation
import LocalStoreCore
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Speaks protocol v1 (`Protocol/README.md`) to one dataset of a `syncd` server: builds the
/// requests, sends them with retries, and turns responses into values or ``SyncClientError``s.
///
/// ``SyncClient`` drives a sync with it; tests and tools can call the endpoints directly.
public struct HTTPTransport: Sendable {
    /// The server's base URL, e.g. `http://127.0.0.1:8080` (a path prefix is kept).
    public let serverURL: URL
    /// The dataset every request addresses.
    public let dataset: String
    let token: String
    /// The session requests go through; `nil` sends them through libcurl (``CurlHTTPClient``).
    let session: URLSession?
    /// A PEM file of the certificate authorities an https server is checked against instead of
    /// the system's (requests then go through libcurl); `nil` trusts the system's.
    let certificateAuthorities: URL?
    let backoff: Backoff
    let requestTimeout: Duration
    let sleep: @Sendable (Duration) async throws -> Void

    /// Creates a transport.
    ///
    /// - Parameters:
    ///   - certificateAuthorities: a PEM file of the certificate authorities to check an https
    ///     server against instead of the system's (a private CA); requests then go through
    ///     libcurl rather than `session`.
    ///   - sleep: waits between retries; tests inject one that records instead of waiting.
    public init(
        serverURL: URL, dataset: String, token: String, session: URLSession, certificateAuthorities: URL? = nil, backoff: Backoff = Backoff(),
        requestTimeout: Duration = .seconds(60), sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.serverURL = serverURL
        self.dataset = dataset
        self.token = token
        self.session = session
        self.certificateAuthorities = certificateAuthorities
        self.backoff = backoff
        self.requestTimeout = requestTimeout
        self.sleep = sleep
    }

    /// A transport for the server, dataset, token, certificate authorities, retries and timeout
    /// of a client's `configuration`, sending through `session`, or through libcurl when it is `nil`.
    init(_ configuration: SyncClient.Configuration, session: URLSession?, sleep: @escaping @Sendable (Duration) async throws -> Void) {
        serverURL = configuration.serverURL
        dataset = configuration.dataset
        token = configuration.token
        self.session = session
        certificateAuthorities = configuration.certificateAuthorities
        backoff = configuration.backoff
        requestTimeout = configuration.requestTimeout
        self.sleep = sleep
    }

    /// The session a client makes for itself when it is handed none: none on Linux, where its
    /// requests go through libcurl (``CurlHTTPClient``), an ephemeral one elsewhere.
    static func ownSession() -> URLSession? {
        #if canImport(FoundationNetworking)
        return nil
        #else
        return URLSession(configuration: .ephemeral)
        #endif
    }

    /// Whether `name` is a dataset name the protocol accepts: 1-64 of `[A-Za-z0-9._-]`, not starting with `.`.
    public static func isValidDatasetName(_ name: String) -> Bool {
        guard (1...64).contains(name.utf8.count), !name.hasPrefix(".") else { return false }
        return name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }

    // MARK: Endpoints

    /// What `PUT /v1/datasets/{dataset}/schema` answered.
    public struct SchemaRegistration: Sendable, Equatable, Decodable {
        /// The version hash of the schema the dataset now holds.
        public var versionHash: String
        /// The dataset's name.
        public var dataset: String
        /// Whether the dataset holds a newer schema that extends the one sent (an older app's):
        /// the app syncs as it is, keeping what it does not know (CONTRACT.md §8).
        public var isOlderThanDataset: Bool = false

        private enum CodingKeys: String, CodingKey {
            case versionHash, dataset, registration
        }
    }

    /// `PUT /v1/datasets/{dataset}/schema`: registers (or additively migrates) the dataset's
    /// schema; a schema the dataset's extends additively (an older app's) is accepted as it is.
    public func registerSchema(_ schemaJSON: Data) async throws(SyncClientError) -> SchemaRegistration {
        let data = try await send("PUT", path: "schema", body: schemaJSON)
        return try HTTPTransport.decodeSchemaRegistration(data)
    }

    /// `GET /v1/datasets/{dataset}/schema`: the registered schema's JSON.
    public func fetchSchema() async throws(SyncClientError) -> Data {
        try await send("GET", path: "schema")
    }

    /// `GET /v1/datasets/{dataset}/schema/versions`: every schema the dataset was registered
    /// with, oldest first; the last is the current one.
    public func fetchSchemaVersions() async throws(SyncClientError) -> [SchemaVersion] {
        try HTTPTransport.decodeSchemaVersions(try await send("GET", path: "schema/versions"))
    }

    /// What a push stored.
    public struct PushResult: Sendable, Equatable {
        /// Change sets the server stored now.
        public var applied: [Dot]
        /// Change sets it already had (a retried push).
        public var alreadyApplied: [Dot]
        /// The server's version vector after the push.
        public var vector: VersionVector
        /// The server's log cursor after the push.
        public var cursor: String
    }

    /// `POST /v1/datasets/{dataset}/changesets`: pushes a batch (all stored, or none on an error).
    ///
    /// - Parameter pusher: the pushing replica's ID and key, sent in the `Sync-Replica-ID` and
    ///   `Sync-Replica-Key` headers; the server registers the key at the replica's first push and
    ///   stores change sets only from authors whose key it can check them with.
    public func push(_ changeSets: [ChangeSet], base: VersionVector = VersionVector(),
                     as pusher: ReplicaCredentials?) async throws(SyncClientError) -> PushResult {
        do {
            return try await pushDetailed(changeSets, base: base, as: pusher)
        } catch {
            throw error.error
        }
    }

    /// ``push(_:base:as:)`` keeping what a refusal said beyond its error (the server's vector of
    /// a `409 causality_violation`, the change set of a `403 unverified_author`).
    func pushDetailed(_ changeSets: [ChangeSet], base: VersionVector, as pusher: ReplicaCredentials?) async throws(HTTPFailure) -> PushResult {
        try await pushEncoded(try HTTPTransport.encodeBatch(changeSets, base: base), as: pusher)
    }

    /// A push body: `changeSets` as a batch relative to `base`.
    static func encodeBatch(_ changeSets: [ChangeSet], base: VersionVector) throws(HTTPFailure) -> Data {
        do {
            return try ChangeSetCoding.encode(changeSets, base: base)
        } catch {
            throw HTTPFailure(error: .local("cannot encode change sets: \(error)"))
        }
    }

    /// Pushes an encoded batch (``encodeBatch(_:base:)``) as `pusher`.
    func pushEncoded(_ body: Data, as pusher: ReplicaCredentials?) async throws(HTTPFailure) -> PushResult {
        let data = try await sendDetailed("POST", path: "changesets", body: body, headers: HTTPTransport.replicaHeaders(pusher)).data
        do throws(SyncClientError) {
            return try HTTPTransport.decodePushResult(data)
        } catch {
            throw HTTPFailure(error: error)
        }
    }

    /// `Sync-Replica-ID` and `Sync-Replica-Key` of `pusher`; none without one.
    static func replicaHeaders(_ pusher: ReplicaCredentials?) -> [String: String] {
        guard let pusher else { return [:] }
        return ["Sync-Replica-ID": pusher.replica.storageText, "Sync-Replica-Key": pusher.keyHex]
    }

    /// One page of the server's change-set log.
    public struct PullPage: Sendable, Equatable {
        /// The change sets, in log order (which respects causality).
        public var changeSets: [ChangeSet]
        /// The cursor to pass as `after` for the next page, once these are applied.
        public var cursor: String
        /// The digest of the server's log up to ``cursor``, to pass as `afterDigest` with it;
        /// `nil` from a server that does not send one.
        public var cursorDigest: String?
        /// Whether more change sets follow.
        public var more: Bool
        /// What every active replica of the dataset holds (the server's stable vector); `nil`
        /// from a server that does not send it.
        public var stable: VersionVector?
        /// A change set too large for a page, handed out by reference: fetch it with
        /// ``fetchLargeChangeSet(_:)`` and apply it as this page's only change set.
        public var largeChangeSet: LargeChangeSetReference? = nil
    }

    /// `GET /v1/datasets/{dataset}/changesets?after=&afterDigest=&limit=&exclude=`: the log after
    /// `cursor`. With `digest` (the `cursorDigest` that came with `cursor`), the server refuses
    /// the cursor with ``SyncClientError/invalidCursor(_:)`` when its log up to there is not the
    /// one the client pulled (it was restored from a backup). `unpushed` reports what the
    /// pulling replica has yet to push (header `Sync-Unpushed-Bounds`), which keeps the server's
    /// stable vector below what those change sets had not seen. `forgotten` reports the vector
    /// below which the replica holds no deleted object (header `Sync-Forgotten-Below`, see
    /// ``SyncReplica/forgottenBelow()``), which lets the server release the identifiers it keeps
    /// of the objects it forgot; a vector too large for a header is not sent.
    public func pull(after cursor: String, digest: String? = nil, limit: Int, excluding replica: ReplicaID?,
                     unpushed: UnpushedBounds = .none, forgotten: VersionVector? = nil) async throws(SyncClientError) -> PullPage {
        var query = [URLQueryItem(name: "after", value: cursor), URLQueryItem(name: "limit", value: String(limit))]
        if let digest { query.append(URLQueryItem(name: "afterDigest", value: digest)) }
        if let replica { query.append(URLQueryItem(name: "exclude", value: replica.uuidString)) }
        // This client fetches change sets too large for a page by reference, in parts.
        query.append(URLQueryItem(name: "largeChangeSets", value: "byReference"))
        var headers: [String: String] = [:]
        var text = unpushed.text
        if text.utf8.count > UnpushedBounds.maximumTextBytes { text = UnpushedBounds.everything.text }
        if !text.isEmpty { headers["Sync-Unpushed-Bounds"] = text }
        if replica != nil, let forgotten, !forgotten.entries.isEmpty {
            let text = ReplicaRegistry.text(of: forgotten)
            if text.utf8.count <= UnpushedBounds.maximumTextBytes { headers["Sync-Forgotten-Below"] = text }
        }
        let data: Data
        do {
            data = try await sendDetailed("GET", path: "changesets", query: query, headers: headers).data
        } catch {
            throw error.error
        }
        return try HTTPTransport.decodePullPage(data)
    }

    /// A copy of the dataset's store and the log cursor it includes.
    public struct Snapshot: Sendable {
        /// The SQLite store file.
        public var data: Data
        /// The `Sync-Cursor` header: pull from here after adopting the snapshot.
        public var cursor: String
        /// The `Sync-Cursor-Digest` header: the digest of the server's log up to ``cursor``, to
        /// pass as `afterDigest` with it; `nil` from a server that does not send one.
        public var cursorDigest: String?
    }

    /// `GET /v1/datasets/{dataset}/snapshot`: a consistent copy of the dataset's store, with the
    /// cursor (and the digest of the log up to it) to pull after once it is adopted.
    public func snapshot() async throws(SyncClientError) -> Snapshot {
        let result: (data: Data, response: HTTPURLResponse)
        do {
            result = try await sendDetailed("GET", path: "snapshot", accept: "application/vnd.sqlite3")
        } catch {
            throw error.error
        }
        guard let cursor = result.response.value(forHTTPHeaderField: "Sync-Cursor"), !cursor.isEmpty, cursor.allSatisfy(\.isASCII) else {
            throw .invalidResponse("the snapshot response has no Sync-Cursor header")
        }
        // Kept as the server wrote it, as a pull page's `cursorDigest` is: the server checks it.
        let digest = result.response.value(forHTTPHeaderField: "Sync-Cursor-Digest").flatMap { $0.isEmpty ? nil : $0 }
        return Snapshot(data: result.data, cursor: cursor, cursorDigest: digest)
    }

    // MARK: Requests

    /// The URL of `route` under this dataset, e.g. `…/v1/datasets/todos/changesets?after=3`.
    func url(_ route: String, query: [URLQueryItem] = []) -> URL? {
        var base = serverURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        guard var components = URLComponents(string: base + "/v1/datasets/\(dataset)/\(route)") else { return nil }
        if !query.isEmpty { components.queryItems = query }
        return components.url
    }

    /// Builds the request for one attempt.
    func request(_ method: String, path route: String, query: [URLQueryItem] = [], body: Data? = nil, accept: String = "application/json",
                 headers: [String: String] = [:]) throws(SyncClientError) -> URLRequest {
        guard HTTPTransport.isValidDatasetName(dataset) else {
            throw .notConfigured("'\(dataset)' is not a valid dataset name (1-64 of A-Z a-z 0-9 . _ -, not starting with '.')")
        }
        guard let scheme = serverURL.scheme?.lowercased(), scheme == "http" || scheme == "https", serverURL.host != nil,
              let url = url(route, query: query) else {
            throw .notConfigured("'\(serverURL.absoluteString)' is not an http(s) server URL")
        }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.timeoutInterval = Backoff.seconds(requestTimeout)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue(accept, forHTTPHeaderField: "Accept")
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        // After the body's type, so a route sending other bytes (an upload's part) can name theirs.
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    /// Sends a request, retrying transient failures per ``backoff``; returns the `2xx` body.
    func send(_ method: String, path route: String, query: [URLQueryItem] = [], body: Data? = nil) async throws(SyncClientError) -> Data {
        do {
            return try await sendDetailed(method, path: route, query: query, body: body).data
        } catch {
            throw error.error
        }
    }

    /// ``send(_:path:query:body:)`` keeping what the last failure said beyond its error.
    func sendDetailed(_ method: String, path route: String, query: [URLQueryItem] = [], body: Data? = nil, accept: String = "application/json",
                      headers: [String: String] = [:]) async throws(HTTPFailure) -> (data: Data, response: HTTPURLResponse) {
        let request: URLRequest
        do {
            request = try self.request(method, path: route, query: query, body: body, accept: accept, headers: headers)
        } catch {
            throw HTTPFailure(error: error)
        }
        var attempt = 1
        while true {
            do {
                return try await sendOnce(request)
            } catch {
                guard error.error.isTransient, attempt < backoff.maxAttempts else { throw error }
                var delay = backoff.delay(beforeRetry: attempt)
                // A server that says when to come back (503 busy) is believed, within the cap.
                if let retryAfter = error.retryAfter { delay = min(max(delay, retryAfter), max(backoff.maximum, delay)) }
                do {
                    try await sleep(delay)
                } catch {
                    throw HTTPFailure(error: .cancelled)
                }
                attempt += 1
            }
        }
    }

    /// One attempt, without retries.
    func sendOnce(_ request: URLRequest) async throws(HTTPFailure) -> (data: Data, response: HTTPURLResponse) {
        if Task.isCancelled { throw HTTPFailure(error: .cancelled) }
        let data: Data, response: URLResponse
        do {
            if let session, certificateAuthorities == nil {
                (data, response) = try await URLSessionRequest.send(request, in: session)
            } else {
                (data, response) = try await CurlHTTPClient.send(request, certificateAuthorities: certificateAuthorities)
            }
        } catch let error as URLError where error.code == .cancelled {
            throw HTTPFailure(error: .cancelled)
        } catch is CancellationError {
            throw HTTPFailure(error: .cancelled)
        } catch {
            throw HTTPFailure(error: .network("\(request.httpMethod ?? "GET") \(request.url?.absoluteString ?? "?"): \(HTTPTransport.describe(error))"))
        }
        guard let http = response as? HTTPURLResponse else { throw HTTPFailure(error: .invalidResponse("not an HTTP response")) }
        if (200..<300).contains(http.statusCode) { return (data, http) }
        var failure = HTTPFailure(error: HTTPTransport.error(status: http.statusCode, body: data))
        if let text = http.value(forHTTPHeaderField: "Retry-After"), let seconds = Int(text.trimmingCharacters(in: .whitespaces)), seconds >= 0 {
            failure.retryAfter = .seconds(seconds)
        }
        if case .causality = failure.error, let vector = HTTPTransport.decodeErrorBody(data)?.vector {
            failure.serverVector = vector
        }
        if case .unverifiedAuthor = failure.error {
            failure.unverifiedAuthor = HTTPTransport.decodeErrorBody(data)?.replica
        }
        throw failure
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? URLError { return "\(error.localizedDescription) (URLError \(error.code.rawValue))" }
        return "\(error)"
    }

    /// The error an error response stands for: `{"error": {"code", "message", …extra}}`.
    public static func error(status: Int, body: Data) -> SyncClientError {
        let wire = HTTPTransport.decodeErrorBody(body)
        let code = wire?.code ?? "http_\(status)"
        var message = wire?.message ?? String(decoding: body.prefix(500), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if message.isEmpty { message = HTTPURLResponse.localizedString(forStatusCode: status) }
        switch (status, code) {
        case (401, _): return .unauthorized(message)
        case (403, "unverified_author"): return .unverifiedAuthor(message)
        case (403, "replica_key_mismatch"): return .replicaKeyMismatch(message)
        case (403, _): return .forbidden(message)
        case (_, "schema_incompatible"): return .schemaIncompatible(message)
        case (_, "schema_mismatch"): return .schemaMismatch(message)
        case (_, "schema_not_registered"): return .schemaNotRegistered(message)
        case (_, "causality_violation"): return .causality(message)
        case (_, "clock_skew"):
            return .clockSkew(serverTime: Date(timeIntervalSince1970: (wire?.serverTime ?? 0) / 1000), message: message)
        case (_, "invalid_cursor"): return .invalidCursor(message)
        case (_, "replica_retired"): return .replicaRetired(message)
        case (_, "history_compacted"): return .historyCompacted(message)
        case (413, _): return .payloadTooLarge(message)
        default: return .server(code: code, message: message, status: status)
        }
    }
}

/// A failed request: the error, and what else the response said.
struct HTTPFailure: Error {
    var error: SyncClientError
    /// From a `Retry-After` header (seconds form).
    var retryAfter: Duration?
    /// From a `409 causality_violation` body: the server's version vector.
    var serverVector: VersionVector?
    /// From a `403 unverified_author` body: the author of the change set refused.
    var unverifiedAuthor: ReplicaID?
}

extension HTTPTransport.SchemaRegistration {
    /// Decodes a registration answer; `registration` is absent from servers that predate it.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(versionHash: try container.decode(String.self, forKey: .versionHash),
                  dataset: try container.decode(String.self, forKey: .dataset),
                  isOlderThanDataset: try container.decodeIfPresent(String.self, forKey: .registration) == "older")
    }
}

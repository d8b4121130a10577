import Foundation
import HTTPServer
import PostgreSQLClient
import SyncEngine

/// How a ``SyncService`` is set up.
public struct SyncServiceConfiguration: Sendable {
    /// `DIR`: holds `tokens.sqlite` and `datasets/<name>/store.sqlite`.
    public var dataDirectory: URL
    /// How far (seconds) a change set's HLC may lie ahead of the server's clock.
    public var maxClockSkew: Double = 300
    /// The server's wall clock in milliseconds since 1970; tests inject a fixed one.
    public var clock: @Sendable () -> UInt64 = HybridLogicalClock.wallClockMilliseconds
    /// Receives one access-log line per request (without a newline); `nil` logs nothing. It is
    /// called on the thread that finished the request: hand the line to a `LogWriter` (HTTPServer) rather
    /// than writing it there.
    public var log: (@Sendable (String) -> Void)?
    /// How long an accepted bearer token is trusted before the token file is checked for changes
    /// by other processes (`syncd token revoke`): the longest a revoked token keeps working.
    public var tokenRevalidationInterval: Duration = .milliseconds(100)
    /// A PostgreSQL URL (`postgresql://user@host:port/database`) keeping the datasets and tokens
    /// in a database that several syncd instances share (see <doc:SharedStorage>); `nil` keeps
    /// them in SQLite files under ``dataDirectory``, which then only holds this instance's caches.
    public var databaseURL: String?
    /// How long a replica may stay silent before it counts as retired (`--replica-horizon-days`),
    /// and the wall clock of the replica registry.
    public var replicaPolicy = ReplicaPolicy()
    /// How often the service compacts every dataset's log below its stable vector (see
    /// ``SyncService/compactLogs()``); `nil` never.
    public var compactionInterval: Duration?
    /// The vector below which a dataset's log may be compacted: one every active replica has
    /// seen; `nil` (or a function answering `nil`) compacts nothing.
    public var stableVector: (@Sendable (any DatasetEngine) throws -> VersionVector?)?
    /// The largest part of a large change set's upload or download, and the largest pull page
    /// before a change set is handed out by reference: at most the HTTP server's body limit.
    public var transferPartBytes: Int = 16 << 20
    /// The largest change-set batch an upload may hold.
    public var maxUploadBytes: Int64 = 4 << 30
    /// How long (seconds) staged parts of an upload or download are kept after last use.
    public var stagedTransferLifetime: Double = 24 * 3600

    /// Serves the datasets and tokens in `dataDirectory`, with the default clock, skew and
    /// revalidation interval, and no access log.
    public init(dataDirectory: URL) {
        self.dataDirectory = dataDirectory
    }
}

/// The sync protocol v1 (see `Protocol/README.md`) as an HTTP handler: `syncd` runs one inside
/// an `HTTPServer`; tests call ``handle(_:)`` directly.
public final class SyncService: Sendable {
    /// The protocol version sent in `Sync-Protocol` on every response.
    public static let protocolVersion = "1"

    /// How this service was set up.
    public let configuration: SyncServiceConfiguration
    package let registry: DatasetRegistry
    package let tokens: TokenStore
    package let metrics = Metrics()
    private let router: Router

    /// Opens (creating if needed) the data directory and its token file, and removes snapshot
    /// copies a stopped server left behind.
    public init(configuration: SyncServiceConfiguration) throws {
        self.configuration = configuration
        try FileManager.default.createDirectory(
            at: configuration.dataDirectory.appendingPathComponent("datasets"), withIntermediateDirectories: true)
        DatasetRegistry.removeLeftoverSnapshots(in: configuration.dataDirectory)
        let sharedDatabase = configuration.databaseURL.map { PostgreSQLConnectionPool(url: $0) }
        if let pool = sharedDatabase {
            let engines = try PostgreSQLDatasetEngineProvider(pool: pool, directory: DatasetRegistry.datasetsDirectory(in: configuration.dataDirectory),
                                                              replicaPolicy: configuration.replicaPolicy)
            registry = DatasetRegistry(dataDirectory: configuration.dataDirectory, maxClockSkew: configuration.maxClockSkew, clock: configuration.clock,
                                       engines: engines, logIsShared: true)
            tokens = TokenStore(table: try PostgreSQLTokenTable(pool: pool), revalidationInterval: configuration.tokenRevalidationInterval)
        } else {
            registry = DatasetRegistry(dataDirectory: configuration.dataDirectory, maxClockSkew: configuration.maxClockSkew, clock: configuration.clock,
                                       engines: SQLiteDatasetEngineProvider(directory: DatasetRegistry.datasetsDirectory(in: configuration.dataDirectory),
                                                                            replicaPolicy: configuration.replicaPolicy))
            tokens = try TokenStore(dataDirectory: configuration.dataDirectory, revalidationInterval: configuration.tokenRevalidationInterval)
        }
        let transfers = TransferRegistry(
            partBytes: configuration.transferPartBytes, maxUploadBytes: configuration.maxUploadBytes,
            lifetimeMilliseconds: UInt64(max(0, min(configuration.stagedTransferLifetime, 1e12)) * 1000),
            sharedDatabase: sharedDatabase, clock: configuration.clock)
        let context = RouteContext(registry: registry, tokens: tokens, metrics: metrics, transfers: transfers)
        metrics.setStableVectorLagSource { [registry] in
            registry.knownDatasets().compactMap { dataset in (try? dataset.stableVectorLag())?.map { (dataset.name, $0) } }
        }
        var router = Router()
        HealthRoutes.register(in: &router, context)
        MetricsRoutes.register(in: &router, context)
        SchemaRoutes.register(in: &router, context)
        ChangeSetRoutes.register(in: &router, context)
        SnapshotRoutes.register(in: &router, context)
        TransferRoutes.register(in: &router, context)
        self.router = router
    }

    /// Answers one request. Never throws and never traps on client input: every failure is a
    /// JSON error response.
    @Sendable public func handle(_ request: HTTPRequest) -> HTTPResponse {
        var response = router.handle(request)
        response.headers.replaceOrAdd(name: "Sync-Protocol", value: SyncService.protocolVersion)
        return response
    }

    /// Refuses a request with a body before the body is read when its head already shows it would
    /// fail: no such route, a method the route does not allow, or a dataset route without a bearer
    /// token for that dataset. Pass it as the `HTTPServer` admission check, so unauthenticated
    /// uploads cost the server neither memory nor time.
    @Sendable public func admit(_ head: HTTPRequestHead) -> RequestAdmission {
        guard var response = router.refusal(for: head) else { return .proceed }
        response.headers.replaceOrAdd(name: "Sync-Protocol", value: SyncService.protocolVersion)
        return .respond(response)
    }

    /// Records a finished exchange in the metrics and the access log; pass it to
    /// `HTTPServerConfiguration.onRequestCompleted`.
    @Sendable public func requestCompleted(_ summary: HTTPRequestSummary) {
        let route = summary.path == "-" ? "unmatched" : (router.pattern(for: summary.path) ?? "unmatched")
        metrics.recordRequest(method: summary.method, route: route, status: summary.status, duration: summary.duration,
                              requestBytes: summary.requestBytes, responseBytes: summary.responseBytes)
        configuration.log?(SyncService.logLine(summary, at: Date()))
    }

    /// The JSON error for a request the HTTP layer refuses before routing (malformed, too slow,
    /// too large, too many connections); pass it to `HTTPServerConfiguration.errorResponse`.
    @Sendable public func transportErrorResponse(_ status: HTTPStatus, _ message: String) -> HTTPResponse {
        let code: String
        switch status.code {
        case 400: code = "bad_request"
        case 408: code = "request_timeout"
        case 413: code = "payload_too_large"
        case 431: code = "headers_too_large"
        case 503: code = "unavailable"
        default: code = "http_\(status.code)"
        }
        var response = APIError(status, code, message).response
        response.headers.replaceOrAdd(name: "Sync-Protocol", value: SyncService.protocolVersion)
        return response
    }

    /// Where `syncd_open_connections` is read from.
    public func setOpenConnectionsSource(_ source: @escaping @Sendable () -> Int) {
        metrics.setOpenConnectionsSource(source)
    }

    /// `<ISO8601 time> <remote> <method> <path> <status> <bytes> <ms>ms`, with the path's
    /// spaces and control characters percent-escaped so one request is always one line.
    static func logLine(_ summary: HTTPRequestSummary, at date: Date) -> String {
        AccessLogLine.format(summary, at: date)
    }
}

/// What route handlers share.
struct RouteContext: Sendable {
    let registry: DatasetRegistry
    let tokens: TokenStore
    let metrics: Metrics
    let transfers: TransferRegistry

    /// The dataset named in the path, once the request's bearer token is known to belong to it
    /// and to allow `access`.
    ///
    /// 401 without a valid token (with `WWW-Authenticate: Bearer`) or with an expired one, 400
    /// for an invalid dataset name, 403 `forbidden` when the token belongs to another dataset,
    /// 403 `insufficient_scope` when a read-only token asks for `.readWrite`.
    func authorizedDataset(_ request: HTTPRequest, _ parameters: Router.Parameters, for access: TokenScope = .readOnly,
                           now: Date = Date()) throws -> DatasetStore {
        registry.dataset(try authorizedDatasetName(request.headers, parameters, for: access, now: now))
    }

    /// The admission check of the dataset routes that read: the checks of
    /// ``authorizedDataset(_:_:for:now:)``, made on the head so a request without the right token
    /// is refused before its body is read.
    var datasetAdmission: Router.Admission { datasetAdmission(for: .readOnly) }

    /// The admission check of the dataset routes that need `access`.
    func datasetAdmission(for access: TokenScope) -> Router.Admission {
        { [self] head, parameters in _ = try authorizedDatasetName(head.headers, parameters, for: access, now: Date()) }
    }

    /// The name of the dataset in the path, once the bearer token in `headers` is known to open it
    /// with `access`.
    private func authorizedDatasetName(_ headers: HTTPHeaders, _ parameters: Router.Parameters, for access: TokenScope,
                                       now: Date) throws -> String {
        guard let header = headers["Authorization"] else {
            throw APIError.unauthorized("this route needs an Authorization: Bearer <token> header")
        }
        guard let token = RouteContext.bearerToken(in: header) else {
            throw APIError.unauthorized("the Authorization header must be 'Bearer <token>'")
        }
        guard !token.isEmpty, token.utf8.count <= 256, let grant = try tokens.grant(forToken: String(token)) else {
            throw APIError.unauthorized("the bearer token is not valid")
        }
        if grant.isExpired(at: now), let expires = grant.expires {
            throw APIError.tokenExpired(at: expires)
        }
        let name = parameters["dataset"] ?? ""
        guard DatasetRegistry.isValidName(name) else { throw APIError.invalidDataset(name) }
        guard grant.dataset == name else { throw APIError.forbidden(name) }
        if access == .readWrite && grant.scope == .readOnly { throw APIError.insufficientScope(dataset: name, granted: grant.scope) }
        return name
    }

    /// The credentials of `Bearer <token>` (scheme case-insensitive, spaces and tabs around the
    /// token dropped, possibly empty), or `nil` for another shape. Works on bytes: it runs on
    /// every authenticated request.
    static func bearerToken(in header: String) -> Substring? {
        let bytes = header.utf8
        guard let schemeStart = bytes.firstIndex(where: { $0 != ASCII.space }),
              let gap = bytes[schemeStart...].firstIndex(of: ASCII.space),
              HTTPHeaders.namesMatch(header[schemeStart..<gap], "bearer") else { return nil }
        var credentials = bytes[bytes.index(after: gap)...]
        guard !credentials.isEmpty else { return nil }
        while let first = credentials.first, first == ASCII.space || first == ASCII.tab { credentials = credentials.dropFirst() }
        while let last = credentials.last, last == ASCII.space || last == ASCII.tab { credentials = credentials.dropLast() }
        return Substring(credentials)
    }
}

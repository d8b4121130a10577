import Foundation

/// Everything tunable about an ``HTTPServer``; the defaults suit a production server
/// such as `syncd`.
public struct HTTPServerConfiguration: Sendable {
    /// Numeric IPv4 or IPv6 address to bind. Loopback by default so nothing is exposed by
    /// accident; use `0.0.0.0` or `::` to listen on all interfaces.
    public var host: String = "127.0.0.1"
    /// TCP port; `0` picks an ephemeral port, readable from ``HTTPServer/port`` after start.
    public var port: UInt16 = 8080
    /// Kernel accept-queue length passed to `listen(2)`.
    public var listenBacklog: Int32 = 1024

    /// Maximum bytes of request line plus header fields; larger heads get `431`.
    public var maxHeadBytes: Int = 16 * 1024
    /// Maximum number of header fields; more get `431`.
    public var maxHeaderCount: Int = 100
    /// Maximum request body bytes after removing chunked framing; larger bodies get `413`.
    public var maxBodyBytes: Int = 32 * 1024 * 1024
    /// Maximum bytes all unfinished request bodies may hold together. A body is charged its
    /// declared `Content-Length` once admitted, a chunked body what it has grown to; a request
    /// that would exceed what is left gets `503` with `Retry-After` and is closed. A body's share
    /// returns when its handler finishes or its connection closes.
    public var maxBufferedBodyBytes: Int = 256 * 1024 * 1024
    /// Maximum simultaneously open client connections. Each open connection needs a file
    /// descriptor: see ``FileDescriptorLimit/raiseSoftLimitToHardLimit()``.
    ///
    /// A connection arriving at the limit makes room by shedding one open connection: one already
    /// answered and lingering first, else the longest-idle one (keep-alive, or connected without
    /// sending anything), else the one that has been receiving its request for longest (told
    /// `503` with `Retry-After` if the socket takes it). Connections whose request is being
    /// handled or whose response is being written are never shed; only when nothing else is left
    /// is the new connection answered `503` and closed. Slow or silent clients therefore cannot
    /// hold every slot against clients that send their requests promptly.
    public var maxConnections: Int = 4096

    /// How long a request may take to arrive: the head must be complete this long after its first
    /// byte, and while the body arrives every gap between reads must be shorter. Expiry sends
    /// `408` and closes, so slowloris clients cannot hold connections.
    public var readTimeout: Duration = .seconds(10)
    /// How long the whole body may take to arrive, from the moment its head was admitted,
    /// however steadily it trickles in. Expiry sends `408` and closes.
    public var bodyTimeout: Duration = .seconds(60)
    /// How long a keep-alive connection may sit idle between requests before it is closed.
    public var idleTimeout: Duration = .seconds(60)
    /// How long a response write may make no progress (the client stopped reading) before the
    /// connection is dropped.
    public var writeTimeout: Duration = .seconds(30)
    /// After sending a final response on a connection it closes, how long to keep reading and
    /// discarding client input so the response is not destroyed by a TCP reset.
    public var lingerTimeout: Duration = .seconds(2)
    /// Default time ``HTTPServer/shutdown(gracePeriod:)`` lets in-flight requests finish.
    public var shutdownGracePeriod: Duration = .seconds(10)

    /// Threads running the handler; they may block (e.g. on SQLite), the event loop never does.
    public var workerCount: Int = max(2, ProcessInfo.processInfo.activeProcessorCount)
    /// Whether responses carry a `Date` field (cached, formatted once per second).
    public var sendsDateHeader: Bool = true

    /// Called once per finished exchange, including server-generated error responses, from a
    /// worker or the event-loop thread. Keep it fast and thread-safe: a slow observer slows the
    /// server.
    public var onRequestCompleted: (@Sendable (HTTPRequestSummary) -> Void)?

    /// Builds the responses the server itself sends when it refuses a request before the handler
    /// sees it (malformed `400`, `408`, `413`, `431`, too many connections or too much body memory
    /// `503`), from the status
    /// and a sentence saying why; `nil` sends plain text. An application whose errors are JSON
    /// sets this so clients see one error format. Framing fields it sets are ignored as usual.
    public var errorResponse: (@Sendable (_ status: HTTPStatus, _ message: String) -> HTTPResponse)?

    /// Uses the portable poll(2) backend even where epoll exists, so Linux tests cover the code
    /// path macOS runs.
    var usesPortablePoller: Bool = false

    /// Creates the default configuration.
    public init() {}

    /// Creates the default configuration for `host:port`.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }
}

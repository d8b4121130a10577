import Foundation

/// An HTTP/1.1 server: one event-loop thread does all socket I/O without blocking, and a bounded
/// pool of worker threads runs the synchronous handler.
///
/// ```swift
/// var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 8080)
/// configuration.onRequestCompleted = { summary in log(summary) }
/// let server = HTTPServer(configuration: configuration) { request in
///     request.path == "/health" ? .text("ok\n") : .status(.notFound)
/// }
/// let signals = server.shutdownOnSignals()   // SIGTERM/SIGINT → graceful shutdown
/// try server.run()                           // returns after shutdown completes
/// _ = signals
/// ```
///
/// Only complete requests reach the handler, so a slow client never occupies a worker. A request
/// with a body first passes the optional admission check, as soon as its head has arrived and
/// before any of its body is read, so an application can refuse an unauthenticated upload without
/// buffering it.
public final class HTTPServer: @unchecked Sendable {
    // @unchecked: the mutable fields below are guarded by `condition`.

    /// The application's request handler. It runs on a worker thread and may block.
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    /// Decides, from its head alone, whether a request's body is read at all. It runs on a worker
    /// thread and may block; it is called only for requests with a body (`Content-Length` above
    /// zero or chunked), since the handler sees the others at no extra cost. Returning
    /// ``RequestAdmission/respond(_:)`` sends that response and closes the connection; a client
    /// that sent `Expect: 100-continue` gets `100 Continue` only after ``RequestAdmission/proceed``.
    public typealias Admission = @Sendable (HTTPRequestHead) -> RequestAdmission

    /// The configuration the server was created with.
    public let configuration: HTTPServerConfiguration

    private let handler: Handler
    private let admission: Admission?
    private let counters = HTTPServerCounters()
    private let condition = NSCondition()
    private var core: HTTPServerCore?
    private var boundPort: UInt16 = 0
    private var hasStarted = false
    private var hasFinished = false
    private var shutdownRequestedBeforeStart = false

    /// Creates a server; nothing is bound until ``start()``.
    ///
    /// - Parameters:
    ///   - admission: checks each request with a body before the body is read; `nil` admits all.
    ///   - handler: answers each complete request.
    public init(
        configuration: HTTPServerConfiguration = HTTPServerConfiguration(), admission: Admission? = nil,
        handler: @escaping Handler
    ) {
        self.configuration = configuration
        self.admission = admission
        self.handler = handler
    }

    /// The port actually bound (useful with port `0`); `0` before ``start()``.
    public var port: UInt16 {
        condition.lock()
        defer { condition.unlock() }
        return boundPort
    }

    /// Whether the server ran and has completely shut down; lets tests poll without blocking.
    var hasStopped: Bool {
        condition.lock()
        defer { condition.unlock() }
        return hasStarted && hasFinished
    }

    /// A snapshot of the connection and request counters.
    public var statistics: HTTPServerStatistics {
        counters.snapshot
    }

    /// Binds, listens and starts the event-loop and worker threads, then returns.
    ///
    /// - Throws: ``HTTPServerError`` if the address is invalid or binding fails (e.g. the port is
    ///   in use), or if called twice.
    public func start() throws(HTTPServerError) {
        condition.lock()
        defer { condition.unlock() }
        guard !hasStarted else { throw .alreadyStarted }
        hasStarted = true
        if shutdownRequestedBeforeStart {
            hasFinished = true
            return
        }
        let listener = try Socket.makeListener(
            host: configuration.host, port: configuration.port, backlog: configuration.listenBacklog)
        let core: HTTPServerCore
        do {
            core = try HTTPServerCore(
                configuration: configuration, listener: listener.descriptor, counters: counters,
                admission: admission, handler: handler)
        } catch {
            Socket.closeDescriptor(listener.descriptor)
            throw error
        }
        self.core = core
        boundPort = listener.port
        let thread = Thread { [self] in
            core.run()
            condition.lock()
            hasFinished = true
            self.core = nil
            condition.broadcast()
            condition.unlock()
        }
        thread.name = "http-event-loop"
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Blocks until the server has shut down (immediately if it never started).
    public func wait() {
        condition.lock()
        defer { condition.unlock() }
        while hasStarted && !hasFinished {
            condition.wait()
        }
    }

    /// ``start()`` followed by ``wait()``.
    public func run() throws(HTTPServerError) {
        try start()
        wait()
    }

    /// Starts a graceful shutdown and returns immediately; ``wait()`` and ``run()`` return once
    /// it completes. Safe to call from any thread, including a handler, and more than once (a
    /// later call can only shorten the grace period).
    ///
    /// The server stops accepting, closes idle connections, lets requests already being received
    /// or handled finish and their responses be written (each with `Connection: close`), then
    /// stops. After `gracePeriod` (default ``HTTPServerConfiguration/shutdownGracePeriod``)
    /// remaining connections are closed; a handler still running then keeps its worker thread
    /// until it returns, and its connection is closed without a response being sent.
    public func shutdown(gracePeriod: Duration? = nil) {
        condition.lock()
        let core = self.core
        if !hasStarted { shutdownRequestedBeforeStart = true }
        condition.unlock()
        core?.beginShutdown(gracePeriod: gracePeriod ?? configuration.shutdownGracePeriod)
    }
}

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The event-loop side of an ``HTTPServer``: the listening socket, accepting, the connection
/// table, timeouts and the shutdown sequence.
///
/// Loop-confined state is only touched on the loop thread; the flags workers read
/// (``isDraining``, ``isStopped``) are guarded by `stateLock`.
final class HTTPServerCore: @unchecked Sendable {
    /// Timeouts converted once to nanoseconds for cheap comparisons in the sweep.
    struct Timeouts {
        var read: UInt64
        var body: UInt64
        var idle: UInt64
        var write: UInt64
        var linger: UInt64
    }

    /// At most this many refused connections linger at once; beyond it they are closed without
    /// a `503` so a connection flood cannot exhaust descriptors through the refusal path.
    private static let maxRefusedConnections = 64

    /// The `Retry-After` of every `503` the server sends itself: overload here is transient (slow
    /// bodies finish or time out), so a client should come back soon rather than give up.
    static let retryAfterSeconds = 1

    let loop: EventLoop
    let handler: HTTPServer.Handler
    /// Decides about requests with a body before the body is read; `nil` admits every request.
    let admission: HTTPServer.Admission?
    let parserLimits: HTTPRequestParser.Limits
    let timeouts: Timeouts
    /// Scratch space for reads, shared by all connections because only the loop thread reads.
    let readBuffer: UnsafeMutableRawBufferPointer

    private let configuration: HTTPServerConfiguration

    /// The response for a request the server refuses itself (see ``HTTPServerConfiguration/errorResponse``).
    func errorResponse(_ status: HTTPStatus, _ message: String) -> HTTPResponse {
        configuration.errorResponse?(status, message) ?? .text("\(status.code) \(status.reasonPhrase): \(message)\n", status: status)
    }
    private let workers: WorkerPool
    private let dateCache: HTTPDateCache?
    private let counters: HTTPServerCounters
    private let tickInterval: UInt64

    private let stateLock = NSLock()
    private var draining = false
    private var stopped = false

    // Loop-thread state.
    private var listener: Int32?
    private var connections: [Int32: HTTPConnection] = [:]
    private var refusedCount = 0
    private var acceptPaused = false
    private var shutdownDeadline: UInt64?
    /// Bytes of ``HTTPServerConfiguration/maxBufferedBodyBytes`` held by unfinished bodies.
    private var bufferedBodyBytes = 0

    init(
        configuration: HTTPServerConfiguration,
        listener: Int32,
        counters: HTTPServerCounters,
        admission: HTTPServer.Admission?,
        handler: @escaping HTTPServer.Handler
    ) throws(HTTPServerError) {
        self.configuration = configuration
        self.listener = listener
        self.counters = counters
        self.admission = admission
        self.handler = handler
        loop = try EventLoop(forcePoll: configuration.usesPortablePoller)
        try loop.register(listener, interest: .read)
        parserLimits = HTTPRequestParser.Limits(
            maxHeadBytes: max(256, configuration.maxHeadBytes),
            maxBodyBytes: max(0, configuration.maxBodyBytes),
            maxHeaderCount: max(1, configuration.maxHeaderCount))
        timeouts = Timeouts(
            read: configuration.readTimeout.clampedNanoseconds,
            body: configuration.bodyTimeout.clampedNanoseconds,
            idle: configuration.idleTimeout.clampedNanoseconds,
            write: configuration.writeTimeout.clampedNanoseconds,
            linger: configuration.lingerTimeout.clampedNanoseconds)
        // Sweep often enough that a timeout fires within ~25% of its configured value.
        let shortest = [timeouts.read, timeouts.body, timeouts.idle, timeouts.write, timeouts.linger].min() ?? 1_000_000_000
        tickInterval = min(max(shortest / 4, 5_000_000), 250_000_000)
        readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        dateCache = configuration.sendsDateHeader ? HTTPDateCache() : nil
        workers = WorkerPool(threadCount: max(1, configuration.workerCount), namePrefix: "http-worker")
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Set once shutdown begins: new responses say `Connection: close`.
    var isDraining: Bool {
        stateLock.lock()
        defer { stateLock.unlock() }
        return draining
    }

    /// Set when the loop stops: connections still on workers close themselves.
    var isStopped: Bool {
        stateLock.lock()
        defer { stateLock.unlock() }
        return stopped
    }

    /// Runs the event loop on the calling thread until shutdown completes.
    func run() {
        loop.run(
            tickIntervalNanoseconds: tickInterval,
            onEvent: { event in
                if event.descriptor == listener {
                    acceptConnections()
                } else {
                    connections[event.descriptor]?.handleReadiness(event)
                }
            },
            onTick: { now in sweep(now: now) }
        )
        for connection in Array(connections.values) where !connection.isProcessing {
            connection.close()
        }
        // Connections still on a worker close themselves; dropping them here breaks the
        // core → connection → core cycle that would otherwise leak both.
        connections.removeAll()
        closeListener()
        workers.stop()
    }

    /// Begins a graceful shutdown. Safe from any thread; a second call can only shorten the
    /// grace period.
    func beginShutdown(gracePeriod: Duration) {
        stateLock.lock()
        draining = true
        stateLock.unlock()
        let grace = gracePeriod.clampedNanoseconds
        loop.execute { [self] in startDraining(graceNanoseconds: grace) }
    }

    // MARK: - Connection callbacks

    func submitToWorker(_ job: @escaping @Sendable () -> Void) {
        counters.update { $0.activeRequests += 1 }
        workers.submit(job)
    }

    func requestLeftWorker() {
        counters.update { $0.activeRequests -= 1 }
    }

    func requestCompleted(_ summary: HTTPRequestSummary) {
        counters.update { $0.completedRequests += 1 }
        configuration.onRequestCompleted?(summary)
    }

    /// Takes `bytes` from the server-wide budget for unfinished bodies; `false` (taking nothing)
    /// when too little is left. Loop thread only: only the loop reads bodies.
    func reserveBodyMemory(_ bytes: Int) -> Bool {
        guard bytes <= configuration.maxBufferedBodyBytes - bufferedBodyBytes else {
            counters.update { $0.bodiesRefusedForMemory += 1 }
            return false
        }
        bufferedBodyBytes += bytes
        let total = bufferedBodyBytes
        counters.update { $0.bufferedBodyBytes = total }
        return true
    }

    /// Gives back what ``reserveBodyMemory(_:)`` took. Loop thread only.
    func releaseBodyMemory(_ bytes: Int) {
        bufferedBodyBytes -= bytes
        let total = bufferedBodyBytes
        counters.update { $0.bufferedBodyBytes = total }
    }

    func currentDate() -> [UInt8]? {
        dateCache?.currentDate()
    }

    func connectionClosed(_ connection: HTTPConnection, onLoopThread: Bool) {
        if connection.isRefused {
            if onLoopThread { refusedCount -= 1 }
        } else {
            counters.update { $0.openConnections -= 1 }
        }
        guard onLoopThread else { return }
        if connections[connection.descriptor] === connection {
            connections[connection.descriptor] = nil
        }
        if shutdownDeadline != nil && connections.isEmpty { stopLoop() }
    }

    // MARK: - Loop thread

    private func acceptConnections() {
        guard let listener, !acceptPaused else { return }
        while true {
            switch Socket.accept(from: listener) {
            case .accepted(let descriptor, let remoteAddress):
                admit(descriptor: descriptor, remoteAddress: remoteAddress)
            case .wouldBlock:
                return
            case .failed(let error):
                if error == ECONNABORTED || error == EINTR || error == EPROTO { continue }
                // Out of descriptors or memory: retry on the next sweep instead of spinning.
                acceptPaused = true
                return
            }
        }
    }

    private func admit(descriptor: Int32, remoteAddress: String) {
        if connections.count - refusedCount >= configuration.maxConnections {
            shedOneConnection()
        }
        let openCount = connections.count - refusedCount
        let refused = openCount >= configuration.maxConnections
        counters.update {
            $0.acceptedConnections += 1
            if refused { $0.rejectedConnections += 1 } else { $0.openConnections += 1 }
        }
        if refused && refusedCount >= Self.maxRefusedConnections {
            Socket.closeDescriptor(descriptor)
            return
        }
        let connection = HTTPConnection(
            descriptor: descriptor, remoteAddress: remoteAddress, core: self, isRefused: refused)
        do {
            // Edge-triggered registrations never change afterwards, so every connection listens for
            // writability from the start: a response bigger than the socket buffer resumes when it drains.
            try loop.register(descriptor, interest: refused ? .write : [.read, .write])
        } catch {
            Socket.closeDescriptor(descriptor)
            if !refused { counters.update { $0.openConnections -= 1 } }
            return
        }
        connections[descriptor] = connection
        if refused {
            refusedCount += 1
            connection.process()
        }
    }

    /// Makes room at the connection limit by closing the open connection that costs least to lose:
    /// one already answered and lingering, else the longest-idle keep-alive (or silent new)
    /// connection, else the one that has been receiving its request for longest, since a client
    /// sending at a normal pace finishes in milliseconds. Connections whose request is with a
    /// worker or whose response is being written are never shed; when only those are left, the
    /// new connection is refused with `503` instead.
    private func shedOneConnection() {
        var victim: HTTPConnection?
        var victimRank = (priority: Int.max, since: UInt64.max)
        for connection in connections.values where !connection.isRefused {
            guard let rank = connection.sheddingRank() else { continue }
            if rank.priority < victimRank.priority || (rank.priority == victimRank.priority && rank.since < victimRank.since) {
                victim = connection
                victimRank = rank
            }
        }
        guard let victim else { return }
        counters.update { $0.shedConnections += 1 }
        victim.shed()
    }

    private func sweep(now: UInt64) {
        if acceptPaused {
            acceptPaused = false
            acceptConnections()
        }
        for connection in Array(connections.values) {
            connection.checkTimeouts(now: now)
        }
        if let deadline = shutdownDeadline, now >= deadline {
            forceStop()
        }
    }

    private func startDraining(graceNanoseconds: UInt64) {
        let deadline = MonotonicTime.nanoseconds() &+ graceNanoseconds
        shutdownDeadline = min(shutdownDeadline ?? deadline, deadline)
        closeListener()
        for connection in Array(connections.values) where connection.isIdle {
            connection.close()
        }
        if connections.isEmpty {
            stopLoop()
        } else if graceNanoseconds == 0 {
            forceStop()
        }
    }

    /// Grace period over: close everything the loop owns. Connections still running a handler
    /// are left to their worker, which closes them when it finds the loop stopped.
    private func forceStop() {
        stopLoop()
        for connection in Array(connections.values) where !connection.isProcessing {
            connection.close()
        }
    }

    private func stopLoop() {
        stateLock.lock()
        stopped = true
        stateLock.unlock()
        loop.stop()
    }

    private func closeListener() {
        guard let listener else { return }
        loop.deregister(listener)
        Socket.closeDescriptor(listener)
        self.listener = nil
    }
}

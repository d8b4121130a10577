import Foundation

/// A snapshot of an ``HTTPServer``'s counters, e.g. for Prometheus gauges and counters.
public struct HTTPServerStatistics: Sendable, Equatable {
    /// Client connections currently open (not counting ones being refused with `503`).
    public var openConnections: Int
    /// Connections accepted since start, including refused ones.
    public var acceptedConnections: Int
    /// Connections refused with `503` because ``HTTPServerConfiguration/maxConnections`` was reached.
    public var rejectedConnections: Int
    /// Open connections closed to make room for new ones at the connection limit (see
    /// ``HTTPServerConfiguration/maxConnections``).
    public var shedConnections: Int
    /// Requests refused with `503` because their body would not fit in
    /// ``HTTPServerConfiguration/maxBufferedBodyBytes``.
    public var bodiesRefusedForMemory: Int
    /// Bytes currently reserved for request bodies still being received.
    public var bufferedBodyBytes: Int
    /// Requests currently queued for or running on a worker thread (including admission checks),
    /// until the event loop has taken their connection back from the worker.
    public var activeRequests: Int
    /// Exchanges completed since start, including server-generated error responses.
    public var completedRequests: Int

    /// Creates a snapshot.
    public init(
        openConnections: Int = 0, acceptedConnections: Int = 0, rejectedConnections: Int = 0,
        shedConnections: Int = 0, bodiesRefusedForMemory: Int = 0, bufferedBodyBytes: Int = 0,
        activeRequests: Int = 0, completedRequests: Int = 0
    ) {
        self.openConnections = openConnections
        self.acceptedConnections = acceptedConnections
        self.rejectedConnections = rejectedConnections
        self.shedConnections = shedConnections
        self.bodiesRefusedForMemory = bodiesRefusedForMemory
        self.bufferedBodyBytes = bufferedBodyBytes
        self.activeRequests = activeRequests
        self.completedRequests = completedRequests
    }
}

/// Thread-safe storage behind ``HTTPServer/statistics``.
///
/// One lock rather than per-field atomics so a snapshot is consistent across fields; it is held
/// for a few nanoseconds and uncontended in practice.
final class HTTPServerCounters: @unchecked Sendable {
    // @unchecked: `values` is only accessed while holding `lock`.
    private let lock = NSLock()
    private var values = HTTPServerStatistics()

    var snapshot: HTTPServerStatistics {
        lock.lock()
        defer { lock.unlock() }
        return values
    }

    func update(_ change: (inout HTTPServerStatistics) -> Void) {
        lock.lock()
        change(&values)
        lock.unlock()
    }
}

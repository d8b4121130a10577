import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a closure when the process receives given signals, via `DispatchSource` rather than a
/// C signal handler, so the closure may do anything (log, lock, shut a server down).
///
/// Creating one sets the signals' default disposition to "ignore" so they no longer terminate the
/// process; that is a process-wide change, which is why the server never does it on its own and
/// the executable opts in. Keep the returned object alive for as long as signals should be handled.
public final class SignalShutdownHandler: @unchecked Sendable {
    // @unchecked: `sources` is immutable after init and DispatchSource is thread-safe.
    private let sources: [any DispatchSourceSignal]

    /// Calls `handler` with the signal number each time one of `signals` arrives.
    public init(
        signals: [Int32] = [SIGTERM, SIGINT],
        queue: DispatchQueue = DispatchQueue(label: "HTTPServer.signals"),
        handler: @escaping @Sendable (Int32) -> Void
    ) {
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    /// Stops handling the signals (their disposition stays "ignore").
    public func cancel() {
        for source in sources { source.cancel() }
    }

    deinit {
        cancel()
    }
}

extension HTTPServer {
    /// Shuts the server down gracefully on the first `SIGTERM`/`SIGINT` and immediately (grace
    /// period zero) on the second, so an impatient operator can press Ctrl-C twice.
    ///
    /// Keep the returned handler alive until ``run()`` returns.
    public func shutdownOnSignals(
        _ signals: [Int32] = [SIGTERM, SIGINT],
        onSignal: (@Sendable (Int32) -> Void)? = nil
    ) -> SignalShutdownHandler {
        let received = SignalCounter()
        return SignalShutdownHandler(signals: signals) { [self] number in
            onSignal?(number)
            if received.increment() == 1 {
                shutdown()
            } else {
                shutdown(gracePeriod: .zero)
            }
        }
    }
}

/// Counts delivered signals; the handler queue is serial, the lock only satisfies Sendable.
private final class SignalCounter: @unchecked Sendable {
    // @unchecked: `count` is only accessed while holding `lock`.
    private let lock = NSLock()
    private var count = 0

    func increment() -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count
    }
}

import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if os(Linux)
import CEpoll
#endif

/// A single-threaded readiness loop with a cross-thread task queue.
///
/// Everything registered with the loop is touched only on the loop's thread; other threads
/// communicate by ``execute(_:)``, which queues a closure and wakes the loop (an eventfd on
/// Linux, a pipe elsewhere). Wake-ups are coalesced: a burst of handbacks from workers costs one
/// wake write and one read.
final class EventLoop: @unchecked Sendable {
    // @unchecked: `poller` and `handlers` are confined to the loop thread; `pendingTasks`,
    // `wakePending` and `acceptsTasks` are guarded by `taskLock`.

    private let poller: any Poller
    private let wakeReadDescriptor: Int32
    private let wakeWriteDescriptor: Int32
    private let taskLock = NSLock()
    private var pendingTasks: [@Sendable () -> Void] = []
    private var runningTasks: [@Sendable () -> Void] = []
    private var wakePending = false
    private var acceptsTasks = true
    private var stopRequested = false

    /// Creates a loop with the platform's preferred poller, or poll(2) when `forcePoll` is set
    /// (used by tests to exercise the portable backend on Linux).
    init(forcePoll: Bool = false) throws(HTTPServerError) {
        #if os(Linux)
        poller = forcePoll ? PollPoller() : try EpollPoller()
        let descriptor = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        guard descriptor >= 0 else { throw .systemCallFailed(operation: "eventfd", errno: errno) }
        wakeReadDescriptor = descriptor
        wakeWriteDescriptor = descriptor
        #else
        poller = PollPoller()
        var descriptors: [Int32] = [0, 0]
        guard pipe(&descriptors) == 0 else { throw .systemCallFailed(operation: "pipe", errno: errno) }
        wakeReadDescriptor = descriptors[0]
        wakeWriteDescriptor = descriptors[1]
        try Socket.makeNonBlockingAndCloseOnExec(wakeReadDescriptor)
        try Socket.makeNonBlockingAndCloseOnExec(wakeWriteDescriptor)
        #endif
        try poller.add(wakeReadDescriptor, interest: .read)
    }

    /// Starts watching a descriptor. Loop thread only.
    func register(_ descriptor: Int32, interest: PollInterest) throws(HTTPServerError) {
        try poller.add(descriptor, interest: interest)
    }

    /// Updates what a descriptor is watched for. Loop thread only.
    func setInterest(_ descriptor: Int32, _ interest: PollInterest) {
        poller.update(descriptor, interest: interest)
    }

    /// Stops watching a descriptor that is about to be closed. Loop thread only.
    func deregister(_ descriptor: Int32) {
        poller.remove(descriptor)
    }

    /// Queues `task` to run on the loop thread. Safe from any thread.
    ///
    /// Returns `false` once the loop has stopped; the caller then still owns whatever it meant to
    /// hand over and must clean it up itself.
    @discardableResult
    func execute(_ task: @escaping @Sendable () -> Void) -> Bool {
        taskLock.lock()
        guard acceptsTasks else {
            taskLock.unlock()
            return false
        }
        pendingTasks.append(task)
        let needsWake = !wakePending
        wakePending = true
        taskLock.unlock()
        if needsWake { signalWake() }
        return true
    }

    /// Makes ``run(tickIntervalNanoseconds:onEvent:onTick:)`` return after the current iteration.
    /// Loop thread only.
    func stop() {
        stopRequested = true
    }

    /// Runs until ``stop()``, then refuses new tasks, runs the ones already queued (so nothing
    /// handed over is lost) and releases the loop's descriptors.
    ///
    /// `onTick` runs roughly every `tickIntervalNanoseconds` with the current monotonic time, for
    /// timeouts; `onEvent` runs for each ready descriptor other than the wake-up one.
    func run(
        tickIntervalNanoseconds: UInt64,
        onEvent: (ReadinessEvent) -> Void,
        onTick: (UInt64) -> Void
    ) {
        var nextTick = MonotonicTime.nanoseconds() + tickIntervalNanoseconds
        while !stopRequested {
            let now = MonotonicTime.nanoseconds()
            let waitMilliseconds = nextTick > now ? Int32(clamping: (nextTick - now + 999_999) / 1_000_000) : 0
            poller.wait(timeoutMilliseconds: waitMilliseconds) { event in
                if event.descriptor == wakeReadDescriptor {
                    drainWake()
                } else {
                    onEvent(event)
                }
            }
            runQueuedTasks()
            let afterWait = MonotonicTime.nanoseconds()
            if afterWait >= nextTick {
                onTick(afterWait)
                nextTick = afterWait + tickIntervalNanoseconds
            }
        }
        taskLock.lock()
        acceptsTasks = false
        taskLock.unlock()
        runQueuedTasks()
        poller.close()
        Socket.closeDescriptor(wakeReadDescriptor)
        if wakeWriteDescriptor != wakeReadDescriptor { Socket.closeDescriptor(wakeWriteDescriptor) }
    }

    private func runQueuedTasks() {
        taskLock.lock()
        // Swap buffers so tasks run without the lock and both arrays keep their capacity.
        swap(&pendingTasks, &runningTasks)
        wakePending = false
        taskLock.unlock()
        for task in runningTasks { task() }
        runningTasks.removeAll(keepingCapacity: true)
    }

    private func signalWake() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { bytes in
            #if os(Linux)
            write(wakeWriteDescriptor, bytes.baseAddress, 8)
            #else
            write(wakeWriteDescriptor, bytes.baseAddress, 1)
            #endif
        }
    }

    private func drainWake() {
        var scratch: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &scratch) { buffer in
            while read(wakeReadDescriptor, buffer.baseAddress, buffer.count) > 0 {}
        }
    }
}

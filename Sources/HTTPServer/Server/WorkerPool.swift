import Foundation

/// A fixed number of threads running blocking application work (handlers doing SQLite I/O).
///
/// Jobs are queued without bound here, but the server submits at most one job per connection,
/// so the queue is bounded by the connection limit.
final class WorkerPool: @unchecked Sendable {
    // @unchecked: `jobs`, `head` and `isStopping` are guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [(@Sendable () -> Void)?] = []
    private var head = 0
    private var isStopping = false
    private let threadCount: Int

    /// Starts `threadCount` threads named `namePrefix-N`.
    init(threadCount: Int, namePrefix: String, stackSize: Int = 4 << 20) {
        self.threadCount = threadCount
        for index in 0..<threadCount {
            let thread = Thread { [self] in runWorker() }
            thread.name = "\(namePrefix)-\(index)"
            // Handlers encode JSON and run SQLite; Darwin's 512 KiB default for secondary
            // threads is too tight for that.
            thread.stackSize = stackSize
            thread.start()
        }
    }

    /// Queues a job; it runs on the first free worker.
    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Lets workers exit once the queue is empty. Jobs already queued still run.
    func stop() {
        condition.lock()
        isStopping = true
        condition.broadcast()
        condition.unlock()
    }

    private func runWorker() {
        while let job = nextJob() {
            job()
        }
    }

    private func nextJob() -> (@Sendable () -> Void)? {
        condition.lock()
        defer { condition.unlock() }
        while head == jobs.count {
            if isStopping { return nil }
            condition.wait()
        }
        let job = jobs[head]
        jobs[head] = nil
        head += 1
        // Reset the array once drained so it does not grow forever; amortised O(1) dequeue.
        if head == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024 && head * 2 >= jobs.count {
            jobs.removeFirst(head)
            head = 0
        }
        return job
    }
}

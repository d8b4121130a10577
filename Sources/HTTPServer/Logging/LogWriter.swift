import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes lines to a file descriptor (`syncd` uses stderr) from a thread of its own, so the
/// threads answering requests never wait for log I/O and one `write(2)` carries many lines.
///
/// ```swift
/// let log = LogWriter(descriptor: STDERR_FILENO)
/// log.write("one line")   // returns at once; written within about `batchDelay`
/// log.flush()             // returns once everything written so far reached the descriptor
/// ```
///
/// Lines are never dropped: when `maxPendingBytes` are waiting (the reader of the descriptor is
/// slower than the server), ``write(_:)`` blocks until the writer thread catches up, as a direct
/// write would. Lines from concurrent callers never interleave. Call ``flush()`` before the
/// process exits, or ``close()`` to also stop the thread (which keeps the writer alive until then).
public final class LogWriter: @unchecked Sendable {
    // @unchecked: every mutable field is only accessed while holding `condition`, except
    // `outgoing`, which only the writer thread touches.

    private let descriptor: Int32
    private let batchDelay: TimeInterval
    private let maxPendingBytes: Int
    private let condition = NSCondition()
    private var pending: [UInt8] = []
    private var outgoing: [UInt8] = []
    /// Bytes ever queued and ever written: ``flush()`` waits for the second to reach the first.
    private var queuedTotal: UInt64 = 0
    private var writtenTotal: UInt64 = 0
    private var flushWaiters = 0
    private var isClosing = false
    private var isFinished = false

    /// Starts the writer thread.
    ///
    /// - Parameters:
    ///   - descriptor: where lines go; not closed by the writer.
    ///   - batchDelay: how long the thread collects lines after the first one arrives before it
    ///     writes them, trading a few milliseconds of delay for far fewer system calls under load.
    ///   - maxPendingBytes: how much may wait before ``write(_:)`` blocks.
    public init(descriptor: Int32, batchDelay: Duration = .milliseconds(5), maxPendingBytes: Int = 1 << 20) {
        self.descriptor = descriptor
        self.batchDelay = Double(batchDelay.clampedNanoseconds) / 1e9
        self.maxPendingBytes = max(1, maxPendingBytes)
        let thread = Thread { [self] in runWriter() }
        thread.name = "log-writer"
        thread.start()
    }

    /// Queues `line` and a newline. After ``close()`` the line is written before this returns.
    public func write(_ line: String) {
        condition.lock()
        defer { condition.unlock() }
        if isFinished {
            var bytes = Array(line.utf8)
            bytes.append(ASCII.lineFeed)
            writeAll(bytes)
            return
        }
        while pending.count >= maxPendingBytes && !isFinished {
            condition.wait()
        }
        let wasEmpty = pending.isEmpty
        let before = pending.count
        pending.append(contentsOf: line.utf8)
        pending.append(ASCII.lineFeed)
        queuedTotal &+= UInt64(pending.count - before)
        // Wake the writer for the first line of a batch, or early when the buffer fills up.
        if wasEmpty || pending.count >= maxPendingBytes { condition.broadcast() }
    }

    /// Returns once every line queued before the call has been handed to the descriptor.
    public func flush() {
        condition.lock()
        defer { condition.unlock() }
        let target = queuedTotal
        flushWaiters += 1
        condition.broadcast()
        while writtenTotal < target && !isFinished {
            condition.wait()
        }
        flushWaiters -= 1
    }

    /// Writes everything queued and stops the thread. Later lines are written synchronously.
    public func close() {
        condition.lock()
        defer { condition.unlock() }
        isClosing = true
        condition.broadcast()
        while !isFinished {
            condition.wait()
        }
    }

    // MARK: Writer thread

    private func runWriter() {
        condition.lock()
        while true {
            while pending.isEmpty && !isClosing {
                condition.wait()
            }
            if pending.isEmpty { break }
            let deadline = Date(timeIntervalSinceNow: batchDelay)
            while flushWaiters == 0 && !isClosing && pending.count < maxPendingBytes {
                if !condition.wait(until: deadline) { break }
            }
            swap(&pending, &outgoing)
            condition.unlock()
            writeAll(outgoing)
            condition.lock()
            writtenTotal &+= UInt64(outgoing.count)
            // Keep a buffer of ordinary size for the next batch; give back one a burst grew.
            outgoing.removeAll(keepingCapacity: outgoing.capacity <= 256 * 1024)
            condition.broadcast()
        }
        isFinished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Writes all of `bytes`, retrying after interruptions and waiting while a non-blocking
    /// descriptor is full. Other errors (a closed descriptor) drop the rest: there is nowhere
    /// left to report them.
    private func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let result = systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if result > 0 {
                    offset += result
                } else if result < 0 && errno == EINTR {
                    continue
                } else if result < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    var waiting = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&waiting, 1, 1000)
                } else {
                    return
                }
            }
        }
    }
}

/// `write(2)`, under a name the method of the same name does not shadow.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}

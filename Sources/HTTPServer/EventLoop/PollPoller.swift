#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Level-triggered poll(2) backend for platforms without epoll.
///
/// It rebuilds the descriptor array on every wait, which is O(connections); acceptable for
/// development on macOS, while production on Linux uses ``EpollPoller``.
final class PollPoller: Poller {
    private var interests: [Int32: PollInterest] = [:]
    private var descriptors: [pollfd] = []

    init() {}

    func add(_ descriptor: Int32, interest: PollInterest) throws(HTTPServerError) {
        interests[descriptor] = interest
    }

    func update(_ descriptor: Int32, interest: PollInterest) {
        if interests[descriptor] != nil { interests[descriptor] = interest }
    }

    func remove(_ descriptor: Int32) {
        interests[descriptor] = nil
    }

    func wait(timeoutMilliseconds: Int32, _ handle: (ReadinessEvent) -> Void) {
        descriptors.removeAll(keepingCapacity: true)
        for (descriptor, interest) in interests where !interest.isEmpty {
            var events: Int16 = 0
            if interest.contains(.read) { events |= Int16(POLLIN) }
            if interest.contains(.write) { events |= Int16(POLLOUT) }
            descriptors.append(pollfd(fd: descriptor, events: events, revents: 0))
        }
        let count = descriptors.withUnsafeMutableBufferPointer { buffer in
            poll(buffer.baseAddress, nfds_t(buffer.count), timeoutMilliseconds)
        }
        guard count > 0 else { return }
        let errorMask = Int16(POLLERR) | Int16(POLLHUP) | Int16(POLLNVAL)
        for entry in descriptors where entry.revents != 0 {
            handle(
                ReadinessEvent(
                    descriptor: entry.fd,
                    isReadable: entry.revents & (Int16(POLLIN) | errorMask) != 0,
                    isWritable: entry.revents & (Int16(POLLOUT) | errorMask) != 0
                )
            )
        }
    }

    func close() {}
}

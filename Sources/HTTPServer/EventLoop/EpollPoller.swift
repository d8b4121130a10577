#if os(Linux)
import CEpoll
import Glibc

/// Edge-triggered epoll backend.
///
/// Each descriptor is registered once for input, output and peer hang-up; with edge triggering
/// the kernel reports only transitions, so a connection that is busy on a worker thread does
/// not make the loop spin, and no `epoll_ctl` is needed when it comes back.
final class EpollPoller: Poller {
    private let epollDescriptor: Int32
    private var events: [epoll_event]

    init(maxEventsPerWait: Int = 256) throws(HTTPServerError) {
        epollDescriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollDescriptor >= 0 else { throw .systemCallFailed(operation: "epoll_create1", errno: errno) }
        events = [epoll_event](repeating: epoll_event(), count: maxEventsPerWait)
    }

    func add(_ descriptor: Int32, interest: PollInterest) throws(HTTPServerError) {
        var event = epoll_event()
        var mask = EPOLLET.rawValue | EPOLLRDHUP.rawValue
        if interest.contains(.read) { mask |= EPOLLIN.rawValue }
        if interest.contains(.write) { mask |= EPOLLOUT.rawValue }
        event.events = mask
        event.data.fd = descriptor
        guard epoll_ctl(epollDescriptor, EPOLL_CTL_ADD, descriptor, &event) == 0 else {
            throw .systemCallFailed(operation: "epoll_ctl(ADD)", errno: errno)
        }
    }

    func update(_ descriptor: Int32, interest: PollInterest) {
        // Edge-triggered registrations never change; see the type's documentation.
    }

    func remove(_ descriptor: Int32) {
        // close(2) removes the descriptor from the epoll set; an explicit EPOLL_CTL_DEL would
        // only cost a syscall per connection.
    }

    func wait(timeoutMilliseconds: Int32, _ handle: (ReadinessEvent) -> Void) {
        let count = events.withUnsafeMutableBufferPointer { buffer in
            epoll_wait(epollDescriptor, buffer.baseAddress, Int32(buffer.count), timeoutMilliseconds)
        }
        guard count > 0 else { return }
        let errorMask = EPOLLERR.rawValue | EPOLLHUP.rawValue
        for index in 0..<Int(count) {
            let event = events[index]
            let mask = event.events
            handle(
                ReadinessEvent(
                    descriptor: event.data.fd,
                    isReadable: mask & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | errorMask) != 0,
                    isWritable: mask & (EPOLLOUT.rawValue | errorMask) != 0
                )
            )
        }
    }

    func close() {
        _ = Glibc.close(epollDescriptor)
    }
}
#endif

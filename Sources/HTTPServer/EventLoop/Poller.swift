/// What a descriptor wants to be woken for.
struct PollInterest: OptionSet {
    let rawValue: UInt8
    static let read = PollInterest(rawValue: 1)
    static let write = PollInterest(rawValue: 2)
    static let none: PollInterest = []
}

/// Readiness reported for one descriptor.
struct ReadinessEvent {
    var descriptor: Int32
    /// Readable, or the peer hung up / errored (a read then reports it).
    var isReadable: Bool
    /// Writable, or errored (a write then reports it).
    var isWritable: Bool
}

/// A readiness multiplexer: epoll on Linux, poll(2) elsewhere.
///
/// Both backends are used the same way: callers always read or write until `EAGAIN` after an
/// event and keep ``update(_:interest:)`` accurate. The epoll backend is edge-triggered and
/// ignores interest updates (saving a syscall per request); the poll backend is level-triggered
/// and relies on them so it does not spin on descriptors that are busy elsewhere.
protocol Poller: AnyObject {
    /// Starts watching `descriptor`.
    func add(_ descriptor: Int32, interest: PollInterest) throws(HTTPServerError)
    /// Changes what `descriptor` is watched for.
    func update(_ descriptor: Int32, interest: PollInterest)
    /// Stops watching `descriptor`; call before closing it.
    func remove(_ descriptor: Int32)
    /// Blocks up to `timeoutMilliseconds` (-1: forever) and reports ready descriptors.
    func wait(timeoutMilliseconds: Int32, _ handle: (ReadinessEvent) -> Void)
    /// Releases the poller's own descriptor.
    func close()
}

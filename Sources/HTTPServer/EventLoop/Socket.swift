#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Outcome of a non-blocking read or write.
enum SocketIOResult {
    /// This many bytes were transferred (always more than zero).
    case transferred(Int)
    /// The peer closed its sending side (reads only).
    case endOfStream
    /// Nothing can be transferred until the poller reports readiness again.
    case wouldBlock
    /// The connection is broken (reset, timed out, …).
    case failed(Int32)
}

/// Outcome of accepting one pending connection.
enum SocketAcceptResult {
    case accepted(descriptor: Int32, remoteAddress: String)
    case wouldBlock
    /// Accept failed for a transient reason such as a full descriptor table (`EMFILE`).
    case failed(Int32)
}

/// Thin wrappers over the platform's BSD socket calls.
///
/// Everything that differs between Glibc and Darwin lives here so the rest of the server is
/// platform-neutral. All sockets are non-blocking, close-on-exec, and never raise `SIGPIPE`
/// (`MSG_NOSIGNAL` on Linux, `SO_NOSIGPIPE` on Darwin), so a peer vanishing mid-write is an
/// ordinary error rather than a process kill.
enum Socket {
    #if canImport(Glibc)
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    private static let sendFlags = Int32(MSG_NOSIGNAL)
    #else
    private static let streamType = SOCK_STREAM
    private static let sendFlags: Int32 = 0
    #endif

    /// Creates a listening socket bound to `host:port` (numeric IPv4 or IPv6 address) and
    /// returns it with the port actually bound, which differs from `port` when that is 0.
    static func makeListener(host: String, port: UInt16, backlog: Int32) throws(HTTPServerError) -> (
        descriptor: Int32, port: UInt16
    ) {
        var storage = sockaddr_storage()
        let addressLength: socklen_t
        let family: Int32
        if let ipv4 = ipv4Address(host, port: port) {
            family = AF_INET
            addressLength = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: ipv4, as: sockaddr_in.self) }
        } else if let ipv6 = ipv6Address(host, port: port) {
            family = AF_INET6
            addressLength = socklen_t(MemoryLayout<sockaddr_in6>.size)
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: ipv6, as: sockaddr_in6.self) }
        } else {
            throw .invalidAddress(host)
        }

        let descriptor = socket(family, streamType, 0)
        guard descriptor >= 0 else { throw .systemCallFailed(operation: "socket", errno: errno) }
        do throws(HTTPServerError) {
            try configureDescriptor(descriptor)
            // Lets a restarted server rebind while old connections sit in TIME_WAIT.
            try setOption(descriptor, level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
            let bound = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, addressLength) }
            }
            guard bound == 0 else { throw .systemCallFailed(operation: "bind \(host):\(port)", errno: errno) }
            guard listen(descriptor, backlog) == 0 else { throw .systemCallFailed(operation: "listen", errno: errno) }
            return (descriptor, try boundPort(descriptor))
        } catch {
            closeDescriptor(descriptor)
            throw error
        }
    }

    /// Accepts one pending connection and makes it non-blocking.
    static func accept(from listener: Int32) -> SocketAcceptResult {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let descriptor = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                #if canImport(Glibc)
                Glibc.accept(listener, $0, &length)
                #else
                Darwin.accept(listener, $0, &length)
                #endif
            }
        }
        guard descriptor >= 0 else {
            let error = errno
            return error == EAGAIN || error == EWOULDBLOCK ? .wouldBlock : .failed(error)
        }
        do {
            try configureDescriptor(descriptor)
            // Responses go out in a single write; Nagle would only delay pipelined answers.
            try setOption(descriptor, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1)
        } catch {
            closeDescriptor(descriptor)
            return .failed(errno)
        }
        return .accepted(descriptor: descriptor, remoteAddress: describe(storage))
    }

    /// Reads into `buffer` without blocking.
    static func receive(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) -> SocketIOResult {
        while true {
            let count = recv(descriptor, buffer.baseAddress, buffer.count, 0)
            if count > 0 { return .transferred(count) }
            if count == 0 { return .endOfStream }
            let error = errno
            if error == EINTR { continue }
            return error == EAGAIN || error == EWOULDBLOCK ? .wouldBlock : .failed(error)
        }
    }

    /// Writes from `bytes` without blocking; may transfer fewer bytes than offered.
    static func send(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> SocketIOResult {
        while true {
            #if canImport(Glibc)
            let count = Glibc.send(descriptor, bytes.baseAddress, bytes.count, sendFlags)
            #else
            let count = Darwin.send(descriptor, bytes.baseAddress, bytes.count, sendFlags)
            #endif
            if count >= 0 { return count == 0 && !bytes.isEmpty ? .wouldBlock : .transferred(count) }
            let error = errno
            if error == EINTR { continue }
            return error == EAGAIN || error == EWOULDBLOCK ? .wouldBlock : .failed(error)
        }
    }

    /// Sends FIN so the client sees the end of the last response while we drain its input.
    static func shutdownWrite(_ descriptor: Int32) {
        _ = shutdown(descriptor, Int32(SHUT_WR))
    }

    static func closeDescriptor(_ descriptor: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(descriptor)
        #else
        _ = Darwin.close(descriptor)
        #endif
    }

    /// Makes a descriptor non-blocking and close-on-exec (and SIGPIPE-free on Darwin).
    static func configureDescriptor(_ descriptor: Int32) throws(HTTPServerError) {
        try makeNonBlockingAndCloseOnExec(descriptor)
        #if canImport(Darwin)
        try setOption(descriptor, level: SOL_SOCKET, name: SO_NOSIGPIPE, value: 1)
        #endif
    }

    /// Makes a descriptor non-blocking and close-on-exec: one end of the loop's wake-up pipe
    /// (non-Linux platforms), or a socket before its further options.
    static func makeNonBlockingAndCloseOnExec(_ descriptor: Int32) throws(HTTPServerError) {
        let flags = fcntl(descriptor, F_GETFL, 0)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else {
            throw .systemCallFailed(operation: "fcntl(O_NONBLOCK)", errno: errno)
        }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    }

    private static func setOption(_ descriptor: Int32, level: Int32, name: Int32, value: Int32)
        throws(HTTPServerError)
    {
        var value = value
        guard setsockopt(descriptor, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw .systemCallFailed(operation: "setsockopt", errno: errno)
        }
    }

    private static func boundPort(_ descriptor: Int32) throws(HTTPServerError) -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard result == 0 else { throw .systemCallFailed(operation: "getsockname", errno: errno) }
        let family = Int32(storage.ss_family)
        return withUnsafeBytes(of: &storage) { raw in
            if family == AF_INET6 {
                return UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port)
            }
            return UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port)
        }
    }

    private static func ipv4Address(_ host: String, port: UInt16) -> sockaddr_in? {
        var address = sockaddr_in()
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return nil }
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        return address
    }

    private static func ipv6Address(_ host: String, port: UInt16) -> sockaddr_in6? {
        var address = sockaddr_in6()
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        guard inet_pton(AF_INET6, bare, &address.sin6_addr) == 1 else { return nil }
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = port.bigEndian
        #if canImport(Darwin)
        address.sin6_len = UInt8(MemoryLayout<sockaddr_in6>.size)
        #endif
        return address
    }

    /// `host:port` for IPv4, `[host]:port` for IPv6.
    private static func describe(_ storage: sockaddr_storage) -> String {
        var storage = storage
        let family = Int32(storage.ss_family)
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        return withUnsafeBytes(of: &storage) { raw -> String in
            if family == AF_INET {
                var address = raw.load(as: sockaddr_in.self)
                guard inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count)) != nil else { return "?" }
                return cString(text) + ":" + String(UInt16(bigEndian: address.sin_port))
            }
            if family == AF_INET6 {
                var address = raw.load(as: sockaddr_in6.self)
                guard inet_ntop(AF_INET6, &address.sin6_addr, &text, socklen_t(text.count)) != nil else { return "?" }
                return "[" + cString(text) + "]:" + String(UInt16(bigEndian: address.sin6_port))
            }
            return "?"
        }
    }

    private static func cString(_ characters: [CChar]) -> String {
        let bytes = characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

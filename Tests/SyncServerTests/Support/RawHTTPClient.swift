import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A response as read off the wire by ``RawHTTPClient``.
struct RawResponse {
    var status: Int
    var reason: String
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var bodyText: String { String(decoding: body, as: UTF8.self) }
}

struct RawClientError: Error, CustomStringConvertible {
    var description: String
}

/// A minimal blocking HTTP/1.1 client over a loopback TCP socket, so tests control every byte
/// (pipelining, malformed input, half-sent requests) and every read has a deadline.
final class RawHTTPClient {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private(set) var isClosedByPeer = false

    init(port: UInt16) throws {
        #if canImport(Glibc)
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw RawClientError(description: "socket failed: \(errno)") }
        #if canImport(Darwin)
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        // Short receive timeout so reads can poll a deadline instead of hanging a test forever.
        var timeout = timeval(tv_sec: 0, tv_usec: 50_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(descriptor)
            throw RawClientError(description: "connect failed: \(code)")
        }
    }

    deinit {
        close(descriptor)
    }

    /// Sends all bytes; returns `false` if the server already closed the connection.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            #if canImport(Glibc)
            let count = bytes.withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            #else
            let count = bytes.withUnsafeBytes { Darwin.send(descriptor, $0.baseAddress! + offset, bytes.count - offset, 0) }
            #endif
            if count <= 0 {
                if count < 0 && errno == EINTR { continue }
                return false
            }
            offset += count
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool {
        send(Array(text.utf8))
    }

    /// Half-closes the client's sending side.
    func shutdownWrite() {
        shutdown(descriptor, Int32(SHUT_WR))
    }

    /// Reads one response; bytes after it stay buffered for the next call (pipelining).
    func readResponse(timeout: Double = 5, isHeadRequest: Bool = false) throws -> RawResponse {
        let deadline = Date().addingTimeInterval(timeout)
        var headEnd: Int?
        while headEnd == nil {
            headEnd = findHeadEnd()
            if headEnd == nil {
                try fill(deadline: deadline)
            }
        }
        let head = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let statusParts = statusLine.split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, statusParts[0] == "HTTP/1.1", let status = Int(statusParts[1]) else {
            throw RawClientError(description: "bad status line: \(statusLine)")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw RawClientError(description: "bad header: \(line)") }
            headers.append(
                (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        buffer.removeFirst(headEnd! + 4)
        let lengthField = headers.first { $0.name.lowercased() == "content-length" }?.value
        let length = isHeadRequest ? 0 : Int(lengthField ?? "0") ?? 0
        while buffer.count < length {
            try fill(deadline: deadline)
        }
        let body = Array(buffer[0..<length])
        buffer.removeFirst(length)
        return RawResponse(
            status: status, reason: statusParts.count > 2 ? String(statusParts[2]) : "", headers: headers, body: body)
    }

    /// Waits until the server closes the connection; `true` if it did within `timeout`.
    /// Any bytes received meanwhile are kept in the buffer.
    func waitForClose(timeout: Double = 5) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !isClosedByPeer {
            do {
                try fill(deadline: deadline)
            } catch {
                return isClosedByPeer
            }
        }
        return true
    }

    /// Bytes received but not yet consumed by ``readResponse(timeout:isHeadRequest:)``.
    var unreadBytes: [UInt8] { buffer }

    private func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }

    private func fill(deadline: Date) throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            if isClosedByPeer { throw RawClientError(description: "connection closed by server") }
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                return
            }
            if count == 0 {
                isClosedByPeer = true
                throw RawClientError(description: "connection closed by server")
            }
            let code = errno
            if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { continue }
            isClosedByPeer = true
            throw RawClientError(description: "recv failed: \(code)")
        }
        throw RawClientError(description: "timed out waiting for the server")
    }
}

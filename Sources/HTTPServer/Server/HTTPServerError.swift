#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Errors from starting an ``HTTPServer``.
public enum HTTPServerError: Error, Equatable, CustomStringConvertible {
    /// The configured host is not a numeric IPv4 or IPv6 address.
    case invalidAddress(String)
    /// A system call failed; `errno` says why (e.g. `EADDRINUSE` from `bind`).
    case systemCallFailed(operation: String, errno: Int32)
    /// ``HTTPServer/start()`` was called more than once.
    case alreadyStarted

    /// A one-line explanation, including the system's text for `errno`.
    public var description: String {
        switch self {
        case .invalidAddress(let host):
            return "invalid listen address '\(host)': expected a numeric IPv4 or IPv6 address"
        case .systemCallFailed(let operation, let code):
            return "\(operation) failed: \(String(cString: strerror(code))) (errno \(code))"
        case .alreadyStarted:
            return "the server was already started"
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Helpers for the process's open-file limit, which caps how many connections can be open.
///
/// Many systems default the soft limit to 1,024 descriptors, fewer than
/// ``HTTPServerConfiguration/maxConnections``; the executable can raise it at startup.
public enum FileDescriptorLimit {
    /// The current soft limit, or `nil` if it cannot be read.
    public static var current: Int? {
        var limits = rlimit()
        guard getrlimit(resourceKind, &limits) == 0 else { return nil }
        return Int(clamping: limits.rlim_cur)
    }

    /// Raises the soft limit to the hard limit (capped by `OPEN_MAX` on Darwin) and returns the
    /// new soft limit, or `nil` if it could not be changed.
    @discardableResult
    public static func raiseSoftLimitToHardLimit() -> Int? {
        var limits = rlimit()
        guard getrlimit(resourceKind, &limits) == 0 else { return nil }
        var target = limits.rlim_max
        #if canImport(Darwin)
        target = min(target, rlim_t(OPEN_MAX))
        #endif
        guard target > limits.rlim_cur else { return Int(clamping: limits.rlim_cur) }
        limits.rlim_cur = target
        guard setrlimit(resourceKind, &limits) == 0 else { return nil }
        return Int(clamping: target)
    }

    #if canImport(Glibc)
    private static let resourceKind = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resourceKind = RLIMIT_NOFILE
    #endif
}

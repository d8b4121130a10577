import Foundation

/// What each recently accepted token hash grants (dataset, scope, expiry), so a request with a known token costs a
/// hash and a dictionary lookup instead of a query of the token table.
///
/// Staleness is bounded by revalidation: at most every `interval`, ``TokenStore`` reads the token
/// table's change counter (the token file's `PRAGMA data_version`, or PostgreSQL's
/// `syncd_token_revision`), which changes whenever another process (such as `syncd token revoke`,
/// or another ``TokenStore``) changes the table, and the cache is emptied when it did. A revoked
/// token therefore stops working within about one interval. Only tokens found in the table are
/// remembered: unknown tokens always reach the table, so guessing cannot fill the cache.
///
/// Thread-safe; every member takes `lock` briefly. ``TokenStore`` calls ``store(_:for:)``,
/// ``revalidated(dataVersion:)`` and ``removeAll()`` while it holds its token table, so updates
/// happen in the order the table saw the reads and writes they come from.
final class TokenCache: @unchecked Sendable {
    // @unchecked: every mutable field is only accessed while holding `lock`.

    /// Entries beyond this are dropped wholesale; there are rarely more than a few live tokens.
    static let maxEntries = 4096

    private let interval: UInt64
    private let lock = NSLock()
    private var grants: [String: TokenGrant] = [:]
    private var dataVersion: Int64?
    private var nextRevalidation: UInt64 = 0

    /// - Parameter interval: nanoseconds a check of the file stays good for; `0` checks on every lookup.
    init(interval: UInt64) {
        self.interval = interval
    }

    /// Whether the caller should check the file now. Claims the check, so among threads asking at
    /// once only one does it.
    func claimRevalidation(now: UInt64) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard now >= nextRevalidation else { return false }
        nextRevalidation = now &+ interval
        return true
    }

    /// Records the file's current `data_version`; forgets every entry if another connection
    /// committed since the last check.
    func revalidated(dataVersion version: Int64) {
        lock.lock()
        defer { lock.unlock() }
        if let dataVersion, dataVersion != version { grants.removeAll() }
        dataVersion = version
    }

    /// The grant remembered for `hash`.
    func grant(forHash hash: String) -> TokenGrant? {
        lock.lock()
        defer { lock.unlock() }
        return grants[hash]
    }

    /// Remembers a lookup the file just answered.
    func store(_ grant: TokenGrant, for hash: String) {
        lock.lock()
        defer { lock.unlock() }
        if grants.count >= TokenCache.maxEntries { grants.removeAll() }
        grants[hash] = grant
    }

    /// Forgets everything and forces a check of the file on the next lookup (after this store's
    /// own writes, which `data_version` does not report, and after errors).
    func removeAll() {
        lock.lock()
        defer { lock.unlock() }
        grants.removeAll()
        nextRevalidation = 0
    }
}

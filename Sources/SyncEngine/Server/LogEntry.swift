import Foundation

/// One entry of a server's log: its cursor, the logged change set's dot, and the digest of the
/// log up to it. A store file's own log holds these (``ServerLogTable``), and so does a store
/// file that mirrors a log kept outside it (a shared database's), with that log's cursors and
/// digests.
package struct LogEntry: Sendable, Equatable {
    /// The entry's cursor in the log.
    package var cursor: Int64
    /// The logged change set's dot.
    package var dot: Dot
    /// The digest of the log up to ``cursor``.
    package var digest: LogDigest

    /// An entry with these fields.
    package init(cursor: Int64, dot: Dot, digest: LogDigest) {
        self.cursor = cursor
        self.dot = dot
        self.digest = digest
    }
}

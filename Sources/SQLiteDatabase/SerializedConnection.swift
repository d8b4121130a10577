import Foundation

/// A connection shared across threads, used by one of them at a time.
///
/// `@unchecked Sendable` is sound here: the connection is only reachable through
/// ``withConnection(_:)``, which holds the lock for the whole use. The lock is recursive, so
/// code already using the connection (say, inside `SyncReplica.edit`) may call back in.
package final class SerializedConnection: @unchecked Sendable {
    private let lock = NSRecursiveLock()
    private let connection: SQLiteConnection

    package init(_ connection: SQLiteConnection) {
        self.connection = connection
    }

    /// Runs `body` with exclusive use of the connection.
    package func withConnection<T>(_ body: (SQLiteConnection) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(connection)
    }
}

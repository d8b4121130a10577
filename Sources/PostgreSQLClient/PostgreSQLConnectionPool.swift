import Foundation

/// Connections to one PostgreSQL database, shared by threads: each use borrows an idle
/// connection (opening one when none is idle, up to ``maximumConnections``) and returns it.
///
/// `@unchecked Sendable`: the idle list and the count are only accessed while holding `condition`,
/// and a connection is used by the one thread that borrowed it.
public final class PostgreSQLConnectionPool: @unchecked Sendable {
    /// The database's URL.
    public let url: String
    /// Open connections at most; a borrower waits while all are in use.
    public let maximumConnections: Int
    private let condition = NSCondition()
    private var idle: [PostgreSQLConnection] = []
    private var openCount = 0

    /// A pool for `url`; nothing connects until the first use, which checks that the server answers.
    public init(url: String, maximumConnections: Int = 8) {
        self.url = url
        self.maximumConnections = max(1, maximumConnections)
    }

    /// Runs `body` with a connection of its own. A connection that broke during `body` is
    /// closed rather than returned to the pool.
    public func withConnection<T>(_ body: (PostgreSQLConnection) throws -> T) throws -> T {
        let connection = try borrow()
        defer { giveBack(connection) }
        return try body(connection)
    }

    /// Runs `body` in a transaction on a connection of its own (see ``PostgreSQLConnection/inTransaction(_:)``).
    public func inTransaction<T>(_ body: (PostgreSQLConnection) throws -> T) throws -> T {
        try withConnection { connection in try connection.inTransaction { try body(connection) } }
    }

    private func borrow() throws -> PostgreSQLConnection {
        condition.lock()
        while idle.isEmpty && openCount >= maximumConnections { condition.wait() }
        if let connection = idle.popLast() {
            condition.unlock()
            return connection
        }
        openCount += 1
        condition.unlock()
        do {
            return try PostgreSQLConnection(url: url)
        } catch {
            condition.lock()
            openCount -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    private func giveBack(_ connection: PostgreSQLConnection) {
        condition.lock()
        if connection.isHealthy { idle.append(connection) } else { openCount -= 1 }
        condition.signal()
        condition.unlock()
    }
}

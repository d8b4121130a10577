import Codecs
import Foundation
import LocalStoreCore

/// `_sync_replica_number`: a small integer for each replica whose stamps the tables with a row
/// per live object keep (``ObjectMetadataTable``'s creation stamps, ``EdgeTable``'s additions and
/// removals), which store that number in place of the replica's 16 bytes.
///
/// Those rows stay for as long as their objects live, so their size is the store's size at rest:
/// the number takes one or two bytes in the row and in every index over it. Numbers are this
/// file's own: they never leave it, two stores number their replicas differently, and nothing
/// orders by them (readers that care about order sort by the replica identifier). Tables whose
/// statements order stamps in SQL (``PositionTable``) or whose rows compaction drops
/// (``DeleteTable``, the change sets) keep the identifier.
enum ReplicaNumberTable {
    static let createStatements = [
        "CREATE TABLE IF NOT EXISTS _sync_replica_number (number INTEGER PRIMARY KEY, replica BLOB NOT NULL UNIQUE)",
    ]

    /// An SQL expression of the replica identifier numbered `number` (a parameter or a column
    /// qualified by its table: a bare `replica` would name this table's own column).
    static func replica(numbered number: String) -> String {
        "(SELECT replica FROM _sync_replica_number WHERE number = \(number))"
    }

    /// An SQL expression of the number of the replica `replica` (its stored identifier: a
    /// parameter or a column qualified by its table), NULL when the replica has none.
    static func number(ofReplica replica: String) -> String {
        "(SELECT number FROM _sync_replica_number WHERE replica = \(replica))"
    }

    /// The number of `replica`, numbering it first if the file has not yet.
    static func number(of replica: ReplicaID, on connection: SQLiteConnection) throws -> Int64 {
        let find = try connection.cachedStatement("SELECT number FROM _sync_replica_number WHERE replica = ?")
        find.reset()
        try find.bind(identifier: replica, at: 1)
        // Reset once read: a statement left on its row would hold the connection's read snapshot.
        defer { find.reset() }
        if try find.step() { return find.integer(at: 0) }
        let insert = try connection.cachedStatement("INSERT INTO _sync_replica_number (replica) VALUES (?)")
        insert.reset()
        try insert.bind(identifier: replica, at: 1)
        while try insert.step() {}
        return connection.lastInsertedRowID
    }

    /// Numbers every replica that `replicas` (a query of stored identifiers) names and the file
    /// has not numbered yet, in identifier order.
    static func numberEvery(in replicas: String, on connection: SQLiteConnection) throws {
        try connection.execute("""
            INSERT INTO _sync_replica_number (replica) SELECT DISTINCT replica FROM (\(replicas)) WHERE replica IS NOT NULL
                AND replica NOT IN (SELECT replica FROM _sync_replica_number) ORDER BY replica
            """)
    }
}

/// The replica numbers a batch of writes looked up, remembered for the batch: a batch's stamps
/// name a few replicas again and again. Valid only inside the transaction that read them, which
/// may have numbered a replica a rollback takes back.
struct ReplicaNumbers {
    private var known: [ReplicaID: SQLValue] = [:]

    /// The stored value of `replica`'s number, numbering it first if the file has not yet.
    mutating func number(of replica: ReplicaID, on connection: SQLiteConnection) throws -> SQLValue {
        if let number = known[replica] { return number }
        let number = SQLValue.integer(try ReplicaNumberTable.number(of: replica, on: connection))
        known[replica] = number
        return number
    }
}

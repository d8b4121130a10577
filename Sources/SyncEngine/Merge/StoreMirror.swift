import Foundation
import LocalStoreCore

/// What a merge batch keeps in memory of the store's small sync tables: read at the batch's start
/// or at first need, and changed together with the tables, so that the questions every operation
/// asks (is this delete void, which object survives this duplicate, what is this replica's
/// number) cost no statement.
struct StoreMirror {
    /// The voided delete roots (``VoidedDeleteTable``).
    var voided: Set<DeleteRoot>
    /// Duplicates that uniqueness merges removed, with their survivors (``UniqueMergeTable``).
    var mergedDuplicates: [ObjectKey: UUID]
    /// The numbers the store gives the replicas whose stamps the batch writes (``ReplicaNumberTable``).
    var replicaNumbers = ReplicaNumbers()
    /// Whether `_sync_counter` exists, once an increment asked: most stores never saturate a counter.
    var hasCounterTable: Bool?
    /// Whether the store remembers the identifiers of forgotten objects (a server's store after a
    /// compaction forgot some), read at the batch's first create.
    var remembersForgottenObjects: Bool?

    /// Reads the tables the mirror holds from the start.
    init(on connection: SQLiteConnection) throws {
        voided = try VoidedDeleteTable.roots(on: connection)
        mergedDuplicates = try UniqueMergeTable.merges(on: connection)
    }
}

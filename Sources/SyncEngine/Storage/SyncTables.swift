import Codecs
import Foundation
import LocalStoreCore

/// The tables sync keeps in the store file, next to the entity tables, so that change
/// capture and merges commit atomically with the data.
///
/// Every statement on these tables is in this folder, one type per table, and the rest of
/// SyncKit calls their typed methods:
///
/// - ``SyncFormatTable``: the layout version of these tables, checked and migrated on open.
/// - ``SyncStateTable``: this replica's ID and secret key, last seq and latest HLC (never reused, even after a
///   crash), the journal's next entry number and the settings of tools built on SyncKit.
/// - ``VersionVectorTable``: the store's version vector.
/// - ``ChangeSetTable``: every change set applied here (local ones with their ``OutboxStatus``),
///   its vector as JSON and its operations as ``StoredOperations``' blob (JSON text in older rows).
/// - ``ReplicaNumberTable``: the small number that stands for a replica in the tables with a
///   row per live object.
/// - ``ObjectMetadataTable``: each object's creation stamp, and its column values while it is
///   deleted (so a delete voided by a deny rule can bring it back with its last values).
/// - ``FieldStampTable``: the stamp of the last write to each column (absent: the creation stamp).
/// - ``EdgeTable``: one row per edge addition (`link`), marked removed by `unlink`.
/// - ``PositionTable``: ordered-relationship keys, one per member.
/// - ``DeleteTable``, ``VoidedDeleteTable``: deletes (explicit and by cascade) and voided delete roots.
/// - ``ConflictTable``: the conflict journal (see ``ConflictJournal``).
/// - ``UniqueMergeTable``: objects' creation values per uniqueness key, and the duplicates merges removed.
/// - ``CounterTable``: the exact totals of saturated counters (created when one first saturates).
/// - ``KeptChangeSetTable``: the change sets applied only in part, because they name what the
///   store's schema does not know (a newer app's).
/// - ``ServerLogTable``: a server's log of the change sets it stored, in application order.
/// - ``ServerForgottenObjectTable``: the identifiers of objects a server's compaction forgot.
enum SyncTables {
    /// Deletes the rows of `table` that `selection` (a `WHERE` clause) picks, after measuring
    /// them with `size` (an SQL expression of a row's bytes); returns how many went and their bytes.
    static func removeRows(from table: String, _ selection: String, size: String, on connection: SQLiteConnection) throws -> (rows: Int, bytes: Int64) {
        var bytes: Int64 = 0
        if case .integer(let sum)? = try connection.rows("SELECT ifnull(sum(\(size)), 0) FROM \(table) \(selection)").first?.first {
            bytes = sum
        }
        try connection.execute("DELETE FROM \(table) \(selection)")
        return (connection.changes, bytes)
    }

    /// Creates every table and index that does not exist yet.
    static let statements = SyncStateTable.createStatements + VersionVectorTable.createStatements + ReplicaNumberTable.createStatements
        + ChangeSetTable.createStatements + ObjectMetadataTable.createStatements + FieldStampTable.createStatements
        + EdgeTable.createStatements + PositionTable.createStatements + DeleteTable.createStatements
        + VoidedDeleteTable.createStatements + ConflictTable.createStatements + UniqueMergeTable.createStatements
        + KeptChangeSetTable.createStatements

    /// Checks the tables' format (migrating an older one in place), creates the tables if needed
    /// and returns this replica's ID, choosing `newReplicaID` the first time. One transaction.
    ///
    /// - Throws: ``SyncError`` `.unsupportedStoreFormat` when the file was written by a newer
    ///   release, naming the file and both versions.
    static func install(on connection: SQLiteConnection, newReplicaID: ReplicaID) throws -> ReplicaID {
        try connection.inTransaction {
            try SyncFormatTable.migrate(on: connection)
            if let replica = try SyncStateTable.replicaID(on: connection) { return replica }
            try SyncStateTable.initialize(replica: newReplicaID, on: connection)
            return newReplicaID
        }
    }
}

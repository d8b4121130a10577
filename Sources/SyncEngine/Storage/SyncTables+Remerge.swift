import Foundation
import LocalStoreCore

extension SyncTables {
    /// The tables a merge derives from the change sets, which a merge of the whole history
    /// writes anew: creation stamps and tombstones, field stamps, edges, positions, deletes,
    /// uniqueness records, the version vector and the record of change sets applied in part.
    private static let derivedTables = [
        "_sync_object", "_sync_field_stamps", "_sync_edge", "_sync_edge_removal", "_sync_position", "_sync_delete",
        "_sync_void", "_sync_unique_value", "_sync_unique_merge", "_sync_vector", "_sync_kept", "_sync_kept_object",
    ]

    /// Empties the tables merges derive from the change sets (``ChangeSetTable``, this replica's
    /// state and its conflict journal stay), inside the caller's transaction.
    static func removeDerivedState(on connection: SQLiteConnection) throws {
        for table in derivedTables { try connection.execute("DELETE FROM \(table)") }
        if try CounterTable.exists(on: connection) { try connection.execute("DELETE FROM _sync_counter") }
    }
}

import Foundation
import LocalStoreCore

extension SyncReplica {
    /// Refuses to merge the history again when the store no longer holds every change set its
    /// version vector covers: a server that compacted its log, or a store made from a snapshot
    /// of one. Merging what is left would lose what the missing change sets did.
    ///
    /// - Throws: ``StoreError`` `.migrationImpossible` naming the first replica whose change sets are missing.
    static func requireWholeHistory(on connection: SQLiteConnection) throws {
        let vector = try VersionVectorTable.vector(on: connection)
        let stored = try ChangeSetTable.countsByReplica(on: connection)
        for (replica, seq) in vector.sortedEntries where stored[replica, default: 0] < seq {
            throw StoreError(.migrationImpossible,
                             "the schema renames entities, attributes or relationships (or lacks what the merged tables were derived under), which needs every change set merged again, but the store holds \(stored[replica, default: 0]) of the \(seq) change sets of replica \(replica.storageText): its history was compacted",
                             path: connection.path)
        }
    }
}

import Codecs
import Foundation
import LocalStoreCore

/// `_sync_vector`: the store's version vector, one row per replica.
enum VersionVectorTable {
    static let createStatements = [
        "CREATE TABLE IF NOT EXISTS _sync_vector (replica BLOB PRIMARY KEY NOT NULL, seq INTEGER NOT NULL) WITHOUT ROWID",
    ]

    static func vector(on connection: SQLiteConnection) throws -> VersionVector {
        var vector = VersionVector()
        for row in try connection.rows("SELECT replica, seq FROM _sync_vector") {
            if let replica = UUID(stored: row[0]), case .integer(let seq) = row[1] {
                guard let seq = UInt64(exactly: seq) else {
                    throw SyncError(.notSyncable, "the version vector (table _sync_vector) holds the negative seq \(seq) for replica \(replica.storageText)")
                }
                vector[replica] = seq
            }
        }
        return vector
    }

    static func advance(to dot: Dot, on connection: SQLiteConnection) throws {
        try connection.run("INSERT OR REPLACE INTO _sync_vector (replica, seq) VALUES (?, ?)", dot.values)
    }
}

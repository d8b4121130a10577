import Codecs
import Foundation
import LocalStoreCore

/// `_sync_field`: the stamp of the last write to each attribute of an object (absent: the
/// object's creation stamp stands for it).
enum FieldStampTable {
    static let createStatements = [
        """
        CREATE TABLE IF NOT EXISTS _sync_field (entity TEXT NOT NULL, id TEXT NOT NULL, field TEXT NOT NULL,
            hlc INTEGER NOT NULL, replica TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (entity, id, field)) WITHOUT ROWID
        """,
    ]

    /// Stamps kept in memory and written with multi-row INSERTs, replacing older ones.
    struct PendingRows {
        private var inserts = PendingInserts("INSERT OR REPLACE INTO _sync_field (entity, id, field, hlc, replica, seq)", columnCount: 6)

        mutating func append(_ object: ObjectKey, field: String, stamp: Stamp) {
            inserts.append([.text(object.entity), .text(object.id.storageText), .text(field), stamp.hlcValue, stamp.replicaValue, stamp.seqValue])
        }

        mutating func flush(on connection: SQLiteConnection) throws {
            try inserts.flush(on: connection)
        }
    }

    /// The stored stamps of the objects `ids` of `entity` (at most a few hundred: one bound
    /// parameter each), by object and attribute; objects without any are left out.
    static func stamps(_ entity: String, _ ids: some Collection<UUID>, on connection: SQLiteConnection) throws -> [UUID: [String: Stamp]] {
        var result: [UUID: [String: Stamp]] = [:]
        // Rows come in primary-key order, an object's fields together, from a few replicas:
        // parse an identifier only when it differs from the previous row's.
        var object = RepeatedUUID(), replica = RepeatedUUID()
        var stamps: [String: Stamp] = [:]
        func finish(_ id: UUID?) {
            guard let id, !stamps.isEmpty else { return }
            // Merged with what an earlier run of this object's rows gave, should SQLite ever split them.
            result[id, default: [:]].merge(stamps) { _, later in later }
            stamps = [:]
        }
        try connection.forEachRow(
            "SELECT id, field, hlc, replica, seq FROM _sync_field WHERE entity = ? AND id IN (\(EntityTable.placeholders(ids.count)))",
            [.text(entity)] + ids.map { .text($0.storageText) }
        ) { row in
            let previous = object.value
            if object.update(row.textBytes(at: 0)) { finish(previous) }
            guard object.value != nil, case .text(let field) = row.value(at: 1) else { return }
            replica.update(row.textBytes(at: 3))
            guard let replicaID = replica.value else { return }
            stamps[field] = Stamp(hlc: HLC(rawValue: UInt64(bitPattern: row.integer(at: 2))), replica: replicaID, seq: UInt64(row.integer(at: 4)))
        }
        finish(object.value)
        return result
    }

    /// The UUID of the text in a column that often repeats the previous row's.
    private struct RepeatedUUID {
        private var text: [UInt8] = []
        private(set) var value: UUID?

        /// Takes `bytes` (parsing them if they differ from the last ones); true if they differed.
        @discardableResult
        mutating func update(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            if bytes.count == text.count,
               bytes.isEmpty || text.withUnsafeBufferPointer({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }) {
                return false
            }
            text = Array(bytes)
            value = UUID(storageTextBytes: bytes)
            return true
        }
    }
}

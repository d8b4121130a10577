import Codecs
import Foundation
import LocalStoreCore

/// `_sync_position`: the position key of each member of an ordered relationship, with the stamp
/// of the change set that placed it there.
enum PositionTable {
    static let createStatements = [
        """
        CREATE TABLE IF NOT EXISTS _sync_position (entity TEXT NOT NULL, id BLOB NOT NULL, relationship TEXT NOT NULL,
            member BLOB NOT NULL, key TEXT NOT NULL, hlc INTEGER NOT NULL, replica BLOB NOT NULL, seq INTEGER NOT NULL,
            PRIMARY KEY (entity, id, relationship, member)) WITHOUT ROWID
        """,
    ]

    /// Removes the positions the objects in `table` (columns `entity, id`) hold as owners or as
    /// members; returns how many and their bytes.
    static func remove(objectsIn table: String, on connection: SQLiteConnection) throws -> (positions: Int, bytes: Int64) {
        let removed = try SyncTables.removeRows(
            from: "_sync_position", "WHERE (entity, id) IN (SELECT entity, id FROM \(table)) OR member IN (SELECT id FROM \(table))",
            size: "length(entity) + length(id) + length(relationship) + length(member) + length(key) + length(replica) + 16", on: connection)
        return (removed.rows, removed.bytes)
    }

    /// The key of `member` in `owner`'s `relationship` and the stamp that set it, if it has one.
    static func position(of member: UUID, in owner: ObjectKey, _ relationship: String, on connection: SQLiteConnection) throws -> (key: String, stamp: Stamp?)? {
        try connection.rows(
            "SELECT key, hlc, replica, seq FROM _sync_position WHERE entity = ? AND id = ? AND relationship = ? AND member = ?",
            owner.values + [.text(relationship), member.storedValue]
        ).first.map { row in (row[0].textValue ?? "", Stamp(hlc: row[1], replica: row[2], seq: row[3])) }
    }

    /// Stores `member`'s key, replacing the one it had.
    static func setPosition(of member: UUID, in owner: ObjectKey, _ relationship: String, key: String, stamp: Stamp, on connection: SQLiteConnection) throws {
        try connection.run(
            "INSERT OR REPLACE INTO _sync_position (entity, id, relationship, member, key, hlc, replica, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            owner.values + [.text(relationship), member.storedValue, .text(key), stamp.hlcValue, stamp.replicaValue, stamp.seqValue])
    }

    /// Every member's key in `owner`'s `relationship`, with the stamp that set it.
    static func positions(in owner: ObjectKey, _ relationship: String, on connection: SQLiteConnection) throws -> [UUID: (key: String, stamp: Stamp)] {
        var keys: [UUID: (key: String, stamp: Stamp)] = [:]
        for row in try connection.rows("SELECT member, key, hlc, replica, seq FROM _sync_position WHERE entity = ? AND id = ? AND relationship = ?",
                                       owner.values + [.text(relationship)]) {
            guard let member = UUID(stored: row[0]), case .text(let key) = row[1],
                  let stamp = Stamp(hlc: row[2], replica: row[3], seq: row[4]) else { continue }
            keys[member] = (key, stamp)
        }
        return keys
    }

    /// Every member's key in `owner`'s `relationship`.
    static func keys(in owner: ObjectKey, _ relationship: String, on connection: SQLiteConnection) throws -> [UUID: String] {
        var existing: [UUID: String] = [:]
        for row in try connection.rows("SELECT member, key FROM _sync_position WHERE entity = ? AND id = ? AND relationship = ?",
                                       owner.values + [.text(relationship)]) {
            if let id = UUID(stored: row[0]), case .text(let key) = row[1] { existing[id] = key }
        }
        return existing
    }

    /// The largest key in `owner`'s `relationship`, `nil` when it has none.
    static func lastKey(in owner: ObjectKey, _ relationship: String, on connection: SQLiteConnection) throws -> String? {
        try connection.rows("SELECT max(key) FROM _sync_position WHERE entity = ? AND id = ? AND relationship = ?",
                            owner.values + [.text(relationship)]).first?.first?.textValue
    }
}

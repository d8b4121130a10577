import Codecs
import Foundation
import LocalStoreCore

/// `_sync_unique_value`: the values each object was created with, per uniqueness key of its
/// entity (keys with a `NULL` are left out: they never collide). Creation values are fixed by the
/// change set that created the object, so which objects collide is a function of the change sets
/// present, whatever order they arrive in.
///
/// `_sync_unique_merge`: each duplicate a merge removed, with the survivor its references went to.
enum UniqueMergeTable {
    static let createStatements = [
        """
        CREATE TABLE IF NOT EXISTS _sync_unique_value (entity TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, id BLOB NOT NULL,
            PRIMARY KEY (entity, key, value, id)) WITHOUT ROWID
        """,
        """
        CREATE TABLE IF NOT EXISTS _sync_unique_merge (entity TEXT NOT NULL, duplicate BLOB NOT NULL, survivor BLOB NOT NULL,
            PRIMARY KEY (entity, duplicate)) WITHOUT ROWID
        """,
    ]

    /// A query of the `(entity, id)` of every object created with uniqueness values.
    static let objectsWithCreationValuesQuery = "SELECT entity, id FROM _sync_unique_value"

    /// Removes from `table` (columns `entity, id`) the objects a uniqueness merge names, as
    /// duplicate or as survivor: operations naming a duplicate are redirected to its survivor.
    static func keepOnlyUnmerged(in table: String, on connection: SQLiteConnection) throws {
        try connection.execute("""
            DELETE FROM \(table) WHERE (entity, id) IN (SELECT entity, duplicate FROM _sync_unique_merge)
                OR (entity, id) IN (SELECT entity, survivor FROM _sync_unique_merge)
            """)
    }

    /// Removes the creation values of the objects in `table` (columns `entity, id`).
    static func removeCreationValues(ofObjectsIn table: String, on connection: SQLiteConnection) throws {
        try connection.execute("DELETE FROM _sync_unique_value WHERE (entity, id) IN (SELECT entity, id FROM \(table))")
    }

    /// Records that `object` was created holding `value` (the key's columns as JSON) for `key`.
    static func insertCreationValue(_ object: ObjectKey, key: String, value: String, on connection: SQLiteConnection) throws {
        try connection.run("INSERT OR IGNORE INTO _sync_unique_value (entity, key, value, id) VALUES (?, ?, ?, ?)",
                           [.text(object.entity), .text(key), .text(value), object.id.storedValue])
    }

    /// The keys and values `object` was created with.
    static func creationValues(of object: ObjectKey, on connection: SQLiteConnection) throws -> [(key: String, value: String)] {
        try connection.rows("SELECT key, value FROM _sync_unique_value WHERE entity = ? AND id = ?", object.values).compactMap { row in
            guard let key = row[0].textValue, let value = row[1].textValue else { return nil }
            return (key, value)
        }
    }

    /// The objects of `entity` created holding `value` for `key`.
    static func objects(of entity: String, key: String, value: String, on connection: SQLiteConnection) throws -> [UUID] {
        try connection.rows("SELECT id FROM _sync_unique_value WHERE entity = ? AND key = ? AND value = ?", [.text(entity), .text(key), .text(value)])
            .compactMap { UUID(stored: $0[0]) }
    }

    /// Every merged duplicate with its survivor.
    static func merges(on connection: SQLiteConnection) throws -> [ObjectKey: UUID] {
        var merges: [ObjectKey: UUID] = [:]
        for row in try connection.rows("SELECT entity, duplicate, survivor FROM _sync_unique_merge") {
            guard let duplicate = ObjectKey(entity: row[0], id: row[1]), let survivor = UUID(stored: row[2]) else { continue }
            merges[duplicate] = survivor
        }
        return merges
    }

    /// Records `duplicate` as merged into `survivor`, and points duplicates merged into `duplicate` at `survivor` too.
    static func setMerged(_ duplicate: ObjectKey, into survivor: UUID, on connection: SQLiteConnection) throws {
        try connection.run("UPDATE _sync_unique_merge SET survivor = ? WHERE entity = ? AND survivor = ?",
                           [survivor.storedValue, .text(duplicate.entity), duplicate.id.storedValue])
        try connection.run("INSERT OR REPLACE INTO _sync_unique_merge (entity, duplicate, survivor) VALUES (?, ?, ?)",
                           duplicate.values + [survivor.storedValue])
    }

    /// Moves every edge addition (and removal record) at `duplicate`'s end to `survivor`: as the
    /// source through `entity`'s canonical relationships, as the target through the canonical
    /// relationships `pointingAt` lists (`(source entity, relationship)`). An addition the
    /// survivor already has under the same dot stays the survivor's.
    static func moveEdges(of duplicate: ObjectKey, to survivor: UUID, pointingAt: [(String, String)], on connection: SQLiteConnection) throws {
        let from = duplicate.id.storedValue, to = survivor.storedValue
        for table in ["_sync_edge", "_sync_edge_removal"] {
            try connection.run("UPDATE OR IGNORE \(table) SET id = ? WHERE entity = ? AND id = ?", [to, .text(duplicate.entity), from])
            try connection.run("DELETE FROM \(table) WHERE entity = ? AND id = ?", [.text(duplicate.entity), from])
            for (entity, relationship) in pointingAt {
                let arguments: [SQLValue] = [.text(entity), .text(relationship)]
                try connection.run("UPDATE OR IGNORE \(table) SET target = ? WHERE entity = ? AND relationship = ? AND target = ?", [to] + arguments + [from])
                try connection.run("DELETE FROM \(table) WHERE entity = ? AND relationship = ? AND target = ?", arguments + [from])
            }
        }
    }

    /// Puts the self-inverse edge additions of `relationship` at `object` back in canonical order
    /// (recorded from the identifier that sorts first) after their ends moved.
    static func recanonicalize(selfInverse relationship: String, of object: ObjectKey, on connection: SQLiteConnection) throws {
        let arguments: [SQLValue] = [.text(object.entity), object.id.storedValue, .text(relationship)]
        for table in ["_sync_edge", "_sync_edge_removal"] {
            // One end at a time, so that each is found by its index (the key's `(entity, id)`, the
            // table's target index): an `OR` of the two would read every edge of the entity. A
            // row turned by the first has the object as its larger end, which the second skips.
            for end in ["entity = ? AND id = ? AND relationship = ?", "target = ?2 AND entity = ?1 AND relationship = ?3"] {
                try connection.run("UPDATE OR IGNORE \(table) SET id = target, target = id WHERE \(end) AND target < id", arguments)
                try connection.run("DELETE FROM \(table) WHERE \(end) AND target < id", arguments)
            }
        }
    }

    /// Moves `duplicate`'s position keys to `survivor`, as a member of `owners`' ordered
    /// relationships (`(owner entity, relationship)`) and as the owner of its own: where the
    /// survivor has a key of its own there, the key with the larger stamp stays.
    static func movePositions(of duplicate: ObjectKey, to survivor: UUID, asMemberOf owners: [(String, String)], on connection: SQLiteConnection) throws {
        let from = duplicate.id.storedValue, to = survivor.storedValue
        let larger = "(s.hlc > _sync_position.hlc OR (s.hlc = _sync_position.hlc AND s.replica >= _sync_position.replica))"
        for (entity, relationship) in owners {
            try connection.run("""
                DELETE FROM _sync_position WHERE entity = ? AND relationship = ? AND member = ? AND EXISTS (SELECT 1 FROM _sync_position AS s
                    WHERE s.entity = _sync_position.entity AND s.id = _sync_position.id AND s.relationship = _sync_position.relationship AND s.member = ? AND \(larger))
                """, [.text(entity), .text(relationship), from, to])
            try connection.run("UPDATE OR REPLACE _sync_position SET member = ? WHERE entity = ? AND relationship = ? AND member = ?",
                               [to, .text(entity), .text(relationship), from])
        }
        try connection.run("""
            DELETE FROM _sync_position WHERE entity = ? AND id = ? AND EXISTS (SELECT 1 FROM _sync_position AS s
                WHERE s.entity = _sync_position.entity AND s.id = ? AND s.relationship = _sync_position.relationship AND s.member = _sync_position.member AND \(larger))
            """, [.text(duplicate.entity), from, to])
        try connection.run("UPDATE OR REPLACE _sync_position SET id = ? WHERE entity = ? AND id = ?", [to, .text(duplicate.entity), from])
    }
}

import Codecs
import Foundation
import LocalStoreCore

/// `_sync_delete`: the deletes of objects, one row per object and delete root; `implicit` rows
/// are the root's cascade, recomputed as edges change.
enum DeleteTable {
    static let createStatements = [
        """
        CREATE TABLE IF NOT EXISTS _sync_delete (entity TEXT NOT NULL, id BLOB NOT NULL, replica BLOB NOT NULL,
            seq INTEGER NOT NULL, root BLOB NOT NULL, implicit INTEGER NOT NULL,
            PRIMARY KEY (entity, id, replica, seq, root)) WITHOUT ROWID
        """,
        "CREATE INDEX IF NOT EXISTS _sync_delete_root ON _sync_delete (replica, seq, root)",
    ]

    /// Which deletes of a root to read.
    enum Kind {
        /// Those the root's change set made.
        case explicit
        /// Those its cascade made.
        case implicit
        /// Both.
        case any

        /// The condition on `implicit` that selects the kind, to append to a `WHERE` clause.
        var condition: String {
            switch self {
            case .explicit: " AND implicit = 0"
            case .implicit: " AND implicit = 1"
            case .any: ""
            }
        }
    }

    /// A query of the `(replica, seq)` of every change set that deleted something.
    static let deletingChangeSetsQuery = "SELECT replica, seq FROM _sync_delete"

    /// Inserts into `settledTable` (columns `entity, id`) the objects deleted explicitly by a
    /// change set at or below the vector in `stableTable` (columns `replica, seq`) whose root is not void.
    static func insertSettledDeletes(into settledTable: String, below stableTable: String, on connection: SQLiteConnection) throws {
        try connection.execute("""
            INSERT OR IGNORE INTO \(settledTable) (entity, id) SELECT d.entity, d.id FROM _sync_delete AS d
            JOIN \(stableTable) AS s ON s.replica = d.replica AND d.seq <= s.seq
            WHERE d.implicit = 0 AND NOT EXISTS (\(VoidedDeleteTable.voidQuery(replica: "d.replica", seq: "d.seq", root: "d.root")))
            """)
    }

    /// Adds to `table` (columns `entity, id`) every object with a delete record that a merge may still
    /// undo or re-judge: one by cascade, one above the stable vector in `stableTable`, or one
    /// whose root is void.
    static func insertUnsettledObjects(into table: String, below stableTable: String, on connection: SQLiteConnection) throws {
        try connection.execute("""
            INSERT OR IGNORE INTO \(table) (entity, id) SELECT d.entity, d.id FROM _sync_delete AS d
            WHERE d.implicit = 1 OR NOT EXISTS (SELECT 1 FROM \(stableTable) AS s WHERE s.replica = d.replica AND d.seq <= s.seq)
            OR EXISTS (\(VoidedDeleteTable.voidQuery(replica: "d.replica", seq: "d.seq", root: "d.root")))
            """)
    }

    /// Removes from `table` (columns `entity, id`) every object that one of its delete roots
    /// also deleted an object not in `table` with, until no such object is left: a root's delete
    /// records go together or stay together (re-judging a root reads all of them).
    static func keepOnlyWholeRoots(in table: String, on connection: SQLiteConnection) throws {
        repeat {
            try connection.execute("""
                DELETE FROM \(table) WHERE (entity, id) IN (
                    SELECT d.entity, d.id FROM _sync_delete AS d JOIN _sync_delete AS other
                        ON other.replica = d.replica AND other.seq = d.seq AND other.root = d.root
                    WHERE (d.entity, d.id) IN (SELECT entity, id FROM \(table)) AND (other.entity, other.id) NOT IN (SELECT entity, id FROM \(table)))
                """)
        } while connection.changes > 0
    }

    /// Removes every delete record of the objects in `table` (columns `entity, id`); returns
    /// their bytes.
    static func remove(objectsIn table: String, on connection: SQLiteConnection) throws -> Int64 {
        try SyncTables.removeRows(from: "_sync_delete", "WHERE (entity, id) IN (SELECT entity, id FROM \(table))",
                                  size: "length(entity) + length(id) + length(replica) + length(root) + 16", on: connection).bytes
    }

    /// Records that `root` deletes `object` (explicitly or by cascade); a delete stored before is kept.
    static func insert(_ object: ObjectKey, root: DeleteRoot, implicit: Bool, on connection: SQLiteConnection) throws {
        try connection.run("INSERT OR IGNORE INTO _sync_delete (entity, id, replica, seq, root, implicit) VALUES (?, ?, ?, ?, ?, ?)",
                           object.values + root.values + [.integer(implicit ? 1 : 0)])
    }

    /// Removes the cascade delete of `object` by `root`.
    static func removeImplicit(_ object: ObjectKey, root: DeleteRoot, on connection: SQLiteConnection) throws {
        try connection.run("DELETE FROM _sync_delete WHERE entity = ? AND id = ? AND replica = ? AND seq = ? AND root = ? AND implicit = 1",
                           object.values + root.values)
    }

    /// The roots of every delete of `object` of `kind`, in force or void, by `(replica, seq, root)`.
    static func roots(deleting object: ObjectKey, _ kind: Kind = .any, on connection: SQLiteConnection) throws -> [DeleteRoot] {
        try connection.rows("SELECT replica, seq, root FROM _sync_delete WHERE entity = ? AND id = ?" + kind.condition + " ORDER BY replica, seq, root",
                            object.values)
            .compactMap { DeleteRoot(replica: $0[0], seq: $0[1], root: $0[2]) }
    }

    /// The objects `root` deletes.
    static func objects(deletedBy root: DeleteRoot, _ kind: Kind, on connection: SQLiteConnection) throws -> [ObjectKey] {
        try connection.rows("SELECT entity, id FROM _sync_delete WHERE replica = ? AND seq = ? AND root = ?" + kind.condition, root.values)
            .compactMap { ObjectKey(entity: $0[0], id: $0[1]) }
    }

    /// The entity of the object the delete started at, `nil` if no delete of `root` names it.
    static func rootEntity(of root: DeleteRoot, on connection: SQLiteConnection) throws -> String? {
        try connection.rows("SELECT entity FROM _sync_delete WHERE replica = ? AND seq = ? AND root = ? AND id = ?",
                            root.values + [root.root.storedValue]).first?.first?.textValue
    }
}

/// `_sync_void`: the delete roots a deny rule voided; their deletes delete nothing.
enum VoidedDeleteTable {
    static let createStatements = [
        "CREATE TABLE IF NOT EXISTS _sync_void (replica BLOB NOT NULL, seq INTEGER NOT NULL, root BLOB NOT NULL, PRIMARY KEY (replica, seq, root)) WITHOUT ROWID",
    ]

    /// A query of the `(replica, seq)` of every change set whose delete root was voided.
    static let voidedChangeSetsQuery = "SELECT replica, seq FROM _sync_void"

    /// A query with a row when the root named by the SQL expressions `replica`, `seq`, `root` is void.
    static func voidQuery(replica: String, seq: String, root: String) -> String {
        "SELECT 1 FROM _sync_void AS v WHERE v.replica = \(replica) AND v.seq = \(seq) AND v.root = \(root)"
    }

    static func roots(on connection: SQLiteConnection) throws -> Set<DeleteRoot> {
        Set(try connection.rows("SELECT replica, seq, root FROM _sync_void").compactMap { DeleteRoot(replica: $0[0], seq: $0[1], root: $0[2]) })
    }

    static func setVoided(_ root: DeleteRoot, _ isVoid: Bool, on connection: SQLiteConnection) throws {
        if isVoid {
            try connection.run("INSERT OR IGNORE INTO _sync_void (replica, seq, root) VALUES (?, ?, ?)", root.values)
        } else {
            try connection.run("DELETE FROM _sync_void WHERE replica = ? AND seq = ? AND root = ?", root.values)
        }
    }
}

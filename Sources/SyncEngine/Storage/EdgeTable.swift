import Codecs
import Foundation
import LocalStoreCore

/// `_sync_edge`: one row per edge addition (`link`) through a canonical relationship, marked
/// removed by the `unlink`s that saw it (with the delete root of an unlink a delete caused).
///
/// `_sync_edge_removal`: the further removals of an addition that a delete already removed, each
/// by another delete. Every one stands on its own delete, so the addition returns only when all
/// of those deletes are voided, whichever removal arrived first.
enum EdgeTable {
    static let createStatements = [
        """
        CREATE TABLE IF NOT EXISTS _sync_edge (entity TEXT NOT NULL, id BLOB NOT NULL, relationship TEXT NOT NULL,
            target BLOB NOT NULL, replica BLOB NOT NULL, seq INTEGER NOT NULL, hlc INTEGER NOT NULL,
            removed_replica BLOB, removed_seq INTEGER, removed_root BLOB,
            PRIMARY KEY (entity, id, relationship, target, replica, seq)) WITHOUT ROWID
        """,
        "CREATE INDEX IF NOT EXISTS _sync_edge_target ON _sync_edge (entity, relationship, target)",
    ] + removalStatements

    /// The table of further removals (format version 2).
    static let removalStatements = [
        """
        CREATE TABLE IF NOT EXISTS _sync_edge_removal (entity TEXT NOT NULL, id BLOB NOT NULL, relationship TEXT NOT NULL,
            target BLOB NOT NULL, replica BLOB NOT NULL, seq INTEGER NOT NULL,
            removed_replica BLOB NOT NULL, removed_seq INTEGER NOT NULL, removed_root BLOB NOT NULL,
            PRIMARY KEY (entity, id, relationship, target, replica, seq, removed_replica, removed_seq, removed_root)) WITHOUT ROWID
        """,
        "CREATE INDEX IF NOT EXISTS _sync_edge_removal_root ON _sync_edge_removal (removed_replica, removed_seq, removed_root)",
    ]

    /// One stored edge addition.
    struct StoredEdge {
        var source: UUID
        var target: UUID
        var added: Stamp
        /// Whether an `unlink` removed it.
        var isRemoved: Bool
        /// The delete root of the unlink that removed it, when a delete caused the unlink.
        var removalRoot: DeleteRoot?
        /// The roots of the other deletes that removed it too (read only for an addition a delete removed).
        var furtherRemovalRoots: [DeleteRoot] = []
    }

    private static let columns = "id, target, hlc, replica, seq, removed_replica, removed_seq, removed_root, entity, relationship"

    /// Additions kept in memory and written with multi-row INSERTs (an addition stored before is kept).
    struct PendingRows {
        private var inserts = PendingInserts("INSERT OR IGNORE INTO _sync_edge (entity, id, relationship, target, replica, seq, hlc)", columnCount: 7)

        mutating func append(from source: ObjectKey, _ relationship: String, to target: UUID, added stamp: Stamp) {
            inserts.append([.text(source.entity), source.id.storedValue, .text(relationship), target.storedValue,
                            stamp.replicaValue, stamp.seqValue, stamp.hlcValue])
        }

        mutating func flush(on connection: SQLiteConnection) throws {
            try inserts.flush(on: connection)
        }
    }

    /// Inserts the additions of a local save one statement at a time, binding identifiers
    /// without making strings (the rows of a save come in primary-key order).
    struct AdditionWriter {
        private let statement: SQLiteStatement
        private let stamp: Stamp
        private let replica: SQLValue

        init(added stamp: Stamp, on connection: SQLiteConnection) throws {
            statement = try connection.cachedStatement(
                "INSERT OR IGNORE INTO _sync_edge (entity, id, relationship, target, replica, seq, hlc) VALUES (?, ?, ?, ?, ?, ?, ?)")
            self.stamp = stamp
            replica = stamp.replicaValue
        }

        func insert(from source: ObjectKey, _ relationship: String, to target: UUID) throws {
            statement.reset()
            try statement.bind(.text(source.entity), at: 1)
            try statement.bind(identifier: source.id, at: 2)
            try statement.bind(.text(relationship), at: 3)
            try statement.bind(identifier: target, at: 4)
            try statement.bind(replica, at: 5)
            try statement.bind(stamp.seqValue, at: 6)
            try statement.bind(stamp.hlcValue, at: 7)
            while try statement.step() {}
        }
    }

    /// Every addition from `source` through `relationship`, removed or not.
    static func edges(from source: ObjectKey, _ relationship: String, on connection: SQLiteConnection) throws -> [StoredEdge] {
        try edges("SELECT \(columns) FROM _sync_edge WHERE entity = ? AND id = ? AND relationship = ?",
                  source.values + [.text(relationship)], on: connection)
    }

    /// Every addition into `target` through `relationship` of `sourceEntity`, removed or not.
    static func edges(to target: UUID, _ relationship: String, of sourceEntity: String, on connection: SQLiteConnection) throws -> [StoredEdge] {
        try edges("SELECT \(columns) FROM _sync_edge WHERE entity = ? AND relationship = ? AND target = ?",
                  [.text(sourceEntity), .text(relationship), target.storedValue], on: connection)
    }

    private static func edges(_ sql: String, _ arguments: [SQLValue], on connection: SQLiteConnection) throws -> [StoredEdge] {
        try connection.rows(sql, arguments).compactMap { row in
            guard let source = UUID(stored: row[0]), let target = UUID(stored: row[1]),
                  let added = Stamp(hlc: row[2], replica: row[3], seq: row[4]) else { return nil }
            let removalRoot = DeleteRoot(replica: row[5], seq: row[6], root: row[7])
            var edge = StoredEdge(source: source, target: target, added: added, isRemoved: !row[5].isNull, removalRoot: removalRoot)
            if removalRoot != nil {
                edge.furtherRemovalRoots = try connection.rows(
                    """
                    SELECT removed_replica, removed_seq, removed_root FROM _sync_edge_removal
                    WHERE entity = ? AND id = ? AND relationship = ? AND target = ? AND replica = ? AND seq = ?
                    """,
                    [row[8], row[0], row[9], row[1], added.replicaValue, added.seqValue]
                ).compactMap { DeleteRoot(replica: $0[0], seq: $0[1], root: $0[2]) }
            }
            return edge
        }
    }

    /// Marks the addition `added` of the edge as removed by the change set `remover` (with the
    /// root of the delete that caused the unlink, if one did). An addition already removed stays
    /// so, unless a delete removed it and this unlink is not a delete's: then this one stands.
    static func markRemoved(
        from source: ObjectKey, _ relationship: String, to target: UUID, added: Dot, by remover: Dot, root: UUID?, on connection: SQLiteConnection
    ) throws {
        let rootValue = root.map(\.storedValue) ?? .null
        try connection.run(
            """
            UPDATE _sync_edge SET removed_replica = ?, removed_seq = ?, removed_root = ?
            WHERE entity = ? AND id = ? AND relationship = ? AND target = ? AND replica = ? AND seq = ?
            AND (removed_replica IS NULL OR (removed_root IS NOT NULL AND ? IS NULL))
            """,
            remover.values + [rootValue] + source.values + [.text(relationship), target.storedValue] + added.values + [rootValue])
        guard let root, connection.changes == 0 else { return }
        // Another delete removed the addition already: this delete's removal is kept beside it.
        try connection.run(
            """
            INSERT OR IGNORE INTO _sync_edge_removal
                (entity, id, relationship, target, replica, seq, removed_replica, removed_seq, removed_root)
            SELECT entity, id, relationship, target, replica, seq, ?, ?, ? FROM _sync_edge
            WHERE entity = ? AND id = ? AND relationship = ? AND target = ? AND replica = ? AND seq = ?
            AND removed_root IS NOT NULL AND NOT (removed_replica = ? AND removed_seq = ? AND removed_root = ?)
            """,
            remover.values + [root.storedValue] + source.values + [.text(relationship), target.storedValue] + added.values
                + remover.values + [root.storedValue])
    }

    /// The edges whose removal came from the deletes of `root`: `(source, relationship, target)`.
    static func edges(removedBy root: DeleteRoot, on connection: SQLiteConnection) throws -> [(source: ObjectKey, relationship: String, target: UUID)] {
        let removed = try connection.rows(
            "SELECT entity, id, relationship, target FROM _sync_edge WHERE removed_replica = ? AND removed_seq = ? AND removed_root = ?", root.values)
            + connection.rows(
                "SELECT entity, id, relationship, target FROM _sync_edge_removal WHERE removed_replica = ? AND removed_seq = ? AND removed_root = ?",
                root.values)
        return removed.compactMap { row in
            guard let source = ObjectKey(entity: row[0], id: row[1]), case .text(let name) = row[2],
                  let target = UUID(stored: row[3]) else { return nil }
            return (source, name, target)
        }
    }
}

extension EdgeTable {
    /// Drops the additions that can never show again and that no merge to come asks about, below
    /// the stable vector in `stableTable` (columns `replica, seq`): removed additions whose
    /// addition and removal are both at or below it, whose removal was a plain `unlink` or a
    /// delete that is not void, and neither of whose ends is in `unsettledTable` (column `id`:
    /// objects with a delete record that may still come undone or be re-judged). Their further
    /// removals (`_sync_edge_removal`) go with them. Returns how many additions went and their bytes.
    ///
    /// Why no merge misses them: an addition returns only when every delete that removed it is
    /// voided, and a delete at or below the stable vector that is not void never will be (a
    /// void needs a change set concurrent with it, and every change set still to arrive is
    /// causally after it). A delete still to arrive is causally after the addition, so its deny
    /// rule skips it; no unlink names it again. A stored delete concurrent with the addition is
    /// re-judged from every edge it had not seen, removed ones included: the additions at an
    /// object with such a delete record (a cascade, a void, or one above the vector) stay.
    static func removeSettledRemovals(below stableTable: String, unsettled unsettledTable: String,
                                      on connection: SQLiteConnection) throws -> (edges: Int, bytes: Int64) {
        let selection = """
            FROM _sync_edge AS e WHERE e.removed_replica IS NOT NULL
            AND EXISTS (SELECT 1 FROM \(stableTable) AS s WHERE s.replica = e.replica AND e.seq <= s.seq)
            AND EXISTS (SELECT 1 FROM \(stableTable) AS s WHERE s.replica = e.removed_replica AND e.removed_seq <= s.seq)
            AND (e.removed_root IS NULL OR NOT EXISTS (\(VoidedDeleteTable.voidQuery(replica: "e.removed_replica", seq: "e.removed_seq", root: "e.removed_root"))))
            AND e.id NOT IN (SELECT id FROM \(unsettledTable)) AND e.target NOT IN (SELECT id FROM \(unsettledTable))
            """
        return try remove(selection, on: connection)
    }

    /// Of the objects in `table` (columns `entity, id`), removes from it those with an edge
    /// addition, removed or not, whose other end is in `unsettledTable` (column `id`): a merge
    /// may still re-judge that end's delete from its edges.
    static func keepOnlyObjectsWithoutEdges(toAnyIn unsettledTable: String, in table: String, on connection: SQLiteConnection) throws {
        try connection.execute("""
            DELETE FROM \(table) WHERE id IN (SELECT e.id FROM _sync_edge AS e WHERE e.target IN (SELECT id FROM \(unsettledTable)))
                OR id IN (SELECT e.target FROM _sync_edge AS e WHERE e.id IN (SELECT id FROM \(unsettledTable)))
            """)
    }

    /// Removes every edge addition (removed or not) with an end in `table` (column `id`), and
    /// its further removals; returns how many additions went and their bytes.
    static func remove(touching table: String, on connection: SQLiteConnection) throws -> (edges: Int, bytes: Int64) {
        try remove("FROM _sync_edge AS e WHERE e.id IN (SELECT id FROM \(table)) OR e.target IN (SELECT id FROM \(table))", on: connection)
    }

    /// Removes the additions `selection` (a `FROM _sync_edge AS e WHERE …` clause) names, with
    /// their further removals; returns how many and their bytes.
    private static func remove(_ selection: String, on connection: SQLiteConnection) throws -> (edges: Int, bytes: Int64) {
        guard let measured = try connection.rows("""
            SELECT count(*), ifnull(sum(length(e.entity) + length(e.id) + length(e.relationship) + length(e.target)
                + length(e.replica) + ifnull(length(e.removed_replica), 0) + ifnull(length(e.removed_root), 0) + 24), 0) \(selection)
            """).first, case .integer(let count) = measured[0], count > 0, case .integer(let bytes) = measured[1] else { return (0, 0) }
        try connection.execute("""
            DELETE FROM _sync_edge_removal WHERE (entity, id, relationship, target, replica, seq) IN
                (SELECT e.entity, e.id, e.relationship, e.target, e.replica, e.seq \(selection))
            """)
        try connection.execute("""
            DELETE FROM _sync_edge WHERE (entity, id, relationship, target, replica, seq) IN
                (SELECT e.entity, e.id, e.relationship, e.target, e.replica, e.seq \(selection))
            """)
        return (Int(count), bytes)
    }
}

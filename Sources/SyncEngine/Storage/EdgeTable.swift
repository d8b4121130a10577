import Codecs
import Foundation
import LocalStoreCore

/// `_sync_edge`: one row per edge addition (`link`) through a canonical relationship, marked
/// removed by the `unlink`s that saw it (with the delete root of an unlink a delete caused).
/// Both stamps name their replica by ``ReplicaNumberTable``'s number.
///
/// `_sync_edge_removal`: the further removals of an addition that a delete already removed, each
/// by another delete. Every one stands on its own delete, so the addition returns only when all
/// of those deletes are voided, whichever removal arrived first.
enum EdgeTable {
    static let createStatements = [
        """
        CREATE TABLE IF NOT EXISTS _sync_edge (entity TEXT NOT NULL, id BLOB NOT NULL, relationship TEXT NOT NULL,
            target BLOB NOT NULL, replica INTEGER NOT NULL, seq INTEGER NOT NULL, hlc INTEGER NOT NULL,
            removed_replica INTEGER, removed_seq INTEGER, removed_root BLOB,
            PRIMARY KEY (entity, id, relationship, target, replica, seq)) WITHOUT ROWID
        """,
    ] + removalStatements + indexStatements

    /// The indexes of `_sync_edge` and `_sync_edge_removal` besides their keys (format version
    /// 11): by target first, so that the edges into a set of objects are found whatever their
    /// source entity; and of the removed additions alone, which voided deletes and compactions
    /// look up without reading the rest.
    static let indexStatements = [
        "CREATE INDEX IF NOT EXISTS _sync_edge_target ON _sync_edge (target, entity, relationship)",
        "CREATE INDEX IF NOT EXISTS _sync_edge_removal_target ON _sync_edge_removal (target, entity, relationship)",
        """
        CREATE INDEX IF NOT EXISTS _sync_edge_removed ON _sync_edge (removed_replica, removed_seq, removed_root)
            WHERE removed_replica IS NOT NULL
        """,
    ]

    /// The table of further removals (format version 2).
    static let removalStatements = [
        """
        CREATE TABLE IF NOT EXISTS _sync_edge_removal (entity TEXT NOT NULL, id BLOB NOT NULL, relationship TEXT NOT NULL,
            target BLOB NOT NULL, replica INTEGER NOT NULL, seq INTEGER NOT NULL,
            removed_replica INTEGER NOT NULL, removed_seq INTEGER NOT NULL, removed_root BLOB NOT NULL,
            PRIMARY KEY (entity, id, relationship, target, replica, seq, removed_replica, removed_seq, removed_root)) WITHOUT ROWID
        """,
        "CREATE INDEX IF NOT EXISTS _sync_edge_removal_root ON _sync_edge_removal (removed_replica, removed_seq, removed_root)",
    ]

    /// Turns the tables of an earlier format, which held replica identifiers, into this layout,
    /// numbering the replicas they name.
    static func numberLegacyReplicas(on connection: SQLiteConnection) throws {
        guard try connection.declaredType(of: "replica", in: "_sync_edge") != "INTEGER" else { return }
        try ReplicaNumberTable.numberEvery(in: """
            SELECT replica FROM _sync_edge UNION SELECT removed_replica FROM _sync_edge
            UNION SELECT replica FROM _sync_edge_removal UNION SELECT removed_replica FROM _sync_edge_removal
            """, on: connection)
        // The indexes go first: renamed with their tables, they would keep the names the new ones take.
        try connection.execute("DROP INDEX IF EXISTS _sync_edge_target")
        try connection.execute("DROP INDEX IF EXISTS _sync_edge_removed")
        try connection.execute("DROP INDEX IF EXISTS _sync_edge_removal_target")
        try connection.execute("DROP INDEX IF EXISTS _sync_edge_removal_root")
        for table in ["_sync_edge", "_sync_edge_removal"] { try connection.execute("ALTER TABLE \(table) RENAME TO \(table)_legacy") }
        for statement in createStatements { try connection.execute(statement) }
        let replica = ReplicaNumberTable.number(ofReplica: "e.replica"), removedReplica = ReplicaNumberTable.number(ofReplica: "e.removed_replica")
        try connection.execute("""
            INSERT INTO _sync_edge (entity, id, relationship, target, replica, seq, hlc, removed_replica, removed_seq, removed_root)
            SELECT entity, id, relationship, target, \(replica), seq, hlc, \(removedReplica), removed_seq, removed_root FROM _sync_edge_legacy AS e
            """)
        try connection.execute("""
            INSERT INTO _sync_edge_removal (entity, id, relationship, target, replica, seq, removed_replica, removed_seq, removed_root)
            SELECT entity, id, relationship, target, \(replica), seq, \(removedReplica), removed_seq, removed_root FROM _sync_edge_removal_legacy AS e
            """)
        for table in ["_sync_edge", "_sync_edge_removal"] { try connection.execute("DROP TABLE \(table)_legacy") }
    }

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

    /// The columns ``edges(_:_:on:)`` reads: the stamps with their replicas' identifiers, then
    /// the addition's replica number (to find its further removals).
    private static let columns = """
        e.id, e.target, e.hlc, \(ReplicaNumberTable.replica(numbered: "e.replica")), e.seq,
        \(ReplicaNumberTable.replica(numbered: "e.removed_replica")), e.removed_seq, e.removed_root, e.entity, e.relationship, e.replica
        """

    /// Additions kept in memory and written with multi-row INSERTs (an addition stored before is kept).
    struct PendingRows {
        private var inserts = PendingInserts("INSERT OR IGNORE INTO _sync_edge (entity, id, relationship, target, replica, seq, hlc)", columnCount: 7)

        /// An addition made with `stamp`, whose replica has the number `replicaNumber`.
        mutating func append(from source: ObjectKey, _ relationship: String, to target: UUID, added stamp: Stamp, replicaNumber: SQLValue) {
            inserts.append([.text(source.entity), source.id.storedValue, .text(relationship), target.storedValue,
                            replicaNumber, stamp.seqValue, stamp.hlcValue])
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
            replica = .integer(try ReplicaNumberTable.number(of: stamp.replica, on: connection))
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
        try edges("SELECT \(columns) FROM _sync_edge AS e WHERE entity = ? AND id = ? AND relationship = ?",
                  source.values + [.text(relationship)], on: connection)
    }

    /// Every addition into `target` through `relationship` of `sourceEntity`, removed or not.
    static func edges(to target: UUID, _ relationship: String, of sourceEntity: String, on connection: SQLiteConnection) throws -> [StoredEdge] {
        // Named: without statistics SQLite prefers the primary key's first column (every edge of
        // the entity) to a secondary index that does not cover the columns read, and the merge of
        // a link into a store of many edges would read them all.
        try edges("SELECT \(columns) FROM _sync_edge AS e INDEXED BY _sync_edge_target WHERE target = ? AND entity = ? AND relationship = ?",
                  [target.storedValue, .text(sourceEntity), .text(relationship)], on: connection)
    }

    /// Every addition from each of `sources` (objects of `entity`) through `relationship`,
    /// removed or not, by source: one statement for many objects (sources without any are absent).
    static func edges(fromEach sources: ArraySlice<UUID>, of entity: String, _ relationship: String,
                      on connection: SQLiteConnection) throws -> [UUID: [StoredEdge]] {
        let found = try edges("SELECT \(columns) FROM _sync_edge AS e WHERE entity = ? AND relationship = ? AND id IN (\(EntityTable.placeholders(sources.count)))",
                              [.text(entity), .text(relationship)] + sources.map(\.storedValue), on: connection)
        return Dictionary(grouping: found, by: \.source)
    }

    /// Every addition into each of `targets` through `relationship` of `sourceEntity`, removed or
    /// not, by target: one statement for many objects (targets without any are absent).
    static func edges(toEach targets: ArraySlice<UUID>, _ relationship: String, of sourceEntity: String,
                      on connection: SQLiteConnection) throws -> [UUID: [StoredEdge]] {
        let found = try edges(
            "SELECT \(columns) FROM _sync_edge AS e INDEXED BY _sync_edge_target WHERE target IN (\(EntityTable.placeholders(targets.count))) AND entity = ? AND relationship = ?",
            targets.map(\.storedValue) + [.text(sourceEntity), .text(relationship)], on: connection)
        return Dictionary(grouping: found, by: \.target)
    }

    /// The edges `sql` reads, in the order of the table's key with replicas by identifier (as
    /// every store orders them, whatever numbers it gave its replicas).
    private static func edges(_ sql: String, _ arguments: [SQLValue], on connection: SQLiteConnection) throws -> [StoredEdge] {
        var edges = try connection.rows(sql, arguments).compactMap { row -> StoredEdge? in
            guard let source = UUID(stored: row[0]), let target = UUID(stored: row[1]),
                  let added = Stamp(hlc: row[2], replica: row[3], seq: row[4]) else { return nil }
            let removalRoot = DeleteRoot(replica: row[5], seq: row[6], root: row[7])
            var edge = StoredEdge(source: source, target: target, added: added, isRemoved: !row[5].isNull, removalRoot: removalRoot)
            if removalRoot != nil {
                edge.furtherRemovalRoots = try connection.rows(
                    """
                    SELECT \(ReplicaNumberTable.replica(numbered: "r.removed_replica")), removed_seq, removed_root FROM _sync_edge_removal AS r
                    WHERE entity = ? AND id = ? AND relationship = ? AND target = ? AND replica = ? AND seq = ?
                    """,
                    [row[8], row[0], row[9], row[1], row[10], added.seqValue]
                ).compactMap { DeleteRoot(replica: $0[0], seq: $0[1], root: $0[2]) }
            }
            return edge
        }
        // Rows differ in order only where one pair of ends has additions of several replicas.
        edges.sort { left, right in
            if left.source != right.source { return left.source.precedesInStorageOrder(right.source) }
            if left.target != right.target { return left.target.precedesInStorageOrder(right.target) }
            if left.added.replica != right.added.replica { return left.added.replica.precedesInStorageOrder(right.added.replica) }
            return left.added.seq < right.added.seq
        }
        return edges
    }

    /// Marks the addition `added` of the edge as removed by the change set `remover` (with the
    /// root of the delete that caused the unlink, if one did). An addition already removed stays
    /// so, unless a delete removed it and this unlink is not a delete's: then this one stands.
    /// `removerNumber` is the number of `remover`'s replica.
    static func markRemoved(
        from source: ObjectKey, _ relationship: String, to target: UUID, added: Dot, by remover: Dot, removerNumber: SQLValue, root: UUID?,
        on connection: SQLiteConnection
    ) throws {
        let rootValue = root.map(\.storedValue) ?? .null
        let removerValues = [removerNumber, .integer(Int64(remover.seq))]
        try connection.run(
            """
            UPDATE _sync_edge SET removed_replica = ?, removed_seq = ?, removed_root = ?
            WHERE entity = ? AND id = ? AND relationship = ? AND target = ? AND replica = \(ReplicaNumberTable.number(ofReplica: "?")) AND seq = ?
            AND (removed_replica IS NULL OR (removed_root IS NOT NULL AND ? IS NULL))
            """,
            removerValues + [rootValue] + source.values + [.text(relationship), target.storedValue] + added.values + [rootValue])
        guard let root, connection.changes == 0 else { return }
        // Another delete removed the addition already: this delete's removal is kept beside it.
        try connection.run(
            """
            INSERT OR IGNORE INTO _sync_edge_removal
                (entity, id, relationship, target, replica, seq, removed_replica, removed_seq, removed_root)
            SELECT entity, id, relationship, target, replica, seq, ?, ?, ? FROM _sync_edge
            WHERE entity = ? AND id = ? AND relationship = ? AND target = ? AND replica = \(ReplicaNumberTable.number(ofReplica: "?")) AND seq = ?
            AND removed_root IS NOT NULL AND NOT (removed_replica = ? AND removed_seq = ? AND removed_root = ?)
            """,
            removerValues + [root.storedValue] + source.values + [.text(relationship), target.storedValue] + added.values
                + removerValues + [root.storedValue])
    }

    /// The edges whose removal came from the deletes of `root`: `(source, relationship, target)`.
    static func edges(removedBy root: DeleteRoot, on connection: SQLiteConnection) throws -> [(source: ObjectKey, relationship: String, target: UUID)] {
        let selection = "WHERE removed_replica IS NOT NULL AND removed_replica = \(ReplicaNumberTable.number(ofReplica: "?")) AND removed_seq = ? AND removed_root = ?"
        let removed = try connection.rows("SELECT entity, id, relationship, target FROM _sync_edge INDEXED BY _sync_edge_removed \(selection)", root.values)
            + connection.rows("SELECT entity, id, relationship, target FROM _sync_edge_removal \(selection)", root.values)
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
    /// delete that is not void, and neither of whose ends is in `unsettledTable` (columns `entity, id`:
    /// objects with a delete record that may still come undone or be re-judged). Their further
    /// removals (`_sync_edge_removal`) go with them. Returns how many additions went and their bytes.
    ///
    /// Why no merge misses them: an addition returns only when every delete that removed it is
    /// voided, and a delete at or below the stable vector that is not void, judged so on the
    /// change sets at or below it, never will be (every change set still to arrive is causally
    /// after it and was written where it stood; deletes judged otherwise above the vector put
    /// their objects in `unsettledTable`). A delete still to arrive is causally after the addition, so its deny
    /// rule skips it; no unlink names it again. A stored delete concurrent with the addition is
    /// re-judged from every edge it had not seen, removed ones included: the additions at an
    /// object with such a delete record (a cascade, a void, or one above the vector) stay.
    static func removeSettledRemovals(below stableTable: String, unsettled unsettledTable: String,
                                      on connection: SQLiteConnection) throws -> (edges: Int, bytes: Int64) {
        let selection = """
            FROM _sync_edge AS e INDEXED BY _sync_edge_removed WHERE e.removed_replica IS NOT NULL
            AND \(isAtOrBelow(stableTable, replica: "e.replica", seq: "e.seq"))
            AND \(isAtOrBelow(stableTable, replica: "e.removed_replica", seq: "e.removed_seq"))
            AND (e.removed_root IS NULL OR NOT EXISTS (\(VoidedDeleteTable.voidQuery(
                replica: ReplicaNumberTable.replica(numbered: "e.removed_replica"), seq: "e.removed_seq", root: "e.removed_root"))))
            AND (e.entity, e.id) NOT IN (SELECT entity, id FROM \(unsettledTable)) AND e.target NOT IN (SELECT id FROM \(unsettledTable))
            """
        return try remove(selection, on: connection)
    }

    /// An SQL condition: the change set `(replica, seq)` (a replica's number and a seq, as this
    /// table stores them) is at or below the vector in `stableTable` (columns `replica, seq`).
    private static func isAtOrBelow(_ stableTable: String, replica: String, seq: String) -> String {
        """
        EXISTS (SELECT 1 FROM \(stableTable) AS s JOIN _sync_replica_number AS n ON n.replica = s.replica
            WHERE n.number = \(replica) AND \(seq) <= s.seq)
        """
    }

    /// Adds to `table` (columns `entity, id`) the objects with a delete record whose deletes may be judged
    /// otherwise on the change sets at or below the stable vector in `stableTable` than on all
    /// this store holds: those with an edge (either end, removed or not) that a change set above
    /// the vector added or removed, and, until none is left, those with an edge to an object in
    /// `table` that has a delete record (a delete rule leaves out a neighbour its deleter saw
    /// deleted, as long as that delete stands).
    ///
    /// Every change set above the vector was written on a store holding at least the change sets
    /// at or below it, and maybe others: where those others undo a delete's void (an unlink that
    /// takes a cascade away from a deny rule) the delete stands, and where they do not it is
    /// void and its objects are alive, so a change set written there may edit or link them,
    /// causally after the delete. Such a delete is settled only once the change sets that judge it
    /// are at or below the vector too. A delete whose objects' edges changed only at or below the
    /// vector is judged the same on every store, which is what compaction needs.
    static func insertObjectsWithDeletesJudgedAboveStable(_ stableTable: String, into table: String, on connection: SQLiteConnection) throws {
        guard try connection.rows("SELECT 1 FROM _sync_delete LIMIT 1").first != nil else { return }
        // Which edges touch a deleted object is the cheap test, so it comes first, each end by
        // its own index (the source by the key's `(entity, id)`, the target by the target index);
        // the stamps are compared with the vector for those edges alone.
        try connection.execute("""
            WITH deleted (entity, id) AS (SELECT DISTINCT entity, id FROM _sync_delete),
            changed (id, target) AS (
                SELECT e.id, e.target FROM _sync_edge AS e
                WHERE ((e.entity, e.id) IN deleted OR e.target IN (SELECT id FROM deleted))
                AND (NOT \(isAtOrBelow(stableTable, replica: "e.replica", seq: "e.seq"))
                    OR (e.removed_replica IS NOT NULL AND NOT \(isAtOrBelow(stableTable, replica: "e.removed_replica", seq: "e.removed_seq"))))
                UNION ALL
                SELECT e.id, e.target FROM _sync_edge_removal AS e
                WHERE ((e.entity, e.id) IN deleted OR e.target IN (SELECT id FROM deleted))
                AND NOT \(isAtOrBelow(stableTable, replica: "e.removed_replica", seq: "e.removed_seq")))
            INSERT OR IGNORE INTO \(table) (entity, id)
            SELECT d.entity, d.id FROM deleted AS d WHERE d.id IN (SELECT id FROM changed) OR d.id IN (SELECT target FROM changed)
            """)
        guard try connection.rows("SELECT 1 FROM \(table) LIMIT 1").first != nil else { return }
        repeat {
            try connection.execute("""
                INSERT OR IGNORE INTO \(table) (entity, id) SELECT d.entity, d.id FROM _sync_delete AS d
                WHERE (d.entity, d.id) NOT IN (SELECT entity, id FROM \(table))
                AND (d.id IN (SELECT e.id FROM _sync_edge AS e WHERE e.target IN (SELECT id FROM \(table)))
                    OR d.id IN (SELECT e.target FROM _sync_edge AS e WHERE (e.entity, e.id) IN (SELECT entity, id FROM \(table))))
                """)
        } while connection.changes > 0
    }

    /// Of the objects in `table` (columns `entity, id`), removes from it those with an edge
    /// addition, removed or not, whose other end is in `unsettledTable` (columns `entity, id`): a merge
    /// may still re-judge that end's delete from its edges.
    static func keepOnlyObjectsWithoutEdges(toAnyIn unsettledTable: String, in table: String, on connection: SQLiteConnection) throws {
        try connection.execute("""
            DELETE FROM \(table) WHERE id IN (SELECT e.id FROM _sync_edge AS e WHERE e.target IN (SELECT id FROM \(unsettledTable)))
                OR id IN (SELECT e.target FROM _sync_edge AS e WHERE (e.entity, e.id) IN (SELECT entity, id FROM \(unsettledTable)))
            """)
    }

    /// Removes every edge addition (removed or not) with an end in `table` (columns `entity, id`), and
    /// its further removals; returns how many additions went and their bytes.
    static func remove(touching table: String, on connection: SQLiteConnection) throws -> (edges: Int, bytes: Int64) {
        try remove("FROM _sync_edge AS e WHERE (e.entity, e.id) IN (SELECT entity, id FROM \(table)) OR e.target IN (SELECT id FROM \(table))",
                   on: connection)
    }

    /// Removes the additions `selection` (a `FROM _sync_edge AS e WHERE …` clause) names, with
    /// their further removals; returns how many and their bytes.
    private static func remove(_ selection: String, on connection: SQLiteConnection) throws -> (edges: Int, bytes: Int64) {
        guard let measured = try connection.rows("""
            SELECT count(*), ifnull(sum(length(e.entity) + length(e.id) + length(e.relationship) + length(e.target)
                + ifnull(length(e.removed_root), 0) + 28), 0) \(selection)
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

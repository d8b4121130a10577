import Codecs
import Foundation
import LocalStoreCore

/// `_sync_object`: each object's creation stamp (its replica by ``ReplicaNumberTable``'s number),
/// and its column values (a ``Tombstone``'s JSON) while it has no row in its entity table.
enum ObjectMetadataTable {
    static let createStatements = [
        """
        CREATE TABLE IF NOT EXISTS _sync_object (entity TEXT NOT NULL, id BLOB NOT NULL, hlc INTEGER NOT NULL,
            replica INTEGER NOT NULL, seq INTEGER NOT NULL, tombstone TEXT, PRIMARY KEY (entity, id)) WITHOUT ROWID
        """,
    ]

    /// Turns a table of an earlier format, which held each creation's replica identifier, into
    /// this layout, numbering the replicas it names.
    static func numberLegacyReplicas(on connection: SQLiteConnection) throws {
        guard try connection.declaredType(of: "replica", in: "_sync_object") != "INTEGER" else { return }
        try ReplicaNumberTable.numberEvery(in: "SELECT replica FROM _sync_object", on: connection)
        try connection.execute("ALTER TABLE _sync_object RENAME TO _sync_object_legacy")
        for statement in createStatements { try connection.execute(statement) }
        try connection.execute("""
            INSERT INTO _sync_object (entity, id, hlc, replica, seq, tombstone)
            SELECT entity, id, hlc, \(ReplicaNumberTable.number(ofReplica: "o.replica")), seq, tombstone FROM _sync_object_legacy AS o
            """)
        try connection.execute("DROP TABLE _sync_object_legacy")
    }

    /// A query of the `(replica, seq)` of the change sets that created the objects `objects` (a
    /// query of `entity, id`) selects.
    static func creatingChangeSetsQuery(of objects: String) -> String {
        "SELECT n.replica, o.seq FROM _sync_object AS o JOIN _sync_replica_number AS n ON n.number = o.replica WHERE (o.entity, o.id) IN (\(objects))"
    }

    /// Of the objects in `table` (columns `entity, id`), removes from it those that are not
    /// deleted (no tombstone, or one already emptied by compaction).
    static func keepOnlyTombstoned(in table: String, on connection: SQLiteConnection) throws {
        try connection.execute("""
            DELETE FROM \(table) WHERE (entity, id) NOT IN (SELECT entity, id FROM _sync_object WHERE tombstone IS NOT NULL AND tombstone <> '{}')
            """)
    }

    /// Empties the tombstones (the last values) of the objects in `table` (columns `entity, id`),
    /// keeping their creation rows; returns how many and the bytes of values they held.
    static func clearTombstones(ofObjectsIn table: String, on connection: SQLiteConnection) throws -> (tombstones: Int, bytes: Int64) {
        let selection = "WHERE (entity, id) IN (SELECT entity, id FROM \(table))"
        var bytes: Int64 = 0
        if case .integer(let sum)? = try connection.rows("SELECT ifnull(sum(length(tombstone) - 2), 0) FROM _sync_object \(selection)").first?.first {
            bytes = sum
        }
        try connection.execute("UPDATE _sync_object SET tombstone = '{}' \(selection)")
        return (connection.changes, bytes)
    }

    /// Of the objects in `table` (columns `entity, id`), removes from it those that have a row
    /// in their entity table (that are not deleted).
    static func keepOnlyWithoutRow(in table: String, on connection: SQLiteConnection) throws {
        try connection.execute("DELETE FROM \(table) WHERE (entity, id) NOT IN (SELECT entity, id FROM _sync_object WHERE tombstone IS NOT NULL)")
    }

    /// Removes the creation rows of the objects in `table` (columns `entity, id`); returns how
    /// many and their bytes.
    static func remove(objectsIn table: String, on connection: SQLiteConnection) throws -> (objects: Int, bytes: Int64) {
        let removed = try SyncTables.removeRows(from: "_sync_object", "WHERE (entity, id) IN (SELECT entity, id FROM \(table))",
                                                size: "length(entity) + length(id) + ifnull(length(tombstone), 0) + 18", on: connection)
        return (removed.rows, removed.bytes)
    }

    /// Every object of `entity` that change sets created (deleted ones included).
    static func identifiers(of entity: String, on connection: SQLiteConnection) throws -> [UUID] {
        var identifiers: [UUID] = []
        try connection.forEachRow("SELECT id FROM _sync_object WHERE entity = ?", [.text(entity)]) { row in
            if let id = row.identifier(at: 0) { identifiers.append(id) }
        }
        return identifiers
    }

    /// What ``objects(_:_:on:_:)`` reads of one object.
    struct StoredObject {
        var id: UUID
        var creation: Stamp
        var hasRow: Bool
        /// Whether ``DeleteTable`` has any delete of the object (in force or not).
        var hasDeletes: Bool
    }

    /// Creation rows kept in memory and written with multi-row INSERTs.
    struct PendingRows {
        private var inserts = PendingInserts("INSERT INTO _sync_object (entity, id, hlc, replica, seq, tombstone)", columnCount: 6)

        /// An object created with `stamp`, whose replica has the number `replicaNumber`; `hasRow:
        /// false` stores an empty tombstone (no values yet).
        mutating func append(_ object: ObjectKey, creation stamp: Stamp, replicaNumber: SQLValue, hasRow: Bool) {
            inserts.append([.text(object.entity), object.id.storedValue, stamp.hlcValue, replicaNumber, stamp.seqValue,
                            hasRow ? .null : .text("{}")])
        }

        mutating func flush(on connection: SQLiteConnection) throws {
            try inserts.flush(on: connection)
        }
    }

    /// Inserts the creation rows of a local save's new objects one statement at a time, binding
    /// identifiers without making strings (the rows of a save come in primary-key order).
    struct CreationWriter {
        /// SQLite's primary result code for a violated constraint (`SQLITE_CONSTRAINT`).
        private static let sqliteConstraint: Int32 = 19
        private let statement: SQLiteStatement
        private let stamp: Stamp
        private let replica: SQLValue

        init(creation stamp: Stamp, on connection: SQLiteConnection) throws {
            statement = try connection.cachedStatement("INSERT INTO _sync_object (entity, id, hlc, replica, seq, tombstone) VALUES (?, ?, ?, ?, ?, NULL)")
            self.stamp = stamp
            replica = .integer(try ReplicaNumberTable.number(of: stamp.replica, on: connection))
        }

        /// Inserts `object`'s row; false when the object already has one.
        func insert(_ object: ObjectKey) throws -> Bool {
            statement.reset()
            try statement.bind(.text(object.entity), at: 1)
            try statement.bind(identifier: object.id, at: 2)
            try statement.bind(stamp.hlcValue, at: 3)
            try statement.bind(replica, at: 4)
            try statement.bind(stamp.seqValue, at: 5)
            do {
                while try statement.step() {}
            } catch let error as StoreError where error.sqliteCode.map({ $0 & 0xFF }) == CreationWriter.sqliteConstraint {
                return false
            }
            return true
        }
    }

    /// Reads the stored objects among `ids` of `entity` (at most a few hundred: one bound parameter each).
    static func objects(_ entity: String, _ ids: some Collection<UUID>, on connection: SQLiteConnection, _ body: (StoredObject) -> Void) throws {
        try connection.forEachRow(objectsQuery(count: ids.count, alsoSelecting: nil), entity: entity, identifiers: ids) { row in
            guard let stored = StoredObject(row) else { return }
            body(stored)
        }
    }

    /// ``objects(_:_:on:_:)`` with each object's attribute stamps (``FieldStampTable``; none
    /// stored: an empty set), read by the same statement: a merge wants both of every object it
    /// has not read yet, and one statement finds each object once.
    ///
    /// - Throws: ``SyncError`` `.notSyncable` when an object's stamps cannot be decoded, naming the store, entity and object.
    static func objectsWithFieldStamps(
        _ entity: String, _ ids: some Collection<UUID>, on connection: SQLiteConnection, _ body: (StoredObject, FieldStamps) -> Void
    ) throws {
        let sql = objectsQuery(count: ids.count, alsoSelecting: FieldStampTable.stampsOfObject(entity: "o.entity", id: "o.id"))
        try connection.forEachRow(sql, entity: entity, identifiers: ids) { row in
            guard let stored = StoredObject(row) else { return }
            body(stored, try FieldStampTable.decodeStored(row, at: StoredObject.columnCount, of: ObjectKey(entity: entity, id: stored.id), in: connection.path))
        }
    }

    /// The query of ``objects(_:_:on:_:)`` for `count` identifiers, with `extraColumn` after the
    /// columns ``StoredObject`` reads.
    private static func objectsQuery(count: Int, alsoSelecting extraColumn: String?) -> String {
        """
        SELECT id, hlc, \(ReplicaNumberTable.replica(numbered: "o.replica")), seq, tombstone IS NULL,
            EXISTS (SELECT 1 FROM _sync_delete AS d WHERE d.entity = o.entity AND d.id = o.id)\(extraColumn.map { ", " + $0 } ?? "")
        FROM _sync_object AS o WHERE entity = ? AND id IN (\(EntityTable.placeholders(count)))
        """
    }

    /// The tombstone JSON of `object`, `nil` when it has a row (or no metadata).
    static func tombstone(of object: ObjectKey, on connection: SQLiteConnection) throws -> String? {
        try connection.rows("SELECT tombstone FROM _sync_object WHERE entity = ? AND id = ?", object.values).first?.first?.textValue
    }

    /// Stores `object`'s column values while it has no row; `nil` marks that it has one again.
    static func setTombstone(_ json: String?, of object: ObjectKey, on connection: SQLiteConnection) throws {
        try connection.run("UPDATE _sync_object SET tombstone = ? WHERE entity = ? AND id = ?", [json.map(SQLValue.text) ?? .null] + object.values)
    }
}

extension ObjectMetadataTable.StoredObject {
    /// The columns of a row of ``ObjectMetadataTable/objectsQuery(count:alsoSelecting:)`` it is read from.
    fileprivate static let columnCount = 6

    /// The object a row of ``ObjectMetadataTable/objectsQuery(count:alsoSelecting:)`` reads; nil for a damaged row.
    fileprivate init?(_ row: SQLiteStatement) {
        guard let id = row.identifier(at: 0), let stamp = Stamp(row, at: 1) else { return nil }
        self.init(id: id, creation: stamp, hasRow: row.integer(at: 4) == 1, hasDeletes: row.integer(at: 5) != 0)
    }
}

import Codecs
import Foundation
import LocalStoreCore

/// `_sync_object`: each object's creation stamp, and its column values (a ``Tombstone``'s JSON)
/// while it has no row in its entity table.
enum ObjectMetadataTable {
    static let createStatements = [
        """
        CREATE TABLE IF NOT EXISTS _sync_object (entity TEXT NOT NULL, id TEXT NOT NULL, hlc INTEGER NOT NULL,
            replica TEXT NOT NULL, seq INTEGER NOT NULL, tombstone TEXT, PRIMARY KEY (entity, id)) WITHOUT ROWID
        """,
    ]

    /// Every object of `entity` that change sets created (deleted ones included).
    static func identifiers(of entity: String, on connection: SQLiteConnection) throws -> [UUID] {
        var identifiers: [UUID] = []
        try connection.forEachRow("SELECT id FROM _sync_object WHERE entity = ?", [.text(entity)]) { row in
            if let id = row.uuid(at: 0) { identifiers.append(id) }
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

        /// An object created with `stamp`; `hasRow: false` stores an empty tombstone (no values yet).
        mutating func append(_ object: ObjectKey, creation stamp: Stamp, hasRow: Bool) {
            inserts.append([.text(object.entity), .text(object.id.storageText), stamp.hlcValue, stamp.replicaValue, stamp.seqValue,
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
            replica = stamp.replicaValue
        }

        /// Inserts `object`'s row; false when the object already has one.
        func insert(_ object: ObjectKey) throws -> Bool {
            statement.reset()
            try statement.bind(.text(object.entity), at: 1)
            try statement.bind(storageTextOf: object.id, at: 2)
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
        try connection.forEachRow(
            """
            SELECT id, hlc, replica, seq, tombstone IS NULL,
                EXISTS (SELECT 1 FROM _sync_delete AS d WHERE d.entity = o.entity AND d.id = o.id)
            FROM _sync_object AS o WHERE entity = ? AND id IN (\(EntityTable.placeholders(ids.count)))
            """, [.text(entity)] + ids.map { .text($0.storageText) }
        ) { row in
            guard let id = row.uuid(at: 0), let stamp = Stamp(row, at: 1) else { return }
            body(StoredObject(id: id, creation: stamp, hasRow: row.integer(at: 4) == 1, hasDeletes: row.integer(at: 5) != 0))
        }
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

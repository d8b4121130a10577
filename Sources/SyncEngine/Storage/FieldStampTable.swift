import Codecs
import Foundation
import LocalStoreCore

/// `_sync_field_stamps`: the stamps of the last writes to an object's attributes, one row per
/// object (an attribute without a stamp: the object's creation stamp stands for it).
///
/// One row per object, not per attribute: a merge writes many attributes of each object it
/// touches, and one row write per object costs a fraction of one per attribute. The stamps are a
/// small blob (``encode(_:)``), read and rewritten whole.
enum FieldStampTable {
    static let createStatements = [
        """
        CREATE TABLE IF NOT EXISTS _sync_field_stamps (entity TEXT NOT NULL, id BLOB NOT NULL, stamps BLOB NOT NULL,
            PRIMARY KEY (entity, id)) WITHOUT ROWID
        """,
    ]

    /// The layout before sync format 6: one row per attribute.
    private static let legacyTable = "_sync_field"

    /// Moves the stamps of a store written before sync format 6 (one row per attribute, in
    /// `_sync_field`) into one row per object, and drops the old table; inside the caller's
    /// transaction. A store that never had the old table only gets the new one.
    static func migrateLegacyTable(on connection: SQLiteConnection) throws {
        for statement in createStatements { try connection.execute(statement) }
        guard try !connection.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(legacyTable)]).isEmpty else { return }
        var pending = PendingRows()
        var current: ObjectKey?
        var stamps = FieldStamps()
        func finish() throws {
            guard let object = current else { return }
            pending.append(object, stamps: stamps)
            stamps = FieldStamps()
            if pending.count >= 10_000 { try pending.flush(on: connection) }
        }
        // In primary-key order: an object's attributes come together.
        for row in try connection.rows("SELECT entity, id, field, hlc, replica, seq FROM \(legacyTable) ORDER BY entity, id, field") {
            guard let object = ObjectKey(entity: row[0], id: row[1]), case .text(let field) = row[2],
                  let stamp = Stamp(hlc: row[3], replica: row[4], seq: row[5]) else {
                throw SyncError(.notSyncable, "\(connection.path): a row of \(legacyTable) is not an attribute's stamp: \(row)")
            }
            if current != object {
                try finish()
                current = object
            }
            stamps[field] = stamp
        }
        try finish()
        try pending.flush(on: connection)
        try connection.execute("DROP TABLE \(legacyTable)")
    }

    /// Rows kept in memory and written with multi-row INSERTs, replacing each object's row.
    struct PendingRows {
        private var inserts = PendingInserts("INSERT OR REPLACE INTO _sync_field_stamps (entity, id, stamps)", columnCount: 3)
        private(set) var count = 0

        /// `object`'s stamps, all of them: the row is replaced.
        mutating func append(_ object: ObjectKey, stamps: FieldStamps) {
            inserts.append(object.values + [.blob(FieldStampTable.encode(stamps))])
            count += 1
        }

        mutating func flush(on connection: SQLiteConnection) throws {
            try inserts.flush(on: connection)
            count = 0
        }
    }

    /// The stored stamps of the objects `ids` of `entity` (at most a few hundred: one bound
    /// parameter each), by object; objects without any are left out.
    static func stamps(_ entity: String, _ ids: some Collection<UUID>, on connection: SQLiteConnection) throws -> [UUID: FieldStamps] {
        var result: [UUID: FieldStamps] = [:]
        result.reserveCapacity(ids.count)
        try connection.forEachRow(
            "SELECT id, stamps FROM _sync_field_stamps WHERE entity = ? AND id IN (\(EntityTable.placeholders(ids.count)))",
            entity: entity, identifiers: ids
        ) { row in
            guard let id = row.identifier(at: 0) else { return }
            result[id] = try decodeStored(row, at: 1, of: ObjectKey(entity: entity, id: id), in: connection.path)
        }
        return result
    }

    /// An SQL expression of the stamps blob of the object whose entity and identifier are the
    /// expressions `entity` and `id` (columns of another table's query), NULL when it has none.
    static func stampsOfObject(entity: String, id: String) -> String {
        "(SELECT stamps FROM _sync_field_stamps AS s WHERE s.entity = \(entity) AND s.id = \(id))"
    }

    /// The stamps of `object` in the 0-based column `column` of `row`: a stored blob, or `NULL`
    /// when the object has none (an empty set).
    ///
    /// - Throws: ``SyncError`` `.notSyncable` when the column holds anything else, naming the store, entity and object.
    static func decodeStored(_ row: SQLiteStatement, at column: Int, of object: ObjectKey, in path: String) throws -> FieldStamps {
        if row.isNull(at: column) { return FieldStamps() }
        do {
            return try decode(row.blobBytes(at: column))
        } catch {
            throw SyncError(.notSyncable, "\(path): the attribute stamps of \(object.entity) \(object.id) cannot be read: \(error)")
        }
    }

    /// How many attribute stamps the table holds (for the store's history summary).
    static func count(on connection: SQLiteConnection) throws -> Int {
        var total = 0
        try connection.forEachRow("SELECT stamps FROM _sync_field_stamps", []) { row in total += stampCount(row.blobBytes(at: 0)) }
        return total
    }

    /// Removes the stamps of the objects listed in `table` (columns `entity, id`), inside the
    /// caller's transaction; returns how many stamps and bytes went.
    static func remove(objectsIn table: String, on connection: SQLiteConnection) throws -> (stamps: Int, bytes: Int64) {
        let selection = "WHERE (entity, id) IN (SELECT entity, id FROM \(table))"
        var stamps = 0, bytes: Int64 = 0
        try connection.forEachRow("SELECT length(entity) + length(id), stamps FROM _sync_field_stamps \(selection)", []) { row in
            let blob = row.blobBytes(at: 1)
            stamps += stampCount(blob)
            bytes += row.integer(at: 0) + Int64(blob.count)
        }
        try connection.execute("DELETE FROM _sync_field_stamps \(selection)")
        return (stamps, bytes)
    }

    /// The number of stamps in an ``encode(_:)`` blob, read from its header (0 if damaged).
    private static func stampCount(_ blob: UnsafeRawBufferPointer) -> Int {
        var reader = ByteReader(blob)
        // The blob starts with its replica count and replicas, then the stamp count.
        guard let replicas = try? reader.readCount(of: "replicas", minimumSize: 16),
              (try? reader.readBytes(16 * replicas)) != nil,
              let stamps = try? reader.readVarint() else { return 0 }
        return Int(stamps)
    }

    /// The blob of one object's stamps: the replicas they name (count, then 16 bytes each), then
    /// the stamps in attribute-name order (count, then per stamp the attribute's name, the index
    /// of its replica, its HLC and its seq). An object's attributes were mostly written by a few
    /// replicas: naming each once keeps the row short.
    static func encode(_ stamps: FieldStamps) -> Data {
        let entries = stamps.sortedEntries
        var replicas: [ReplicaID] = []
        for entry in entries where !replicas.contains(entry.stamp.replica) { replicas.append(entry.stamp.replica) }
        var writer = ByteWriter(reservingCapacity: 8 + 16 * replicas.count + 32 * entries.count)
        writer.writeVarint(UInt64(replicas.count))
        for replica in replicas { writer.writeUUID(replica) }
        writer.writeVarint(UInt64(entries.count))
        for entry in entries {
            writer.writeString(entry.field)
            writer.writeVarint(UInt64(replicas.firstIndex(of: entry.stamp.replica)!))
            writer.writeFixed64(entry.stamp.hlc.rawValue)
            writer.writeVarint(entry.stamp.seq)
        }
        return writer.data
    }

    /// Reads what ``encode(_:)`` wrote; damaged bytes throw ``ByteReadError``.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> FieldStamps {
        var reader = ByteReader(bytes)
        let replicaCount = try reader.readCount(of: "replicas", minimumSize: 16)
        var replicas: [ReplicaID] = []
        replicas.reserveCapacity(replicaCount)
        for _ in 0..<replicaCount { replicas.append(try reader.readUUID()) }
        let count = try reader.readCount(of: "stamps", minimumSize: 11)
        var stamps = FieldStamps(capacity: count)
        var previous: String?
        for _ in 0..<count {
            let field = try reader.readString()
            let replicaIndex = try reader.readVarint()
            guard replicaIndex < UInt64(replicas.count) else { throw reader.failure("replica \(replicaIndex) of \(replicas.count)") }
            let hlc = HLC(rawValue: try reader.readFixed64())
            let stamp = Stamp(hlc: hlc, replica: replicas[Int(replicaIndex)], seq: try reader.readVarint())
            // Encoded in name order (``encode(_:)``), so a name after the one before is new.
            if let previous, field <= previous { stamps[field] = stamp } else { stamps.appendNew(field, stamp) }
            previous = field
        }
        guard reader.isAtEnd else { throw reader.failure("\(reader.remaining) bytes follow the stamps") }
        return stamps
    }
}

/// The stamps of an object's attributes: a few entries, searched by name.
///
/// An array, not a dictionary: an entity has a handful of attributes, and comparing a few short
/// names costs less than hashing one.
struct FieldStamps: Sendable, Equatable {
    private(set) var entries: [(field: String, stamp: Stamp)] = []

    init() {}

    init(capacity: Int) {
        entries.reserveCapacity(capacity)
    }

    var isEmpty: Bool { entries.isEmpty }

    subscript(field: String) -> Stamp? {
        get {
            for entry in entries where entry.field == field { return entry.stamp }
            return nil
        }
        set {
            if let index = entries.firstIndex(where: { $0.field == field }) {
                if let newValue { entries[index].stamp = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                entries.append((field, newValue))
            }
        }
    }

    /// Adds the stamp of a field that has none yet.
    fileprivate mutating func appendNew(_ field: String, _ stamp: Stamp) {
        entries.append((field, stamp))
    }

    /// The entries in field-name order, so equal stamps encode to equal bytes on every replica.
    var sortedEntries: [(field: String, stamp: Stamp)] {
        entries.sorted { $0.field < $1.field }
    }

    /// Takes every stamp of `other`, replacing this one's of the same attributes.
    mutating func merge(_ other: FieldStamps) {
        for entry in other.entries { self[entry.field] = entry.stamp }
    }

    static func == (lhs: FieldStamps, rhs: FieldStamps) -> Bool {
        lhs.entries.count == rhs.entries.count && lhs.entries.allSatisfy { rhs[$0.field] == $0.stamp }
    }
}

import Codecs
import Foundation
import LocalStoreCore

/// `_sync_counter`: the exact total of a counter attribute (`@Attribute(merge: .counter)`) while
/// it lies outside its column's range and the row shows the range's bound instead.
///
/// The shown value is the total clamped to the range; keeping the exact total makes it a
/// function of the set of increments applied, not of their order (`Int16.max` + 1 − 1 shows
/// `Int16.max` − 1 + 1 in either order). A row exists only while a counter is saturated. The
/// table is created when a counter first needs it, so stores without saturated counters never
/// have it.
enum CounterTable {
    private static let createStatement = """
        CREATE TABLE IF NOT EXISTS _sync_counter (entity TEXT NOT NULL, id BLOB NOT NULL, attribute TEXT NOT NULL,
            total TEXT NOT NULL, PRIMARY KEY (entity, id, attribute)) WITHOUT ROWID
        """

    /// Removes the totals of the objects in `table` (columns `entity, id`).
    static func remove(objectsIn table: String, on connection: SQLiteConnection) throws {
        guard try exists(on: connection) else { return }
        try connection.execute("DELETE FROM _sync_counter WHERE (entity, id) IN (SELECT entity, id FROM \(table))")
    }

    /// The stored exact total of `object`'s counter `attribute`, if it is saturated.
    static func total(of object: ObjectKey, _ attribute: String, on connection: SQLiteConnection) throws -> Int128? {
        let rows = try connection.rows("SELECT total FROM _sync_counter WHERE entity = ? AND id = ? AND attribute = ?",
                                       [.text(object.entity), object.id.storedValue, .text(attribute)])
        guard case .text(let text)? = rows.first?.first else { return nil }
        guard let total = Int128(text) else {
            throw SyncError(.schemaMismatch, "the stored total '\(text)' of the counter \(object.entity).\(attribute) of \(object.id.storageText) is not an integer")
        }
        return total
    }

    /// Records `total` as the exact value of the counter, or removes the record when `total` is nil.
    static func setTotal(_ total: Int128?, of object: ObjectKey, _ attribute: String, on connection: SQLiteConnection) throws {
        let key: [SQLValue] = [.text(object.entity), object.id.storedValue, .text(attribute)]
        guard let total else {
            if try exists(on: connection) {
                _ = try connection.rows("DELETE FROM _sync_counter WHERE entity = ? AND id = ? AND attribute = ?", key)
            }
            return
        }
        try connection.execute(createStatement)
        _ = try connection.rows("INSERT OR REPLACE INTO _sync_counter (entity, id, attribute, total) VALUES (?, ?, ?, ?)",
                                key + [.text(String(total))])
    }

    /// Whether the table exists: until a counter first saturates, no total is stored.
    static func exists(on connection: SQLiteConnection) throws -> Bool {
        try !connection.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sync_counter'").isEmpty
    }

    /// The range a counter stored in a column of `type` shows.
    static func range(of type: AttributeType) -> ClosedRange<Int128> {
        switch type {
        case .int16: Int128(Int16.min)...Int128(Int16.max)
        case .int32: Int128(Int32.min)...Int128(Int32.max)
        default: Int128(Int64.min)...Int128(Int64.max)
        }
    }
}

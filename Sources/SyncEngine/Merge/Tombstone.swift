import Codecs
import Foundation
import LocalStoreCore

/// The column values of a deleted object, kept in ``ObjectMetadataTable`` so that a delete
/// voided by a deny rule can bring the object back with its last values, and so that
/// ``SyncReplica/lastKnownRecord(_:id:)`` can show what was deleted.
///
/// The text is a JSON object from column name to value (the form `SQLValue`'s `Codable`
/// conformance has, keys sorted), written and read with SyncKit's own JSON code.
enum Tombstone {
    static func json(_ columns: [String: SQLValue]) throws -> String {
        var writer = JSONWriter(escapingSlashes: true)
        writer.beginObject()
        for column in columns.keys.sorted() {
            writer.writeKey(column)
            try writer.writeSQLValue(columns[column]!)
        }
        writer.endObject()
        return writer.string
    }

    /// The columns stored in `text`; `object` names the deleted object in errors.
    static func columns(_ text: String, of object: String) throws -> [String: SQLValue] {
        do {
            return try JSONReader.read(text) { reader in
                var columns: [String: SQLValue] = [:]
                try reader.beginObject()
                while let key = try reader.nextKey() {
                    let name = key.string
                    columns[name] = try JSONReadError.at(.key(name)) { try reader.readSQLValue() }
                }
                return columns
            }
        } catch {
            throw SyncError(.notSyncable, "the stored values of deleted \(object) are damaged: \(error)")
        }
    }
}

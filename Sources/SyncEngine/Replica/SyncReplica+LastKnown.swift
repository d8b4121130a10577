import Codecs
import Foundation
import LocalStoreCore

extension SyncReplica {
    /// The object `id` of `entity` as this replica last knew it: the stored record while it
    /// exists, and after it was deleted (here or by a merge) its attribute values at deletion,
    /// with no relationship members. `nil` if this replica never had the object.
    ///
    /// Conflict journal entries name objects by ID only; this is how an app says *what* a merge
    /// deleted, for example the title of a todo that a cascade removed:
    ///
    /// ```swift
    /// for entry in try replica.conflicts() where entry.kind == .cascadedDelete {
    ///     let title = try replica.lastKnownRecord(entry.entity, id: entry.objectID)?.value(of: "title")
    ///     print("deleted by a concurrent delete:", title ?? .null)
    /// }
    /// ```
    public func lastKnownRecord(_ entity: String, id: UUID) throws -> Record? {
        if let record = try record(entity, id: id) { return record }
        guard let description = store.schemaDocument.entity(named: entity) else {
            throw SyncError(.schemaMismatch, "the schema has no entity '\(entity)'")
        }
        return try withConnection { connection in
            guard let json = try ObjectMetadataTable.tombstone(of: ObjectKey(entity: entity, id: id), on: connection) else { return nil }
            let columns = try Tombstone.columns(json, of: "\(entity) \(id)")
            return Record(
                entity: entity, id: id,
                attributes: description.attributes.map { ($0.name, $0.columns.map { columns[$0.name] ?? .null }) },
                relationships: description.relationships.map { ($0.name, []) })
        }
    }
}

extension Record {
    /// The value of a single-column attribute (the first column of a composition); `nil` if the
    /// record has no attribute of that name.
    public func value(of attribute: String) -> SQLValue? {
        attributes.first { $0.name == attribute }?.values.first
    }
}

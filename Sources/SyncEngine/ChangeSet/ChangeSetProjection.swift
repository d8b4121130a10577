import Foundation
import LocalStoreCore

/// The part of a change set that a replica's schema knows: what a client on an older version of
/// the app applies of a change set written by a newer one.
///
/// A dataset's schema grows while older apps keep syncing (CONTRACT.md §8). An operation is
/// *unknown* to a schema when it names an entity, attribute or relationship the schema does not
/// have, or writes a value the schema has no room for although a newer schema does: `NULL` in an
/// attribute a newer schema made optional, a raw value of a case a newer schema added. A replica
/// applies the rest and keeps the whole change set (it is stored, relayed and served as it was
/// received); when the store is opened with a schema that knows more, ``SyncReplica`` merges its
/// history again so that everything kept takes effect (``SyncReplica/keptChangeSetCount()``).
///
/// A value of the wrong type (text in an integer column) is not a newer schema's and stays an
/// error (``ChangeSetValidator``).
struct ChangeSetProjection: Sendable {
    let schema: SyncSchema
    let validator: ChangeSetValidator

    /// The change set without the operations `schema` does not know, or `nil` when it knows all
    /// of them (the common case, which allocates nothing).
    func knownPart(of changeSet: ChangeSet) -> ChangeSet? {
        guard let first = changeSet.operations.firstIndex(where: { !knows($0) }) else { return nil }
        var known = changeSet
        known.operations = Array(changeSet.operations[..<first])
        known.operations.reserveCapacity(changeSet.operations.count - 1)
        for operation in changeSet.operations[(first + 1)...] where knows(operation) {
            known.operations.append(operation)
        }
        return known
    }

    /// Whether `schema` can apply `operation`.
    func knows(_ operation: Operation) -> Bool {
        switch operation {
        case .create(let entity, _), .delete(let entity, _, _):
            return schema.entity(entity) != nil
        case .set(let entity, _, let attribute, let values):
            guard let known = validator.attribute(entity, attribute) else { return false }
            return known.columns.count != values.count || zip(known.columns, values).allSatisfy { column, value in
                // A value of the wrong type is refused by validation, not kept.
                column.accepts(value) || !(value.isNull || column.fitsType(value))
            }
        case .increment(let entity, _, let attribute, _):
            return schema.entity(entity)?.attribute(attribute) != nil
        case .link(let entity, _, let relationship, _), .unlink(let entity, _, let relationship, _, _),
             .position(let entity, _, let relationship, _, _):
            return schema.entity(entity)?.relationship(relationship) != nil
        }
    }
}

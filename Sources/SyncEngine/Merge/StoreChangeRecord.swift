import Foundation
import LocalStoreCore

/// What a merge or record edit changed in the entity tables, object by object, gathered while
/// materializing so that the store's change subscribers learn exactly what appeared,
/// disappeared or was rewritten.
struct StoreChangeRecord {
    /// Objects whose rows were created.
    var createdRows: Set<ObjectKey> = []
    /// Objects whose rows were removed.
    var removedRows: Set<ObjectKey> = []
    /// Objects whose stored relationships (foreign keys, join rows or positions) were rewritten.
    var rewrittenRelationships: Set<ObjectKey> = []
    /// Objects with a row whose attributes remote writes set, with the attributes' names.
    var attributeNames: [ObjectKey: Set<String>] = [:]

    /// The change as the store publishes it.
    func storeChange(origin: StoreChange.Origin) -> StoreChange {
        var change = StoreChange(origin: origin)
        for object in createdRows {
            change.inserted.insert(object.id)
            change.setEntity(object.entity, of: object.id)
        }
        for object in removedRows {
            change.deleted.insert(object.id)
            change.setEntity(object.entity, of: object.id)
        }
        for object in rewrittenRelationships.union(attributeNames.keys)
        where !createdRows.contains(object) && !removedRows.contains(object) {
            change.updated.insert(object.id)
            change.setEntity(object.entity, of: object.id)
            change.changedProperties[object.id] = attributeNames[object] ?? []
        }
        return change
    }
}

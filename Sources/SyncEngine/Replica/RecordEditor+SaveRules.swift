import Foundation
import LocalStoreCore

extension RecordEditor {
    /// Refuses the commit's edits where a context's save would refuse them: a `.unique` value
    /// another object holds, a relationship outside its `minCount`/`maxCount`. Delete rules are
    /// applied by ``delete(_:id:)`` itself.
    ///
    /// Runs after the edits are materialized, inside the commit's transaction, reading the rows
    /// through ``EntityTable``: what is checked is what the app would see, and throwing rolls the
    /// whole commit back. Like a save, it checks only what the edits touch: the attributes they
    /// set, the relationships they link or unlink on either side, and everything of the objects
    /// they create.
    func checkSaveRules() throws {
        var attributes: [ObjectKey: Set<String>] = [:]
        var relationships: [ObjectKey: Set<String>] = [:]
        var created: Set<ObjectKey> = []
        func touchRelationship(_ entity: String, _ id: UUID, _ name: String, target: UUID) {
            relationships[ObjectKey(entity: entity, id: id), default: []].insert(name)
            guard let relationship = schema.entity(entity)?.relationship(name) else { return }
            relationships[ObjectKey(entity: relationship.target, id: target), default: []].insert(relationship.inverse)
        }
        for operation in operations {
            switch operation {
            case .create(let entity, let id):
                created.insert(ObjectKey(entity: entity, id: id))
            case .set(let entity, let id, let attribute, _), .increment(let entity, let id, let attribute, _):
                attributes[ObjectKey(entity: entity, id: id), default: []].insert(attribute)
            case .link(let entity, let id, let relationship, let target), .unlink(let entity, let id, let relationship, let target, _):
                touchRelationship(entity, id, relationship, target: target)
            case .delete, .position:
                continue
            }
        }
        for object in Set(attributes.keys).union(relationships.keys).union(created).sorted() {
            guard let entity = schema.document.entity(named: object.entity),
                  let row = schema.entity(object.entity)?.rows, try row.containsRow(object.id, on: engine.connection) else { continue }
            let isNew = created.contains(object)
            for relationship in entity.relationships where relationship.minCount != nil || relationship.maxCount != nil {
                guard isNew || relationships[object]?.contains(relationship.name) == true else { continue }
                let members = try StoredRelationships.members(of: object, relationship, entity: entity, on: engine.connection)
                // Members this edit linked that the relationship's maxCount hides still count, as
                // they would in a context, where the app sees what it added.
                let hidden = engine.countChecks.hiddenByMaxCount[object]?[relationship.name] ?? 0
                try SaveRules.checkCount(members.count + hidden, entity: entity.name, relationship: relationship.name,
                                         minCount: relationship.minCount, maxCount: relationship.maxCount, of: object.id)
            }
            // Every uniqueness key (`.unique` attribute or `#Unique` key) a created object has, or
            // whose attributes the edits set, is checked as a save checks it.
            let keys = entity.uniqueKeys.filter { key in isNew || key.attributeNames.contains { attributes[object]?.contains($0) == true } }
            guard !keys.isEmpty, let values = try row.attributeValues(of: object.id, on: engine.connection) else { continue }
            let columnValues = Dictionary(uniqueKeysWithValues: zip(row.attributeColumns, values))
            for key in keys {
                try key.checkNoOtherObject(entity: entity.name, table: entity.table, objectID: object.id,
                                           values: key.columns.map { columnValues[$0] ?? .null }, connection: engine.connection)
            }
        }
    }
}

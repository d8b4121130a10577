import Codecs
import Foundation
import LocalStoreCore

/// The schema as merging sees it: plain data from the store's ``SchemaDocument``, so the same
/// code serves apps, the `sync` CLI and the server, none of which need the Swift types.
///
/// Every relationship pair has one **canonical side**: edges are recorded from it. It is the
/// to-one side of a one-to-many, the side whose `(entity, name)` sorts first of a one-to-one,
/// and the side that owns the join table of a many-to-many. A **self-inverse** relationship (its
/// own inverse, as `Person.spouse` with `inverse: "spouse"`) is its own canonical side; its edges
/// are unordered pairs, recorded from the object whose identifier sorts first (``canonicalPair(_:_:)``).
///
/// Entities, attributes and relationships are classes: merging looks one up for every operation,
/// and copying a struct of many strings and arrays retained and released each of them.
struct SyncSchema: Sendable {
    final class Attribute: Sendable {
        let name: String
        let columns: [String]
        /// Where the columns are among the entity's attribute columns (`EntityTable.attributeColumns` of ``Entity/rows``).
        let columnOffsets: [Int]
        /// How concurrent writes merge (`@Attribute(merge:)`).
        let policy: AttributeMergePolicy.Kind
        /// The type of the first column: a counter saturates at its range.
        let columnType: AttributeType
        /// A `.custom` policy's merge over column values, where the Swift type is known (apps);
        /// `nil` on syncd and the `sync` CLI.
        let customMerge: (@Sendable ([SQLValue], [SQLValue]) -> [SQLValue]?)?

        init(name: String, columns: [String], firstColumnOffset: Int, policy: AttributeMergePolicy.Kind = .lastWriterWins,
             columnType: AttributeType = .int, customMerge: (@Sendable ([SQLValue], [SQLValue]) -> [SQLValue]?)? = nil) {
            self.name = name
            self.columns = columns
            columnOffsets = Array(firstColumnOffset..<(firstColumnOffset + columns.count))
            self.policy = policy
            self.columnType = columnType
            self.customMerge = customMerge
        }
    }

    /// A relationship's entity and name, as a key.
    struct RelationshipKey: Hashable, Sendable {
        let entity: String
        let name: String
    }

    final class Relationship: Sendable {
        let entity: String
        let name: String
        let kind: RelationshipKind
        let target: String
        let inverse: String
        let deleteRule: DeleteRule
        let isCanonical: Bool
        /// Whether the relationship is its own inverse: an edge joins two objects of one entity
        /// symmetrically, and each of them sees the other through this same relationship.
        let isSelfInverse: Bool
        let storage: RelationshipStorage
        /// The fewest members a save accepts; a merge journals going below it (CONTRACT.md §3.10).
        let minCount: Int?
        /// The most members a save accepts; a merge shows only that many (CONTRACT.md §3.10).
        let maxCount: Int?
        /// The relationship's entity and name, as a key.
        var key: RelationshipKey { RelationshipKey(entity: entity, name: name) }

        init(entity: String, name: String, kind: RelationshipKind, target: String, inverse: String, deleteRule: DeleteRule,
             isCanonical: Bool, storage: RelationshipStorage, minCount: Int? = nil, maxCount: Int? = nil) {
            self.entity = entity
            self.name = name
            self.kind = kind
            self.target = target
            self.inverse = inverse
            self.deleteRule = deleteRule
            self.isCanonical = isCanonical
            isSelfInverse = entity == target && name == inverse
            self.storage = storage
            self.minCount = minCount
            self.maxCount = maxCount
        }
    }

    final class Entity: Sendable {
        let name: String
        let table: String
        let attributes: [Attribute]
        let relationships: [Relationship]
        let attributeIndex: [String: Int]
        let relationshipIndex: [String: Int]
        /// The SQL of the entity's table, built once per schema; it also names the table's columns.
        let rows: EntityTable
        /// The uniqueness keys (`.unique` attributes, then `#Unique` keys) that merges resolve (CONTRACT.md §3.8).
        let uniqueKeys: [UniqueKey]
        /// Each attribute column's default value, in `EntityTable.attributeColumns` order: what a
        /// created object holds in a column its change set does not set (one written by an older
        /// app, whose schema lacks the attribute).
        let defaultColumnValues: [SQLValue]

        init(name: String, table: String, attributes: [Attribute], relationships: [Relationship], rows: EntityTable,
             uniqueKeys: [UniqueKey] = [], defaultColumnValues: [SQLValue] = []) {
            self.name = name
            self.defaultColumnValues = defaultColumnValues
            self.uniqueKeys = uniqueKeys
            self.table = table
            self.attributes = attributes
            self.relationships = relationships
            attributeIndex = Dictionary(uniqueKeysWithValues: attributes.enumerated().map { ($1.name, $0) })
            relationshipIndex = Dictionary(uniqueKeysWithValues: relationships.enumerated().map { ($1.name, $0) })
            self.rows = rows
        }

        func attribute(_ name: String) -> Attribute? { attributeIndex[name].map { attributes[$0] } }

        /// The values of each attribute, in schema order, from a row's attribute columns (in
        /// `EntityTable.attributeColumns` order).
        func valuesByAttribute(_ attributeColumnValues: ArraySlice<SQLValue>) -> [(name: String, values: [SQLValue])] {
            attributes.map { attribute in
                (attribute.name, attribute.columnOffsets.map { attributeColumnValues[attributeColumnValues.startIndex + $0] })
            }
        }
        func relationship(_ name: String) -> Relationship? { relationshipIndex[name].map { relationships[$0] } }
    }

    let document: SchemaDocument
    private let entitiesByName: [String: Entity]
    /// Entities in document order.
    let entities: [Entity]
    /// Whether some entity has a uniqueness key: merges skip the uniqueness work otherwise.
    let hasUniqueKeys: Bool

    /// The schema of `document`; `customMerges` holds, by entity and attribute, the `.custom`
    /// merges of the Swift types where the caller has them.
    init(_ document: SchemaDocument, customMerges: [String: [String: @Sendable ([SQLValue], [SQLValue]) -> [SQLValue]?]] = [:]) {
        self.document = document
        var entities: [Entity] = []
        for entity in document.entities {
            let relationships = entity.relationships.map { relationship -> Relationship in
                let inverse = document.entity(named: relationship.target)?.relationships.first { $0.name == relationship.inverse }
                return Relationship(
                    entity: entity.name, name: relationship.name, kind: relationship.kind, target: relationship.target,
                    inverse: relationship.inverse, deleteRule: relationship.deleteRule,
                    isCanonical: SyncSchema.isCanonical(relationship, of: entity.name, inverseKind: inverse?.kind ?? .toMany),
                    storage: relationship.storage, minCount: relationship.minCount, maxCount: relationship.maxCount)
            }
            entities.append(Entity(
                name: entity.name, table: entity.table,
                attributes: entity.attributes.reduce(into: []) { attributes, attribute in
                    attributes.append(Attribute(name: attribute.name, columns: attribute.columns.map(\.name),
                                                firstColumnOffset: attributes.reduce(0) { $0 + $1.columns.count },
                                                policy: attribute.mergeKind, columnType: attribute.columns.first?.type ?? .int,
                                                customMerge: customMerges[entity.name]?[attribute.name]))
                },
                relationships: relationships, rows: EntityTable(entity), uniqueKeys: entity.uniqueKeys,
                defaultColumnValues: entity.attributes.flatMap(\.defaultValues)))
        }
        self.entities = entities
        hasUniqueKeys = entities.contains { !$0.uniqueKeys.isEmpty }
        entitiesByName = Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0) })
    }

    private static func isCanonical(_ relationship: SchemaDocument.Relationship, of entity: String, inverseKind: RelationshipKind) -> Bool {
        if relationship.isSelfInverse(of: entity) { return true }
        switch (relationship.kind, inverseKind) {
        case (.toOne, .toOne): return (entity, relationship.name) < (relationship.target, relationship.inverse)
        case (.toOne, _): return true
        case (_, .toOne): return false
        default: return relationship.storage.ownsJoinTable
        }
    }

    func entity(_ name: String) -> Entity? { entitiesByName[name] }

    /// The entity called `name`, or a schema-mismatch error naming what referred to it.
    func requireEntity(_ name: String, in context: @autoclosure () -> String) throws -> Entity {
        guard let entity = entitiesByName[name] else {
            throw SyncError(.schemaMismatch, "\(context()) names the entity '\(name)', which the schema does not have")
        }
        return entity
    }

    /// The other side of `relationship`.
    func inverse(of relationship: Relationship) -> Relationship? {
        entity(relationship.target)?.relationship(relationship.inverse)
    }

    /// `(canonical relationship, source, target)` for an edge between `object` (on `relationship`'s side) and `member`.
    func canonicalEdge(_ relationship: Relationship, object: UUID, member: UUID) -> (Relationship, source: UUID, target: UUID)? {
        if relationship.isSelfInverse {
            let (source, target) = SyncSchema.canonicalPair(object, member)
            return (relationship, source, target)
        }
        if relationship.isCanonical { return (relationship, object, member) }
        guard let inverse = inverse(of: relationship) else { return nil }
        return (inverse, member, object)
    }

    /// The two ends of a self-inverse edge in the order it is recorded: the identifier that sorts
    /// first (as upper-case text, the same as its 16 bytes) is the source. Both replicas of an
    /// edge added from either end thus name the same `(source, target)`.
    static func canonicalPair(_ first: UUID, _ second: UUID) -> (source: UUID, target: UUID) {
        second.precedesInStorageOrder(first) ? (second, first) : (first, second)
    }
}

import Codecs
import Foundation
import SQLiteDatabase
import Synchronization

/// A store's schema as plain data: what the store file records, what ``ObjectStore/exportSchema()``
/// writes as JSON, and what tools use to work on a store without its Swift types.
///
/// ```json
/// {"entities": [{"name": "Person", "attributes": [{"name": "email", "type": "string", "unique": true, ...}], ...}],
///  "formatVersion": 1, "versionHash": "9f2c…"}
/// ```
public struct SchemaDocument: Codable, Hashable, Sendable {
    /// The version of this document's layout.
    public var formatVersion: Int
    /// SHA-256 of the entities' canonical JSON: equal hashes mean equal schemas.
    public var versionHash: String
    /// The entities, in the order the store was opened with.
    public var entities: [Entity]

    /// One entity: its table, attributes and relationships.
    public struct Entity: Codable, Hashable, Sendable {
        /// The entity's name (the Swift class name).
        public var name: String
        /// The SQLite table that holds its objects, one row each.
        public var table: String
        /// Its stored attributes, in declaration order.
        public var attributes: [Attribute]
        /// Its relationships, in declaration order.
        public var relationships: [Relationship]
        /// The entity's name before a rename (`@Entity(originalName:)`); omitted when it has none.
        public var originalName: String?
        /// The `#Unique` keys: each a list of attribute names whose values, together, no two
        /// objects share. Omitted when the entity declares none (single `.unique` attributes are
        /// marked on the attribute), so documents without keys keep their version hash.
        public var uniquenessConstraints: [[String]]? = nil
    }

    /// One stored attribute of an entity.
    public struct Attribute: Codable, Hashable, Sendable {
        /// The property's name.
        public var name: String
        /// The column name (`@Attribute(persistentName:)`, else the property's name); a
        /// `.composition` attribute's columns start with it.
        public var persistentName: String
        /// The attribute's previous name (`@Attribute(originalName:)`): migration renames its column.
        public var originalName: String?
        /// How the value is stored: default, `.raw`, `.codable` or `.composition`.
        public var storage: AttributeStorage
        /// The Swift type as declared, for messages and tools.
        public var swiftType: String
        /// Whether the Swift type is optional.
        public var optional: Bool
        /// Whether the attribute is `.unique`.
        public var unique: Bool
        /// Whether the attribute is `.indexed`.
        public var indexed: Bool
        /// The columns that hold the value: one, or one per field of a `.composition`.
        public var columns: [Column]
        /// The values a new object gets (one per column), used when migration adds the attribute
        /// and by tools that create objects without the Swift types.
        public var defaultValues: [SQLValue]
        /// For a `.raw` attribute whose Swift type is `CaseIterable`: the raw value of each case,
        /// in `allCases` order, the only values its column accepts besides `NULL` (when optional).
        /// Omitted for every other attribute, whose values are checked by column type alone.
        public var rawValues: [SQLValue]?
        /// How concurrent writes merge (`@Attribute(merge:)`); omitted for last writer wins.
        public var merge: AttributeMergePolicy.Kind?
        /// For a `custom` merge, the name of the Swift type whose `merge(_:_:)` joins the values.
        public var mergeType: String?

        /// The merge policy's kind, last writer wins when none is recorded.
        public var mergeKind: AttributeMergePolicy.Kind { merge ?? .lastWriterWins }
    }

    /// One column of an attribute.
    public struct Column: Codable, Hashable, Sendable {
        /// The column's name in the entity's table.
        public var name: String
        /// The type of the values it holds.
        public var type: AttributeType
        /// Whether it may hold `NULL`.
        public var nullable: Bool
    }

    /// One relationship of an entity.
    public struct Relationship: Codable, Hashable, Sendable {
        /// The property's name.
        public var name: String
        /// To-one, to-many or ordered to-many.
        public var kind: RelationshipKind
        /// The name of the entity it points to.
        public var target: String
        /// The name of the relationship on the target that points back.
        public var inverse: String
        /// What deleting an object does to its members.
        public var deleteRule: DeleteRule
        /// The fewest members a save accepts (`@Relationship(minCount:)`), if any.
        public var minCount: Int?
        /// The most members a save accepts (`@Relationship(maxCount:)`), if any.
        public var maxCount: Int?
        /// How the relationship is stored: `foreignKey` (a column of this table, with an optional
        /// position column), `inverseForeignKey` (a column of the target's table) or `joinTable`.
        public var storage: RelationshipStorage
        /// The relationship's name before a rename (`originalName:`); omitted when it has none.
        public var originalName: String?

        /// Whether this relationship of the entity `entity` is its own inverse.
        public func isSelfInverse(of entity: String) -> Bool { target == entity && inverse == name }
    }

    /// The document of the declared entities.
    ///
    /// - Throws: ``StoreError`` `.invalidSchema` when an attribute's default value cannot be
    ///   stored (a `.codable` default JSON cannot express).
    init(_ schema: StoreSchema) throws {
        entities = try schema.entities.map { mapping in
            let prototype = mapping.description.entityType.init(_$materializing: MaterializingToken())
            return Entity(
                name: mapping.name, table: mapping.table,
                attributes: try mapping.description.attributes.map { attribute in
                    var defaults: [SQLValue] = []
                    do {
                        try attribute.accessor.encode(prototype, into: &defaults)
                    } catch {
                        throw StoreError(.invalidSchema, "the default value of \(mapping.name).\(attribute.name) cannot be stored: \(error)",
                                         entity: mapping.name, attribute: attribute.name)
                    }
                    return Attribute(
                        name: attribute.name, persistentName: attribute.persistentName, originalName: attribute.originalName,
                        storage: attribute.storage, swiftType: attribute.swiftType, optional: attribute.isOptional,
                        unique: attribute.isUnique, indexed: attribute.isIndexed,
                        columns: attribute.columns.map { Column(name: $0.name, type: $0.type, nullable: $0.isNullable) },
                        defaultValues: defaults, rawValues: attribute.rawValues,
                        merge: attribute.mergePolicy.kind == .lastWriterWins ? nil : attribute.mergePolicy.kind,
                        mergeType: attribute.mergePolicy.customTypeName)
                },
                relationships: mapping.relationships.map { relationship in
                    let description = relationship.description
                    return Relationship(
                        name: description.name, kind: description.kind, target: description.targetEntityName,
                        inverse: description.inverseName, deleteRule: description.deleteRule,
                        minCount: description.minCount, maxCount: description.maxCount, storage: relationship.storage,
                        originalName: description.originalName)
                },
                originalName: mapping.description.originalName,
                uniquenessConstraints: mapping.description.uniquenessConstraints.isEmpty ? nil : mapping.description.uniquenessConstraints)
        }
        formatVersion = 1
        versionHash = SchemaDocument.hash(of: entities)
    }

    /// SHA-256 of the entities' canonical JSON.
    static func hash(of entities: [Entity]) -> String {
        recentHashes.value(for: entities) {
            SHA256.hexDigest(String(decoding: (try? SchemaDocument.encoder.encode(entities)) ?? Data(), as: UTF8.self))
        }
    }

    // A process sees few schemas (its app's versions, a server's datasets), but every store it
    // opens, every schema it reads back and every push names one, and encoding a schema as JSON
    // costs far more than comparing it: digests and encodings are worth keeping.
    /// The digests of the entity lists this process hashed last.
    private static let recentHashes = RecentResults<[Entity], String>()
    /// The JSON of the documents this process encoded last.
    private static let recentEncodings = RecentResults<SchemaDocument, Data>()

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return encoder
    }()

    /// The document as pretty-printed JSON with sorted keys.
    public func jsonData() throws -> Data {
        try SchemaDocument.recentEncodings.value(for: self) { try SchemaDocument.encoder.encode(self) }
    }

    /// Reads a document from JSON, checking that its `versionHash` matches its entities.
    public init(jsonData: Data) throws {
        do {
            self = try JSONDecoder().decode(SchemaDocument.self, from: jsonData)
        } catch {
            throw StoreError(.invalidSchema, "the schema JSON cannot be read: \(error)")
        }
        let expected = SchemaDocument.hash(of: entities)
        guard versionHash == expected else {
            throw StoreError(.invalidSchema, "the schema JSON's versionHash \(versionHash) does not match its entities (\(expected))")
        }
        for entity in entities {
            for attribute in entity.attributes where attribute.defaultValues.count != attribute.columns.count {
                throw StoreError(.invalidSchema, "\(entity.name).\(attribute.name) has \(attribute.columns.count) column(s) but \(attribute.defaultValues.count) default value(s)",
                                 entity: entity.name, attribute: attribute.name)
            }
            for attribute in entity.attributes where attribute.rawValues != nil && attribute.columns.count != 1 {
                throw StoreError(.invalidSchema, "\(entity.name).\(attribute.name) lists raw values but has \(attribute.columns.count) columns; raw values fit one column",
                                 entity: entity.name, attribute: attribute.name)
            }
        }
    }

    /// The entity called `name`.
    public func entity(named name: String) -> Entity? { entities.first { $0.name == name } }
}

extension SchemaDocument.Entity {
    /// Every column of the entity's table but `id`, in table order: attribute columns, then
    /// foreign keys with their position columns.
    public var columns: [SchemaDocument.Column] {
        var columns = attributes.flatMap(\.columns)
        for relationship in relationships {
            guard case .foreignKey(let column, let positionColumn) = relationship.storage else { continue }
            columns.append(.init(name: column, type: .uuid, nullable: true))
            if let positionColumn { columns.append(.init(name: positionColumn, type: .int, nullable: true)) }
        }
        return columns
    }

    /// The attribute called `name`.
    public func attribute(named name: String) -> SchemaDocument.Attribute? { attributes.first { $0.name == name } }
    /// The relationship called `name`.
    public func relationship(named name: String) -> SchemaDocument.Relationship? { relationships.first { $0.name == name } }
}

/// The results of a computation for the keys it was asked for last, shared by threads.
///
/// Bounded: a server fed with arbitrary schemas must not grow it without end, so it forgets
/// everything once it holds ``limit`` results.
private final class RecentResults<Key: Hashable & Sendable, Result: Sendable>: Sendable {
    private let results = Mutex<[Key: Result]>([:])
    private let limit = 64

    /// The result for `key`, computed by `compute` unless it is known.
    func value(for key: Key, compute: () throws -> Result) rethrows -> Result {
        if let known = results.withLock({ $0[key] }) { return known }
        let result = try compute()
        results.withLock { results in
            if results.count >= limit { results.removeAll(keepingCapacity: true) }
            results[key] = result
        }
        return result
    }
}

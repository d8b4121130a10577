/// The schema of one entity: its name, attributes and relationships, in declaration order.
///
/// `@Entity` generates one per class as `static let _$entity`. The store reads it to
/// create tables, check inverses, migrate, and translate queries.
public final class EntityDescription: Sendable {
    /// The entity name, which is also its table name: the class name.
    public let name: String
    /// The Swift class.
    public let entityType: any PersistentEntity.Type
    /// The name the entity had before a rename (`@Entity(originalName:)`), so migration renames
    /// its table and keeps its objects.
    public let originalName: String?
    /// Stored attributes, in declaration order.
    public let attributes: [AttributeDescription]
    /// Relationships, in declaration order.
    public let relationships: [RelationshipDescription]
    /// The `#Unique` keys, each a list of attribute names whose values, together, no two objects
    /// share (`#Unique<Player>([\.first, \.last], [\.email])` gives `[["first", "last"], ["email"]]`).
    public let uniquenessConstraints: [[String]]
    private let attributeNames: PropertyNameIndex
    private let relationshipNames: PropertyNameIndex

    /// Describes an entity. Called by code `@Entity` generates.
    public init(
        _ entityType: any PersistentEntity.Type, name: String, originalName: String? = nil,
        uniquenessConstraints: [[String]] = [], properties: [PropertyDescription]
    ) {
        self.name = name
        self.uniquenessConstraints = uniquenessConstraints
        self.originalName = originalName
        self.entityType = entityType
        var attributes: [AttributeDescription] = []
        var relationships: [RelationshipDescription] = []
        for property in properties {
            switch property {
            case .attribute(let attribute): attributes.append(attribute)
            case .relationship(let relationship): relationships.append(relationship)
            }
        }
        self.attributes = attributes
        self.relationships = relationships
        attributeNames = PropertyNameIndex(attributes.map(\.name))
        relationshipNames = PropertyNameIndex(relationships.map(\.name))
    }

    /// The attribute called `name`, if any.
    public func attribute(named name: String) -> AttributeDescription? {
        attributeNames.position(of: name).map { attributes[$0] }
    }

    /// The relationship called `name`, if any.
    public func relationship(named name: String) -> RelationshipDescription? {
        relationshipNames.position(of: name).map { relationships[$0] }
    }

    func attributeIndex(named name: String) -> Int? { attributeNames.position(of: name) }
    func relationshipIndex(named name: String) -> Int? { relationshipNames.position(of: name) }

    /// The attribute whose Swift property is at `keyPath` (for example `\Person.name`).
    public func attribute(for keyPath: AnyKeyPath) -> AttributeDescription? {
        attributes.first { $0.keyPath == keyPath }
    }

    /// The relationship whose Swift property is at `keyPath` (for example `\Person.place`).
    public func relationship(for keyPath: AnyKeyPath) -> RelationshipDescription? {
        relationships.first { $0.keyPath == keyPath }
    }

    /// The relationship on the target entity that `relationship` names as its inverse.
    public func inverse(of relationship: RelationshipDescription) -> RelationshipDescription? {
        relationship.targetType._$entity.relationship(named: relationship.inverseName)
    }
}

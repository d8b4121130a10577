/// Makes a final class a persistent entity.
///
/// Every stored `var` becomes an attribute (or, with `@Relationship`, a relationship) whose
/// changes the store tracks; `@Transient` properties are left alone. Each stored property
/// needs an explicit type and a default value (optionals default to `nil`).
///
/// ```swift
/// @Entity final class Author {
///     var name: String = ""
///     @Relationship(inverse: "author", deleteRule: .cascade) var books: [Book] = []
/// }
/// ```
///
/// For each to-many relationship it generates `addTo<Name>(_:)` and `removeFrom<Name>(_:)`,
/// and for ordered ones `insertInto<Name>(_:at:)`.
@attached(member, names: named(_$entityState), named(init), arbitrary)
@attached(memberAttribute)
@attached(extension, conformances: PersistentEntity, names: named(_$entity))
public macro Entity() = #externalMacro(module: "LocalStoreMacros", type: "EntityMacro")

/// Configures a stored attribute of an `@Entity` class.
///
/// ```swift
/// @Attribute(.unique) var email: String = ""
/// @Attribute(storage: .raw) var mood: Mood = .calm
/// @Attribute(persistentName: "nick", originalName: "nickname") var alias: String = ""
/// ```
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_))
public macro Attribute(
    _ options: AttributeOption...,
    storage: AttributeStorage = .default,
    persistentName: String? = nil,
    originalName: String? = nil
) = #externalMacro(module: "LocalStoreMacros", type: "AttributeMacro")

/// Declares a relationship of an `@Entity` class: to-one `T?`, to-many `Set<T>` or ordered `[T]`.
///
/// `inverse` names the property on the other entity that points back, and `deleteRule`
/// says what deleting this object does to its members; both are required.
///
/// ```swift
/// @Relationship(inverse: "books", deleteRule: .nullify) var author: Author?
/// ```
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_))
public macro Relationship(
    inverse: String? = nil,
    deleteRule: DeleteRule? = nil,
    minCount: Int? = nil,
    maxCount: Int? = nil
) = #externalMacro(module: "LocalStoreMacros", type: "RelationshipMacro")

/// Excludes a property of an `@Entity` class from storage. It still needs a default value.
///
/// ```swift
/// @Transient var cache: [String: Int] = [:]
/// ```
@attached(peer)
public macro Transient() = #externalMacro(module: "LocalStoreMacros", type: "TransientMacro")

/// Makes a struct storable inline with `@Attribute(storage: .composition)`: one column per field.
///
/// ```swift
/// @Composition struct GeoPoint { var latitude: Double = 0; var longitude: Double = 0 }
/// ```
@attached(extension, conformances: CompositionValue, names: named(_$compositionFields))
public macro Composition() = #externalMacro(module: "LocalStoreMacros", type: "CompositionMacro")

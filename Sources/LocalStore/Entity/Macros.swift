/// Makes a final class a persistent entity.
///
/// Every stored `var` becomes an attribute (or, with `@Relationship`, a relationship) whose
/// changes the store tracks; `@Transient` properties are left alone. Each stored property
/// needs a type and a default value (optionals default to `nil`).
///
/// ```swift
/// @Entity final class Author {
///     var name: String = ""
///     @Relationship(inverse: "author", deleteRule: .cascade) var books: [Book] = []
/// }
/// ```
///
/// A property whose default value is a plain literal (`var name = ""`, `var count = 0`,
/// `var ratio = -0.5`, `var done = false`) takes the literal's type (`String`, `Int`,
/// `Double`, `Bool`) and needs no annotation.
///
/// For each to-many relationship it generates `addTo<Name>(_:)` and `removeFrom<Name>(_:)`,
/// and for ordered ones `insertInto<Name>(_:at:)`. Unless the class declares an initializer,
/// it generates `init()`.
///
/// An entity class cannot inherit from a superclass. Because a macro sees only syntax, the
/// first type of the inheritance clause counts as a superclass unless it is a well-known
/// protocol or is named like one (`…able`, `…ible`, `…Protocol`, …); conform to other
/// protocols of your own in an extension.
///
/// - Parameter generateInit: With `true`, also generates a memberwise initializer taking every
///   stored attribute and relationship in declaration order, each defaulting to the property's
///   default value (`nil` for optionals without one), in place of `init()`:
///
///   ```swift
///   @Entity(generateInit: true) final class Book {
///       var title: String = ""
///       var pages = 0
///       @Relationship(inverse: "books", deleteRule: .nullify) var author: Author?
///   }
///   // Generates: init(title: String = "", pages: Int = 0, author: Author? = nil)
///   let book = Book(title: "Notes", author: ada)
///   ```
/// - Parameter originalName: The entity's name before a rename (its class name then), so that
///   migration renames its table and keeps its objects and their links:
///   `@Entity(originalName: "Owner") final class Keeper { … }`.
@attached(member, names: named(_$entityState), named(init), arbitrary)
@attached(memberAttribute)
@attached(extension, conformances: PersistentEntity, names: named(_$entity))
public macro Entity(generateInit: Bool = false, originalName: String? = nil) = #externalMacro(module: "LocalStoreMacros", type: "EntityMacro")

/// Configures a stored attribute of an `@Entity` class.
///
/// ```swift
/// @Attribute(.unique) var email: String = ""
/// @Attribute(storage: .raw) var mood: Mood = .calm
/// @Attribute(persistentName: "nick", originalName: "nickname") var alias: String = ""
/// @Attribute(storage: .codable, decodeFailure: .fallbackToDefaultValue) var layout: Layout = Layout()
/// ```
///
/// `decodeFailure` says what a fetch does with a stored value that no longer decodes as the
/// property's type: throw (the default), use the declared default value, or (for optionals)
/// use `nil` with an assertion in debug builds. See ``DecodeFailurePolicy``.
///
/// `merge` says how writes from different replicas combine (see ``AttributeMergePolicy``):
///
/// ```swift
/// @Attribute(.indexed, merge: .max) var highScore: Int = 0   // the largest value written anywhere
/// @Attribute(merge: .counter) var likes: Int = 0             // saves record increments, which add up
/// @Attribute(merge: .custom(TagSet.self)) var tags = TagSet() // TagSet: MergeableValue joins them
/// ```
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_))
public macro Attribute(
    _ options: AttributeOption...,
    storage: AttributeStorage = .default,
    persistentName: String? = nil,
    originalName: String? = nil,
    decodeFailure: DecodeFailurePolicy = .throwError,
    merge: AttributeMergePolicy = .lastWriterWins
) = #externalMacro(module: "LocalStoreMacros", type: "AttributeMacro")

/// The deprecated spelling of `@Attribute(storage:)`; it generates the same code.
@available(*, deprecated, renamed: "Attribute(_:storage:persistentName:originalName:)")
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_))
public macro Attribute(
    _ options: AttributeOption...,
    storageMethod: AttributeStorage,
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
/// @Relationship(inverse: "pets", deleteRule: .nullify, persistentName: "owner_id", originalName: "owner") var keeper: Keeper?
/// ```
///
/// `persistentName` names where the relationship is stored: the foreign-key column of a to-one
/// (its position column, for an ordered inverse, is `<persistentName>_position`), or the whole
/// join table of a many-to-many (give it on one side). `originalName` is the relationship's
/// name before a rename, so that migration moves its column or join table instead of starting empty.
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_))
public macro Relationship(
    inverse: String? = nil,
    deleteRule: DeleteRule? = nil,
    minCount: Int? = nil,
    maxCount: Int? = nil,
    persistentName: String? = nil,
    originalName: String? = nil
) = #externalMacro(module: "LocalStoreMacros", type: "RelationshipMacro")

/// The deprecated spelling of `@Relationship(minCount:maxCount:)`; it generates the same code.
@available(*, deprecated, renamed: "Relationship(inverse:deleteRule:minCount:maxCount:)")
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_))
public macro Relationship(
    inverse: String? = nil,
    deleteRule: DeleteRule? = nil,
    minimumModelCount: Int,
    maximumModelCount: Int? = nil
) = #externalMacro(module: "LocalStoreMacros", type: "RelationshipMacro")

/// The deprecated spelling of `@Relationship(maxCount:)`; it generates the same code.
@available(*, deprecated, renamed: "Relationship(inverse:deleteRule:minCount:maxCount:)")
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_))
public macro Relationship(
    inverse: String? = nil,
    deleteRule: DeleteRule? = nil,
    minCount: Int? = nil,
    maximumModelCount: Int
) = #externalMacro(module: "LocalStoreMacros", type: "RelationshipMacro")

/// Excludes a property of an `@Entity` class from storage. It still needs a default value.
///
/// ```swift
/// @Transient var cache: [String: Int] = [:]
/// ```
@attached(peer)
public macro Transient() = #externalMacro(module: "LocalStoreMacros", type: "TransientMacro")

/// The deprecated spelling of `@Transient`; it generates the same code.
@available(*, deprecated, renamed: "Transient")
@attached(peer)
public macro Ignore() = #externalMacro(module: "LocalStoreMacros", type: "TransientMacro")

/// Makes a struct storable inline with `@Attribute(storage: .composition)`: one column per field.
///
/// ```swift
/// @Composition struct GeoPoint { var latitude: Double = 0; var longitude: Double = 0 }
/// ```
@attached(extension, conformances: CompositionValue, names: named(_$compositionFields))
public macro Composition() = #externalMacro(module: "LocalStoreMacros", type: "CompositionMacro")

// The schema `@Entity` generates lists a property without `@Relationship` as an attribute.
// When its type is an optional entity, this overload is the only one that matches, and the type
// checker reports its message instead of "requires that 'Tag' conform to 'AttributeValue'".
extension PropertyDescription {
    /// Not available: a to-one reference to another entity is a relationship.
    @available(*, unavailable, message: "@Entity: a property whose type is an entity is a relationship; declare it with @Relationship(inverse: \"…\", deleteRule: .nullify), or mark it @Transient")
    public static func attribute<Root: PersistentEntity, Target: PersistentEntity>(
        _ name: String, keyPath: KeyPath<Root, Target?> & Sendable,
        get: @escaping @Sendable (Root) -> Target?, set: @escaping @Sendable (Root, Target?) -> Void,
        options: [AttributeOption] = [], persistentName: String? = nil, originalName: String? = nil
    ) -> PropertyDescription {
        fatalError("unavailable")
    }
}


/// Declares uniqueness keys of an `@Entity`: for each key, no two objects may hold equal values
/// of all its properties. Write it inside the entity's body, once, listing every key:
///
/// ```swift
/// @Entity final class Player {
///     #Unique<Player>([\.first, \.last], [\.email])
///     var first: String = ""
///     var last: String = ""
///     var email: String = ""
/// }
/// ```
///
/// Each key lists stored attributes (not relationships). A key in which any value is `nil` never
/// collides, as in SQL. `ObjectContext.save()` refuses an object that shares a key with another
/// (`StoreError` `.uniqueViolation` naming the entity, the key's properties, the values and the
/// other object); merges of synced replicas keep the object created first and redirect the
/// other's references to it (see CONTRACT.md). A single-property key is the same as
/// `@Attribute(.unique)`.
@freestanding(declaration, names: named(_$uniquenessConstraints))
public macro Unique<T>(_ constraints: [PartialKeyPath<T>]...) = #externalMacro(module: "LocalStoreMacros", type: "UniqueMacro")

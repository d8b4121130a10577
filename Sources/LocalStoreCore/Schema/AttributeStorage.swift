/// How an attribute's Swift value is stored in SQLite.
///
/// ```swift
/// @Attribute(storage: .raw) var mood: Mood = .calm          // the raw value in one column
/// @Attribute(storage: .codable) var prefs: Prefs? = nil     // JSON text, so json_extract works
/// @Attribute(storage: .composition) var location: GeoPoint? // one column per field
/// ```
public enum AttributeStorage: String, Hashable, Sendable, Codable {
    /// The type is an ``AttributeValue`` and maps to one column.
    case `default`
    /// A `RawRepresentable` type stored as its raw value.
    case raw
    /// A `Codable` type stored as JSON text.
    case codable
    /// A ``CompositionValue`` (declared with `@Composition`) stored as one column per field.
    case composition
}

/// Options of an attribute, given to `@Attribute`.
public enum AttributeOption: String, Hashable, Sendable, Codable {
    /// No two objects of the entity may hold the same value; checked on `save()`.
    case unique
    /// The column gets an index, which speeds up queries that filter or sort on it.
    case indexed
}

/// One column an attribute occupies, relative to the attribute.
public struct ColumnShape: Hashable, Sendable {
    /// Appended to the attribute's persistent name with `_` (composition fields); `nil` for the single column of other storages.
    public var suffix: String?
    /// What the column holds.
    public var type: AttributeType
    /// Whether the column may hold `NULL`.
    public var isNullable: Bool
}

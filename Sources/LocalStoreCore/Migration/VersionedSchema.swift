/// One release of an app's model: its entity types and a version number. A
/// ``SchemaMigrationPlan`` lists the versions in order and how to go from each to the next.
///
/// Declare each version's entities inside the version's type, so that the types of every
/// version can exist side by side; an entity keeps its class name across versions (the name
/// is the table), or declares `@Entity(originalName:)` when it is renamed.
///
/// ```swift
/// enum NotesV1: VersionedSchema {
///     static let versionIdentifier = SchemaVersionIdentifier(1, 0, 0)
///     static let models: [any PersistentEntity.Type] = [Note.self]
///     @Entity final class Note { var title = ""; var points = "0" }
/// }
/// ```
public protocol VersionedSchema: SendableMetatype {
    /// This version's number; the versions of a plan's ``SchemaMigrationPlan/schemas`` increase.
    static var versionIdentifier: SchemaVersionIdentifier { get }
    /// The entity types of this version, as ``ObjectStore/init(path:entities:)`` takes them.
    static var models: [any PersistentEntity.Type] { get }
}

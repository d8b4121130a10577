/// How a store file moves from each version of an app's model to the next: the versions in
/// order, and one ``MigrationStage`` between each two adjacent versions.
///
/// ``ObjectStore/init(path:migrationPlan:)`` opens a store with the last version of
/// ``schemas`` and runs the stages from the version the file holds.
///
/// ```swift
/// enum NotesMigrationPlan: SchemaMigrationPlan {
///     static let schemas: [any VersionedSchema.Type] = [NotesV1.self, NotesV2.self, NotesV3.self]
///     static let stages: [MigrationStage] = [
///         .custom(fromVersion: NotesV1.self, toVersion: NotesV2.self, willMigrate: nil, didMigrate: { context in
///             for note in try context.fetchAll(NotesV2.Note.self) { note.wordCount = note.title.split(separator: " ").count }
///         }),
///         .lightweight(fromVersion: NotesV2.self, toVersion: NotesV3.self),
///     ]
/// }
/// ```
public protocol SchemaMigrationPlan: SendableMetatype {
    /// Every version of the model, oldest first, with strictly increasing
    /// ``VersionedSchema/versionIdentifier``s; the last one is the store's model.
    static var schemas: [any VersionedSchema.Type] { get }
    /// For each two adjacent versions of ``schemas``, the stage from the first to the second, in order.
    static var stages: [MigrationStage] { get }
}

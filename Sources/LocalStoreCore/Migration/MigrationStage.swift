/// One step of a ``SchemaMigrationPlan``: from a version of the model to the next.
///
/// A lightweight stage changes the file as ``ObjectStore/init(path:entities:)`` does (new
/// entities, attributes and relationships, renames through `originalName`, dropped
/// attributes) and refuses a change of an attribute's type. A custom stage runs code around
/// that step, and may change an attribute's type: the attribute's column is then replaced and
/// holds its default value until `didMigrate` writes the converted values.
///
/// ```swift
/// .custom(fromVersion: NotesV1.self, toVersion: NotesV2.self,
///         willMigrate: { context in /* read the NotesV1 objects, keep what didMigrate needs */ },
///         didMigrate: { context in /* write the NotesV2 objects */ })
/// ```
public enum MigrationStage: Sendable {
    /// Migrates the file from `fromVersion` to `toVersion` without running code; a change of an
    /// attribute's type throws ``StoreError/Code/migrationImpossible``.
    ///
    /// ```swift
    /// .lightweight(fromVersion: NotesV2.self, toVersion: NotesV3.self)
    /// ```
    case lightweight(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type)
    /// Runs `willMigrate` on a context of `fromVersion`'s models, then the lightweight step
    /// (replacing the column of any attribute whose type changed), then `didMigrate` on a context
    /// of `toVersion`'s models. Each context's unsaved changes are saved when its closure returns.
    ///
    /// ```swift
    /// .custom(fromVersion: NotesV1.self, toVersion: NotesV2.self, willMigrate: nil, didMigrate: { context in
    ///     for note in try context.fetchAll(NotesV2.Note.self) { note.points = 1 }
    /// })
    /// ```
    case custom(
        fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type,
        willMigrate: (@Sendable (ObjectContext) throws -> Void)?, didMigrate: (@Sendable (ObjectContext) throws -> Void)?)

    /// The version this stage starts from.
    public var fromVersion: any VersionedSchema.Type {
        switch self {
        case .lightweight(let from, _), .custom(let from, _, _, _): from
        }
    }

    /// The version this stage ends at.
    public var toVersion: any VersionedSchema.Type {
        switch self {
        case .lightweight(_, let to), .custom(_, let to, _, _): to
        }
    }

    /// The stage as `1.0.0 → 2.0.0`, as errors name it.
    var name: String { "\(fromVersion.versionIdentifier) → \(toVersion.versionIdentifier)" }
}

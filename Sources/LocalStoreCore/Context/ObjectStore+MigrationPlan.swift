extension ObjectStore {
    /// Opens or creates the store at `path` for the last version of `migrationPlan`'s schemas,
    /// running the plan's stages from the version the file holds.
    ///
    /// The file's version is the one whose schema matches the schema the file records. A new
    /// file is created at the last version; a file at the last version opens without running any
    /// stage. A file at an earlier version goes through the stages from its version to the last,
    /// in order, on a copy of the file; the copy replaces the file only when every stage
    /// succeeded, so a failing stage leaves the file as it was. A file whose schema is none of
    /// the plan's versions gets the lightweight migration ``init(path:entities:)`` does.
    ///
    /// Stages run before anything else can use the file: open it before any other connection
    /// to it (a sync replica, another store) is open.
    ///
    /// Throws ``StoreError`` with `.invalidSchema` for a plan whose versions do not increase,
    /// whose stages do not go from each version to the next in order, or with two versions of
    /// the same schema. A failing stage throws its error with the stage, and the part of it that
    /// failed, at the start of the message (`migration stage 1.0.0 → 2.0.0, didMigrate: …`),
    /// keeping the entity, attribute and object it names; an error of another type thrown by a
    /// closure becomes `.migrationFailed`.
    ///
    /// ```swift
    /// let store = try ObjectStore(path: "notes.sqlite", migrationPlan: NotesMigrationPlan.self)
    /// let notes = try store.makeContext().fetchAll(NotesV2.Note.self)
    /// ```
    public convenience init(path: String, migrationPlan: any SchemaMigrationPlan.Type) throws {
        let migration = try StagedMigration(plan: migrationPlan, path: path)
        try migration.run()
        try self.init(path: path, entities: migration.models)
    }
}

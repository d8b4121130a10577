import Foundation
import SQLiteDatabase
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs the stages of a ``SchemaMigrationPlan`` on a store file: finds the version the file
/// holds, runs the stages from it to the last version on a copy of the file, and replaces the
/// file by the copy only when every stage succeeded.
struct StagedMigration {
    let path: String
    let versions: [any VersionedSchema.Type]
    /// Each version's schema, as a store of its models records it.
    let documents: [SchemaDocument]
    let stages: [MigrationStage]

    /// The plan's versions and stages, after checking that the versions increase, that each
    /// stage goes from a version to the next in order, and that no two versions have the same schema.
    init(plan: any SchemaMigrationPlan.Type, path: String) throws {
        self.path = path
        versions = plan.schemas
        stages = plan.stages
        func invalid(_ message: String) -> StoreError {
            StoreError(.invalidSchema, "the migration plan \(plan) \(message)", path: path)
        }
        guard !versions.isEmpty else { throw invalid("lists no schemas") }
        for (earlier, later) in zip(versions, versions.dropFirst()) where earlier.versionIdentifier >= later.versionIdentifier {
            throw invalid("lists version \(later.versionIdentifier) after \(earlier.versionIdentifier); schemas must be in strictly increasing order")
        }
        for (index, stage) in stages.enumerated() {
            guard index + 1 < versions.count else {
                throw invalid("has a stage \(stage.name) after the stage to its last version \(versions[versions.count - 1].versionIdentifier)")
            }
            let expectedFrom = versions[index], expectedTo = versions[index + 1]
            guard ObjectIdentifier(stage.fromVersion) == ObjectIdentifier(expectedFrom), ObjectIdentifier(stage.toVersion) == ObjectIdentifier(expectedTo) else {
                throw invalid("has the stage \(stage.name) where the stage from \(expectedFrom.versionIdentifier) to \(expectedTo.versionIdentifier) belongs; each stage goes from a version of schemas to the next, in order")
            }
        }
        if stages.count + 1 < versions.count {
            throw invalid("has no stage from \(versions[stages.count].versionIdentifier) to \(versions[stages.count + 1].versionIdentifier)")
        }
        documents = try versions.map { version in
            do {
                return try SchemaDocument(StoreSchema(types: version.models))
            } catch var error as StoreError {
                error.message = "version \(version.versionIdentifier): \(error.message)"
                error.path = path
                throw error
            }
        }
        for (index, document) in documents.enumerated() {
            if let same = documents[..<index].firstIndex(where: { $0.versionHash == document.versionHash }) {
                throw invalid("has versions \(versions[same].versionIdentifier) and \(versions[index].versionIdentifier) with the same schema; a store file cannot tell which of them it holds")
            }
        }
    }

    /// The last version's entity types: the store's model.
    var models: [any PersistentEntity.Type] { versions[versions.count - 1].models }

    /// Runs the stages from the version the file holds to the last one. Does nothing for a new
    /// file, a file at the last version, or a file whose schema is none of the plan's versions
    /// (the store's own lightweight migration handles those when it opens).
    func run() throws {
        guard FileManager.default.fileExists(atPath: path) else { return }
        let copy = path + "-migrating"
        // A copy left by a migration that was interrupted is stale.
        try removeDatabaseFiles(at: copy)
        do {
            guard let start = try copyIfAtEarlierVersion(to: copy) else { return }
            // Validated: the stage at `index` goes to the version after it.
            for index in start..<stages.count { try run(stages[index], to: documents[index + 1], on: copy) }
            try closeJournal(of: copy)
            // The original's connections are closed and its WAL was checkpointed, so SQLite removed
            // it; one left by another process must not be applied to the file that replaces it.
            try removeFiles([path + "-wal", path + "-shm"])
            guard rename(copy, path) == 0 else {
                throw StoreError(.migrationFailed, "the migrated copy \(copy) could not replace the store file: \(String(cString: strerror(errno)))", path: path)
            }
        } catch {
            try? removeDatabaseFiles(at: copy)
            throw error
        }
    }

    /// When the file holds an earlier version of the plan, copies it to `copy` and returns the
    /// version's index in ``versions``; otherwise `nil` (no schema recorded, the last version, or
    /// a schema that is none of the versions).
    ///
    /// The WAL is checkpointed before the copy, so that the file holds every committed
    /// transaction and removing the WAL before the replacement loses nothing; the file's content
    /// stays the same.
    private func copyIfAtEarlierVersion(to copy: String) throws -> Int? {
        let connection = try SQLiteConnection(path: path)
        if connection.isReadOnly { throw StoreError(.readOnly, "the store file cannot be written", path: path) }
        try ObjectStore.configure(connection)
        guard let stored = try Migrator.storedDocument(on: connection),
              let version = documents.firstIndex(where: { $0.versionHash == stored.versionHash }), version < versions.count - 1
        else { return nil }
        let checkpoint = try connection.rows("PRAGMA wal_checkpoint(TRUNCATE)")
        guard case .integer(0)? = checkpoint.first?.first else {
            throw StoreError(.locked, "another connection is using the store; a migration plan's stages run only while the store is closed everywhere else", path: path)
        }
        try connection.run("VACUUM INTO ?", [.text(copy)])
        return version
    }

    /// Leaves `copy` as one file: its WAL checkpointed and removed. Fails while another connection
    /// to it is open (a context a stage's closure kept), since the file is about to move.
    private func closeJournal(of copy: String) throws {
        let connection = try SQLiteConnection(path: copy)
        let mode = try connection.rows("PRAGMA journal_mode = DELETE")
        guard case .text("delete")? = mode.first?.first else {
            throw StoreError(.migrationFailed, "the migrated copy \(copy) is still open elsewhere (a context kept by a stage's closure?)", path: path)
        }
    }

    /// Runs `stage` on `copy`, whose schema becomes `target`, the schema of the stage's `toVersion`.
    private func run(_ stage: MigrationStage, to target: SchemaDocument, on copy: String) throws {
        switch stage {
        case .lightweight:
            try step(stage, "lightweight step") {
                try ObjectStore.open(copy, migratingTo: target, policy: .automatic)
            }
        case .custom(let from, let to, let willMigrate, let didMigrate):
            if let willMigrate { try step(stage, "willMigrate") { try run(willMigrate, on: copy, models: from.models) } }
            try step(stage, "lightweight step") {
                try ObjectStore.open(copy, migratingTo: target, policy: .automatic, replacesChangedTypes: true)
            }
            if let didMigrate { try step(stage, "didMigrate") { try run(didMigrate, on: copy, models: to.models) } }
        }
    }

    /// Runs `closure` on a context of a store of `models` at `copy`, and saves what it left unsaved.
    private func run(_ closure: @Sendable (ObjectContext) throws -> Void, on copy: String, models: [any PersistentEntity.Type]) throws {
        let context = try ObjectStore(path: copy, entities: models).makeContext()
        try closure(context)
        if context.hasChanges { try context.save() }
    }

    /// Runs one part of `stage`, naming the stage and the part in the error it throws, and the
    /// store file rather than its copy.
    private func step(_ stage: MigrationStage, _ part: String, _ body: () throws -> Void) throws {
        let prefix = "migration stage \(stage.name), \(part): "
        do {
            try body()
        } catch var error as StoreError {
            error.message = prefix + error.message
            error.path = path
            throw error
        } catch {
            throw StoreError(.migrationFailed, prefix + "\(error)", path: path)
        }
    }

    private func removeDatabaseFiles(at file: String) throws {
        try removeFiles([file, file + "-wal", file + "-shm", file + "-journal"])
    }

    private func removeFiles(_ files: [String]) throws {
        for file in files where FileManager.default.fileExists(atPath: file) {
            try FileManager.default.removeItem(atPath: file)
        }
    }
}

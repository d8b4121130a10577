import Foundation
import SQLiteDatabase

/// How a store may change its file's schema when it opens.
public enum MigrationPolicy: Sendable, Equatable {
    /// Lightweight migration: new entities and attributes, removed attributes, renames via `originalName`.
    case automatic
    /// Only additions: new entities, attributes and relationships; anything else throws.
    case additiveOnly
}

/// A store file and the entities it holds.
///
/// Opening a store creates the file, or migrates it to the declared entities. Create a
/// ``ObjectContext`` for each unit of work; contexts on one store may live on different
/// threads, each with its own SQLite connection (WAL mode: readers do not block the writer).
///
/// ```swift
/// let store = try ObjectStore(path: "people.sqlite", entities: [Person.self, Place.self])
/// let context = try store.makeContext()
/// ```
public final class ObjectStore: Sendable {
    /// The database file.
    public let path: String
    /// The entities' Swift types and their table mapping; `nil` for a store opened from a schema alone.
    let typedSchema: StoreSchema?
    /// The schema as stored in the file and exported: entities, attributes, relationships.
    public let schemaDocument: SchemaDocument
    let saveObserverSlot = SaveObserverSlot()
    /// Delivers committed changes to ``changes`` subscribers.
    package let changeHub = StoreChangeHub()
    /// For an in-memory store, a connection held open for the store's lifetime: SQLite frees a
    /// shared in-memory database when its last connection closes. Never used otherwise.
    nonisolated(unsafe) private let inMemoryDatabaseKeeper: SQLiteConnection?
    /// Checkpoints the WAL of the store's connections in the background (``WALCheckpointer``);
    /// `nil` for an in-memory store, which has no WAL.
    private let checkpointer: WALCheckpointer?

    /// Opens or creates the store at `path` for `entities`, migrating an existing file.
    ///
    /// Throws ``StoreError`` with `.notADatabase` for a file that is not SQLite, `.readOnly`
    /// for a file that cannot be written, `.invalidSchema` when the entities do not fit
    /// together, and `.migrationImpossible` (leaving the file untouched) when the file holds a
    /// schema that cannot be migrated automatically.
    public convenience init(path: String, entities: [any PersistentEntity.Type]) throws {
        try self.init(path: path, entities: entities, inMemoryDatabaseKeeper: nil)
    }

    private init(path: String, entities: [any PersistentEntity.Type], inMemoryDatabaseKeeper: SQLiteConnection?) throws {
        self.path = path
        let schema = try StoreSchema(types: entities)
        typedSchema = schema
        schemaDocument = try SchemaDocument(schema)
        self.inMemoryDatabaseKeeper = inMemoryDatabaseKeeper
        checkpointer = ObjectStore.checkpointer(for: path)
        try ObjectStore.open(path, migratingTo: schemaDocument, policy: .automatic)
    }

    /// A store for `entities` that lives in memory only, for tests and previews: nothing is
    /// written to disk, and the data is gone when the store is released.
    ///
    /// Every context of the store sees the same data (an SQLite shared-cache in-memory database;
    /// ``path`` is its `file:` URI). Shared-cache connections lock whole tables rather than use
    /// WAL, so a context writing while another reads the same table may get `.locked`; use one
    /// context at a time, as tests usually do.
    ///
    /// ```swift
    /// let store = try ObjectStore.inMemory(entities: [Person.self, Place.self])
    /// let context = try store.makeContext()
    /// ```
    public static func inMemory(entities: [any PersistentEntity.Type]) throws -> ObjectStore {
        // A name of its own per store: two in-memory stores never share data.
        let path = "file:LocalStore-\(UUID().uuidString)?mode=memory&cache=shared"
        return try ObjectStore(path: path, entities: entities, inMemoryDatabaseKeeper: try SQLiteConnection(path: path))
    }

    /// Opens or creates the store at `path` for a schema given as data (the JSON a store exports),
    /// without the Swift types: for tools and servers. Such a store cannot make contexts.
    ///
    /// With `.additiveOnly`, a schema that would change or remove anything stored throws
    /// ``StoreError/Code/migrationImpossible`` naming the differences, and the file is left untouched.
    public init(path: String, schema: SchemaDocument, policy: MigrationPolicy = .automatic) throws {
        self.path = path
        typedSchema = nil
        schemaDocument = schema
        inMemoryDatabaseKeeper = nil
        checkpointer = ObjectStore.checkpointer(for: path)
        try ObjectStore.open(path, migratingTo: schema, policy: policy)
    }

    /// Opens an existing store with the schema recorded in it, without the Swift types.
    public init(existingAt path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError(.sqlite, "there is no store at this path", path: path)
        }
        self.path = path
        typedSchema = nil
        inMemoryDatabaseKeeper = nil
        checkpointer = ObjectStore.checkpointer(for: path)
        let connection = try SQLiteConnection(path: path)
        try ObjectStore.configure(connection)
        guard let stored = try Migrator.storedDocument(on: connection) else {
            throw StoreError(.invalidSchema, "the file has no LocalStore schema; open it with its entity types first", path: path)
        }
        if !connection.isReadOnly { try Migrator.renameLegacyIdentifierColumns(of: stored, on: connection) }
        schemaDocument = stored
    }

    /// The schema recorded in the store file at `path`, or `nil` when the file has none yet (a new
    /// file, or one whose first migration never committed).
    public static func storedSchema(at path: String) throws -> SchemaDocument? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let connection = try SQLiteConnection(path: path)
        try configure(connection)
        return try Migrator.storedDocument(on: connection)
    }

    /// Migrates the file at `path` to `document`; with `replacesChangedTypes`, the columns of an
    /// attribute whose type changed are replaced instead of refusing (a custom migration stage).
    static func open(_ path: String, migratingTo document: SchemaDocument, policy: MigrationPolicy, replacesChangedTypes: Bool = false) throws {
        // Before the file is touched: a table named like the store's own would be created over
        // them or fail halfway through a migration.
        do {
            try document.validateTableNames()
            try document.validateColumnNames()
        } catch var error as StoreError {
            error.path = path
            throw error
        }
        let connection = try SQLiteConnection(path: path)
        if connection.isReadOnly {
            throw StoreError(.readOnly, "the store file cannot be written", path: path)
        }
        try ObjectStore.configure(connection)
        try Migrator(document: document, connection: connection, policy: policy, replacesChangedTypes: replacesChangedTypes).migrate()
    }

    /// By entity and attribute, the column-value merges of `.custom` merge policies: the Swift
    /// types' `merge(_:_:)`, which the sync engine calls. Empty for a store opened from a schema alone.
    package var customAttributeMerges: [String: [String: @Sendable ([SQLValue], [SQLValue]) -> [SQLValue]?]] {
        var merges: [String: [String: @Sendable ([SQLValue], [SQLValue]) -> [SQLValue]?]] = [:]
        for mapping in typedSchema?.entities ?? [] {
            for attribute in mapping.description.attributes {
                if let merge = attribute.mergeColumnValues { merges[mapping.name, default: [:]][attribute.name] = merge }
            }
        }
        return merges
    }

    var schema: StoreSchema {
        guard let typedSchema else {
            preconditionFailure("LocalStore: the store at \(path) was opened from a schema alone; contexts need the entity types")
        }
        return typedSchema
    }

    /// Sets the connection options every connection of a store uses.
    static func configure(_ connection: SQLiteConnection) throws {
        // Reading the journal mode is the first statement that touches the file: a file that is
        // not SQLite fails here with SQLITE_NOTADB.
        do {
            _ = try connection.rows("PRAGMA journal_mode = WAL")
        } catch var error as StoreError {
            if error.code == .notADatabase { error.message = "the file is not an SQLite database" }
            throw error
        }
        // A 16 MiB page cache (SQLite's default is 2 MiB, allocated as pages are used): a merge
        // or a large save touches the entity tables and the sync metadata's indexes at once, and
        // with the default it re-read the same pages from the file over and over.
        try connection.execute("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = OFF; PRAGMA cache_size = -16384")
        // The WAL holds every page a transaction writes until a checkpoint, and SQLite keeps the
        // file at its largest size for reuse: one import or large merge would leave the store
        // that much bigger for good. With a limit, the first write after a checkpoint truncates
        // it back to ``walSizeLimit``.
        try connection.execute("PRAGMA journal_size_limit = \(walSizeLimit)")
    }

    /// The size, in bytes, a store's WAL file is cut back to once a checkpoint emptied it.
    package static let walSizeLimit = 1 << 20

    /// The observer told about every save (change capture for sync), if any.
    package var saveObserver: (any SaveObserver)? {
        get { saveObserverSlot.get() }
        set { saveObserverSlot.set(newValue) }
    }

    /// The changes committed to this store from now on, one value per committed transaction, in
    /// commit order: saves through any of its contexts, merges a `SyncReplica` applies, and
    /// record edits. Nothing is delivered for a save or merge that rolls back.
    ///
    /// Each read of this property is a new subscription that starts at once and keeps every
    /// change until it is consumed (an unbounded buffer); use
    /// ``changes(bufferingPolicy:)`` to bound it. A subscription ends when its stream and
    /// iterators are released, or when the task iterating it is cancelled. With no
    /// subscription, a commit costs one atomic load.
    ///
    /// ```swift
    /// let changes = store.changes
    /// Task {
    ///     for await change in changes where change.isFromMerge {
    ///         try context.refresh(objectIDs: change.updated)
    ///     }
    /// }
    /// ```
    public var changes: AsyncStream<StoreChange> {
        changeHub.subscribe(bufferingPolicy: .unbounded)
    }

    /// A subscription to committed changes, like ``changes``, keeping at most what
    /// `bufferingPolicy` allows while the subscriber falls behind (for example
    /// `.bufferingNewest(100)`: a slow subscriber then misses older changes, and should
    /// refresh everything when it notices a gap it cannot tell).
    public func changes(bufferingPolicy: AsyncStream<StoreChange>.Continuation.BufferingPolicy) -> AsyncStream<StoreChange> {
        changeHub.subscribe(bufferingPolicy: bufferingPolicy)
    }

    /// Opens a new connection to the store file; its commits leave the WAL's checkpoints to the
    /// store's background checkpointer.
    package func openConnection() throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path)
        try ObjectStore.configure(connection)
        checkpointer?.install(on: connection)
        return connection
    }

    /// A checkpointer for a store file; none for an in-memory database (a `file:` URI with
    /// `mode=memory`), which has no WAL.
    private static func checkpointer(for path: String) -> WALCheckpointer? {
        path.hasPrefix("file:") && path.contains("mode=memory") ? nil : WALCheckpointer(path: path)
    }

    /// Returns once the WAL checkpoints the store's commits asked for so far have run.
    package func waitForCheckpoints() {
        checkpointer?.waitUntilIdle()
    }

    deinit {
        // No checkpoint of the store's may still be reading or writing the file once the store
        // is released: a migration may move the file, an app or a test remove it.
        checkpointer?.waitUntilIdle()
    }

    /// Creates a context: a unit of work with its own connection and identity map.
    public func makeContext() throws -> ObjectContext {
        guard typedSchema != nil else {
            throw StoreError(.invalidSchema, "this store was opened from a schema alone; open it with its entity types to make contexts", path: path)
        }
        return try ObjectContext(store: self, connection: openConnection())
    }

    /// The schema as JSON (entities, attributes, relationships, inverses, delete rules,
    /// persistent names and a version hash), with sorted keys.
    public func exportSchema() throws -> Data {
        try schemaDocument.jsonData()
    }
}

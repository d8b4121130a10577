import Foundation
import Testing
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport

/// The format version of the sync tables: stores written before it was recorded open and are
/// migrated in place, in one transaction; stores written by a newer release are refused.
@Suite struct StoreFormatTests {
    /// The sync tables as the release without a format version created them, verbatim.
    static let unversionedLayout = [
        "CREATE TABLE IF NOT EXISTS _sync_state (key TEXT PRIMARY KEY NOT NULL, value NOT NULL)",
        "CREATE TABLE IF NOT EXISTS _sync_vector (replica TEXT PRIMARY KEY NOT NULL, seq INTEGER NOT NULL) WITHOUT ROWID",
        """
        CREATE TABLE IF NOT EXISTS _sync_changeset (replica TEXT NOT NULL, seq INTEGER NOT NULL, hlc INTEGER NOT NULL,
            vector TEXT NOT NULL, operations TEXT NOT NULL, status TEXT NOT NULL, PRIMARY KEY (replica, seq)) WITHOUT ROWID
        """,
        "CREATE INDEX IF NOT EXISTS _sync_changeset_status ON _sync_changeset (status, hlc)",
        """
        CREATE TABLE IF NOT EXISTS _sync_object (entity TEXT NOT NULL, id TEXT NOT NULL, hlc INTEGER NOT NULL,
            replica TEXT NOT NULL, seq INTEGER NOT NULL, tombstone TEXT, PRIMARY KEY (entity, id)) WITHOUT ROWID
        """,
        """
        CREATE TABLE IF NOT EXISTS _sync_field (entity TEXT NOT NULL, id TEXT NOT NULL, field TEXT NOT NULL,
            hlc INTEGER NOT NULL, replica TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (entity, id, field)) WITHOUT ROWID
        """,
        """
        CREATE TABLE IF NOT EXISTS _sync_edge (entity TEXT NOT NULL, id TEXT NOT NULL, relationship TEXT NOT NULL,
            target TEXT NOT NULL, replica TEXT NOT NULL, seq INTEGER NOT NULL, hlc INTEGER NOT NULL,
            removed_replica TEXT, removed_seq INTEGER, removed_root TEXT,
            PRIMARY KEY (entity, id, relationship, target, replica, seq)) WITHOUT ROWID
        """,
        "CREATE INDEX IF NOT EXISTS _sync_edge_target ON _sync_edge (entity, relationship, target)",
        """
        CREATE TABLE IF NOT EXISTS _sync_position (entity TEXT NOT NULL, id TEXT NOT NULL, relationship TEXT NOT NULL,
            member TEXT NOT NULL, key TEXT NOT NULL, hlc INTEGER NOT NULL, replica TEXT NOT NULL, seq INTEGER NOT NULL,
            PRIMARY KEY (entity, id, relationship, member)) WITHOUT ROWID
        """,
        """
        CREATE TABLE IF NOT EXISTS _sync_delete (entity TEXT NOT NULL, id TEXT NOT NULL, replica TEXT NOT NULL,
            seq INTEGER NOT NULL, root TEXT NOT NULL, implicit INTEGER NOT NULL,
            PRIMARY KEY (entity, id, replica, seq, root)) WITHOUT ROWID
        """,
        "CREATE INDEX IF NOT EXISTS _sync_delete_root ON _sync_delete (replica, seq, root)",
        "CREATE TABLE IF NOT EXISTS _sync_void (replica TEXT NOT NULL, seq INTEGER NOT NULL, root TEXT NOT NULL, PRIMARY KEY (replica, seq, root)) WITHOUT ROWID",
        """
        CREATE TABLE IF NOT EXISTS _sync_conflict (first INTEGER PRIMARY KEY, count INTEGER NOT NULL,
            cause_replica TEXT NOT NULL, cause_seq INTEGER NOT NULL, entries BLOB NOT NULL)
        """,
        "CREATE INDEX IF NOT EXISTS _sync_conflict_cause ON _sync_conflict (cause_replica, cause_seq)",
    ]

    /// The `sqlite_master` rows of the sync tables of the file at `path`, but the format's own.
    static func syncLayout(at path: String) throws -> [[SQLValue]] {
        try SQLiteConnection(path: path).rows(
            "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name LIKE '\\_sync\\_%' ESCAPE '\\' AND name != '_sync_format' ORDER BY name")
    }

    /// A team with one member, saved in `replica`.
    static func savedTeam(in replica: TestReplica) throws -> (Team, Member) {
        let team = Team()
        team.name = "Rovers"
        let member = Member()
        member.name = "Ada"
        member.team = team
        replica.context.insert(team)
        replica.context.insert(member)
        try replica.context.save()
        return (team, member)
    }

    /// A store written by the release without a format version: a synced store with data, whose
    /// sync tables are then exactly that release's (checked against its statements).
    static func unversionedStore() throws -> (replica: TestReplica, team: Team) {
        let a = try TestReplica(name: "unversioned")
        let (team, _) = try savedTeam(in: a)
        team.score = 3
        try a.context.save()
        try a.replica.mark([Dot(replica: a.replica.replicaID, seq: 1)], as: .acknowledged)
        try SQLiteConnection(path: a.path).execute("DROP TABLE _sync_format")
        try SQLiteConnection(path: a.path).execute("DROP TABLE _sync_edge_removal")
        try SQLiteConnection(path: a.path).execute("DROP TABLE _sync_unique_value; DROP TABLE _sync_unique_merge; DROP TABLE _sync_kept; DROP TABLE _sync_kept_object")
        try SQLiteConnection(path: a.path).execute(
            "ALTER TABLE _sync_changeset DROP COLUMN authenticator; DELETE FROM _sync_state WHERE key = 'replica_key'")
        try StoreFormatTests.moveStampsToLegacyTable(at: a.path)
        try StoreFormatTests.rewriteInUnversionedLayout(at: a.path)

        let reference = FileManager.default.temporaryDirectory.appendingPathComponent("layout-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: reference) }
        let connection = try SQLiteConnection(path: reference)
        for statement in unversionedLayout { try connection.execute(statement) }
        #expect(try syncLayout(at: a.path) == syncLayout(at: reference))
        return (a, team)
    }

    /// Moves the attribute stamps of the store at `path` back into the layout before sync format
    /// 6, one row per attribute (`_sync_field`), as the releases before it wrote them.
    static func moveStampsToLegacyTable(at path: String) throws {
        let connection = try SQLiteConnection(path: path)
        try connection.execute(unversionedLayout.first { $0.contains("_sync_field ") }!)
        for row in try connection.rows("SELECT entity, id, stamps FROM _sync_field_stamps") {
            guard case .blob(let blob) = row[2] else { throw SyncError(.notSyncable, "stamps of \(row[1]) are not a blob") }
            for entry in try blob.withUnsafeBytes({ try FieldStampTable.decode($0) }).sortedEntries {
                try connection.run("INSERT INTO _sync_field (entity, id, field, hlc, replica, seq) VALUES (?, ?, ?, ?, ?, ?)",
                                   [row[0], row[1], .text(entry.field), entry.stamp.hlcValue, entry.stamp.replicaValue, entry.stamp.seqValue])
            }
        }
        try connection.execute("DROP TABLE _sync_field_stamps")
    }

    /// The SQL expression of the text form (upper-case 8-4-4-4-12 hex) of the identifier in
    /// `column`, as releases before sync format 7 stored it.
    static func identifierText(_ column: String) -> String {
        let hex = "hex(\(column))"
        return """
            CASE typeof(\(column)) WHEN 'blob' THEN substr(\(hex), 1, 8) || '-' || substr(\(hex), 9, 4) || '-' || substr(\(hex), 13, 4)
                || '-' || substr(\(hex), 17, 4) || '-' || substr(\(hex), 21) ELSE \(column) END
            """
    }

    /// The columns of the sync and server tables that may hold 16 bytes or a UUID's text without
    /// holding an identifier the migration rewrites: log digests (16 bytes), the key-value row of
    /// the replica's own ID (text), and the forgotten objects' identifiers (bytes in every format).
    static let notRewritten: Set<String> = ["_server_log.digest", "_server_log_compacted.digest", "_server_log_floor.digest",
                                            "_sync_state.value", "_server_forgotten_object.id"]

    /// Every column of the sync and server tables of the file on `connection` but
    /// ``notRewritten``. Found in the file, not taken from the migration's list, so that a table
    /// the list lacks shows.
    static func syncColumns(on connection: SQLiteConnection) throws -> [(table: String, column: String)] {
        var columns: [(table: String, column: String)] = []
        let tables = try connection.rows(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND (name LIKE '\\_sync\\_%' ESCAPE '\\' OR name LIKE '\\_server\\_%' ESCAPE '\\') ORDER BY name")
        for case .text(let table)? in tables.map(\.first) {
            for case .text(let column)? in try connection.rows("SELECT name FROM pragma_table_info(?)", [.text(table)]).map(\.first) {
                if !notRewritten.contains("\(table).\(column)") { columns.append((table, column)) }
            }
        }
        return columns
    }

    /// The tables that name replicas by number since sync format 9, as format 8 created them, verbatim.
    static let formatEightReplicaTables = [
        """
        CREATE TABLE IF NOT EXISTS _sync_object (entity TEXT NOT NULL, id BLOB NOT NULL, hlc INTEGER NOT NULL,
            replica BLOB NOT NULL, seq INTEGER NOT NULL, tombstone TEXT, PRIMARY KEY (entity, id)) WITHOUT ROWID
        """,
        """
        CREATE TABLE IF NOT EXISTS _sync_edge (entity TEXT NOT NULL, id BLOB NOT NULL, relationship TEXT NOT NULL,
            target BLOB NOT NULL, replica BLOB NOT NULL, seq INTEGER NOT NULL, hlc INTEGER NOT NULL,
            removed_replica BLOB, removed_seq INTEGER, removed_root BLOB,
            PRIMARY KEY (entity, id, relationship, target, replica, seq)) WITHOUT ROWID
        """,
        "CREATE INDEX IF NOT EXISTS _sync_edge_target ON _sync_edge (entity, relationship, target)",
        """
        CREATE TABLE IF NOT EXISTS _sync_edge_removal (entity TEXT NOT NULL, id BLOB NOT NULL, relationship TEXT NOT NULL,
            target BLOB NOT NULL, replica BLOB NOT NULL, seq INTEGER NOT NULL,
            removed_replica BLOB NOT NULL, removed_seq INTEGER NOT NULL, removed_root BLOB NOT NULL,
            PRIMARY KEY (entity, id, relationship, target, replica, seq, removed_replica, removed_seq, removed_root)) WITHOUT ROWID
        """,
        "CREATE INDEX IF NOT EXISTS _sync_edge_removal_root ON _sync_edge_removal (removed_replica, removed_seq, removed_root)",
    ]

    /// Rebuilds the creation and edge tables of the file at `path` as sync format 8 kept them,
    /// with each replica's identifier where this release keeps its number, and drops the numbers.
    static func storeReplicasByIdentifier(at path: String) throws {
        let connection = try SQLiteConnection(path: path)
        guard try connection.declaredType(of: "replica", in: "_sync_edge") == "INTEGER" else { return }
        try connection.execute("DROP INDEX _sync_edge_target; DROP INDEX IF EXISTS _sync_edge_removal_root")
        // A store taken back to an earlier layout may have no table of further removals.
        let hasRemovals = try connection.declaredType(of: "replica", in: "_sync_edge_removal") != nil
        let tables = ["_sync_object", "_sync_edge"] + (hasRemovals ? ["_sync_edge_removal"] : [])
        for table in tables { try connection.execute("ALTER TABLE \(table) RENAME TO \(table)_numbered") }
        for statement in formatEightReplicaTables where hasRemovals || !statement.contains("_sync_edge_removal") {
            try connection.execute(statement)
        }
        for table in tables {
            let columns = try connection.rows("SELECT name FROM pragma_table_info(?)", [.text(table)]).compactMap(\.first?.textValue)
            let values = columns.map { $0.hasSuffix("replica") ? "(SELECT n.replica FROM _sync_replica_number AS n WHERE n.number = t.\($0))" : $0 }
            try connection.execute("""
                INSERT INTO \(table) (\(columns.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) FROM \(table)_numbered AS t;
                DROP TABLE \(table)_numbered
                """)
        }
        try connection.execute("DROP TABLE _sync_replica_number")
    }

    /// Stores every identifier of the file at `path` as text, in place, as releases before sync
    /// format 7 did: every 16-byte blob of the sync and server tables' ``syncColumns(on:)``.
    static func storeIdentifiersAsText(at path: String) throws {
        try storeReplicasByIdentifier(at: path)
        let connection = try SQLiteConnection(path: path)
        for (table, column) in try syncColumns(on: connection) {
            try connection.execute("UPDATE \(table) SET \(column) = \(identifierText(column)) WHERE typeof(\(column)) = 'blob' AND length(\(column)) = 16")
        }
    }

    /// Rebuilds the sync tables of the file at `path` in ``unversionedLayout``, with their rows
    /// and their identifiers as text: the file as the release without a format version wrote it.
    static func rewriteInUnversionedLayout(at path: String) throws {
        try storeIdentifiersAsText(at: path)
        let connection = try SQLiteConnection(path: path)
        for case .text(let index)? in try connection.rows("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND name LIKE '\\_sync\\_%' ESCAPE '\\'").map(\.first) {
            try connection.execute("DROP INDEX \(index)")
        }
        let tables = unversionedLayout.compactMap { statement in
            statement.firstMatch(of: /CREATE TABLE IF NOT EXISTS (\w+)/).map { String($0.1) }
        }
        for table in tables { try connection.execute("ALTER TABLE \(table) RENAME TO \(table)_current") }
        for statement in unversionedLayout { try connection.execute(statement) }
        for table in tables {
            let columns = try connection.rows("SELECT name FROM pragma_table_info(?)", [.text(table)]).compactMap(\.first?.textValue).joined(separator: ", ")
            try connection.execute("INSERT INTO \(table) (\(columns)) SELECT \(columns) FROM \(table)_current; DROP TABLE \(table)_current")
        }
    }

    /// `table.column: type/length` of every identifier the file on `connection` holds: its 16
    /// bytes, or its 36-character text.
    static func identifierTypes(on connection: SQLiteConnection) throws -> Set<String> {
        var types: Set<String> = []
        for (table, column) in try syncColumns(on: connection) {
            for row in try connection.rows("""
                SELECT DISTINCT typeof(\(column)) || '/' || length(\(column)) FROM \(table)
                WHERE (typeof(\(column)) = 'blob' AND length(\(column)) = 16)
                    OR (typeof(\(column)) = 'text' AND \(column) LIKE '________-____-____-____-____________')
                """) {
                types.insert("\(table).\(column): \(row[0].textValue ?? "?")")
            }
        }
        return types
    }

    @Test func aDatasetOfFormatSixKeepsItsLogAndItsReplicasKeys() throws {
        let client = try TestReplica(name: "client")
        try client.saveTeams("one", "two")
        let file = TemporaryStoreFile(prefix: "dataset-format-6")
        let pushed = try client.replica.changeSets(missingFrom: VersionVector())
        do {
            let engine = try SQLiteDatasetEngine.create(at: file.path, schema: client.store.schemaDocument)
            _ = try engine.apply(pushed, pushedBy: try client.replica.credentials())
        }
        let connection = try SQLiteConnection(path: file.path)
        let stored = try StoreFormatTests.identifierTypes(on: connection)
        #expect(stored.contains("_server_log.replica: blob/16") && stored.contains("_server_replica_key.replica: blob/16"), "\(stored)")
        try StoreFormatTests.storeIdentifiersAsText(at: file.path)
        try connection.run("UPDATE _sync_format SET version = 6")

        let engine = try #require(try SQLiteDatasetEngine.open(at: file.path))
        #expect(try StoreFormatTests.identifierTypes(on: connection) == stored)
        #expect(try engine.readLog(after: 0, limit: 10, excluding: nil).changeSets == pushed)
        // The replica's registered key is found again: its next change set is authenticated with it.
        let team = Team()
        team.name = "three"
        client.context.insert(team)
        try client.context.save()
        let next = try client.replica.changeSets(missingFrom: VersionVector([client.replica.replicaID: 2]))
        let impostor = ReplicaCredentials(replica: client.replica.replicaID, key: Array(repeating: 7, count: 32))
        #expect(throws: SyncError.self) { try engine.apply(next, pushedBy: impostor) }
        let result = try engine.apply(next, pushedBy: try client.replica.credentials())
        #expect(result.applied == next.map(\.dot) && result.cursor == 3)
    }

    @Test func aStoreOfFormatSixHasItsIdentifiersRewrittenAsBytes() throws {
        let a = try TestReplica(name: "format-6")
        let (_, member) = try StoreFormatTests.savedTeam(in: a)
        a.context.delete(member)
        try a.context.save()
        let digest = try a.digest()
        let connection = try SQLiteConnection(path: a.path)
        func identifierTypes() throws -> Set<String> { try StoreFormatTests.identifierTypes(on: connection) }
        let stored = try identifierTypes()
        #expect(stored.contains("_sync_edge.target: blob/16") && stored.contains("_sync_delete.root: blob/16"), "\(stored)")
        #expect(stored.allSatisfy { $0.hasSuffix(": blob/16") }, "\(stored)")
        try StoreFormatTests.storeIdentifiersAsText(at: a.path)
        try connection.run("UPDATE _sync_format SET version = 6")
        #expect(try identifierTypes().allSatisfy { $0.hasSuffix(": text/36") })

        let reopened = try SyncReplica(store: try ObjectStore(path: a.path, entities: syncEntities))
        #expect(try SyncFormatTable.storedVersion(on: connection) == SyncFormatTable.currentVersion)
        #expect(try identifierTypes() == stored)
        #expect(try TestReplica.digest(of: a.path) == digest)
        #expect(try reopened.versionVector() == VersionVector([a.replica.replicaID: 2]))
        // The history reads as it did: a peer built from it holds the same graph.
        let b = try TestReplica(name: "peer")
        _ = try b.replica.apply(try reopened.changeSets(missingFrom: VersionVector()))
        #expect(try b.digest() == digest)
        #expect(try b.context.fetch(FetchDescriptor<Member>()).isEmpty)
    }

    @Test func aStoreWithoutFormatVersionOpensAndIsMigratedInPlace() throws {
        let (a, team) = try StoreFormatTests.unversionedStore()
        let layoutBefore = try StoreFormatTests.syncLayout(at: a.path)
        #expect(try SyncFormatTable.storedVersion(on: SQLiteConnection(path: a.path)) == 0)

        let reopened = try SyncReplica(store: try ObjectStore(path: a.path, entities: syncEntities))
        #expect(try SyncFormatTable.storedVersion(on: SQLiteConnection(path: a.path)) == SyncFormatTable.currentVersion)
        // Every table of the older layout is as it was but for the authenticator column; the later
        // formats' tables were added.
        let layoutAfter = try StoreFormatTests.syncLayout(at: a.path)
        let rebuilt = ["_sync_edge", "_sync_object", "_sync_replica_number", "_sync_unique_", "_sync_kept", "_sync_field_stamps"]
        #expect(layoutAfter.filter { row in rebuilt.allSatisfy { !(row[1].textValue ?? "").hasPrefix($0) } }.map { row in
            row.map { value in value.textValue.map { SQLValue.text($0.replacingOccurrences(of: ", authenticator BLOB", with: "")) } ?? value }
        } == layoutBefore.filter { row in ["_sync_field", "_sync_edge", "_sync_edge_target", "_sync_object"].allSatisfy { row[1] != .text($0) } })
        // The creation and edge tables are rebuilt with replica numbers (format 9).
        let connection = try SQLiteConnection(path: a.path)
        #expect(try ["_sync_object", "_sync_edge", "_sync_edge_removal"].map { try connection.declaredType(of: "replica", in: $0) }
            == ["INTEGER", "INTEGER", "INTEGER"])
        #expect(layoutAfter.contains { $0[1] == .text("_sync_edge_target") })
        #expect(layoutAfter.contains { $0[1] == .text("_sync_field_stamps") })
        #expect(try reopened.localChangeSets(status: .pending).allSatisfy { try ChangeSetAuthenticator.isAuthentic($0, key: reopened.replicaKey()) })
        #expect(layoutAfter.map { $0[1].textValue ?? "" }.filter { $0.hasPrefix("_sync_edge_removal") }
            == ["_sync_edge_removal", "_sync_edge_removal_root", "_sync_edge_removal_target"])
        #expect(reopened.replicaID == a.replica.replicaID)
        #expect(try reopened.versionVector() == VersionVector([a.replica.replicaID: 2]))
        #expect(try reopened.localChangeSets(status: .acknowledged).map(\.dot.seq) == [1])
        #expect(try reopened.localChangeSets(status: .pending).map(\.dot.seq) == [2])
        #expect(try reopened.record("Team", id: team.objectID)?.value(of: "score") == .integer(3))

        // The migrated store goes on numbering its change sets and replicates whole.
        let context = try reopened.store.makeContext()
        let reloaded = try #require(try context.object(Team.self, id: team.objectID))
        reloaded.name = "Rangers"
        try context.save()
        #expect(try reopened.versionVector() == VersionVector([a.replica.replicaID: 3]))
        let b = try TestReplica(name: "peer")
        _ = try b.replica.apply(try reopened.changeSets(missingFrom: VersionVector()))
        #expect(try b.digest() == TestReplica.digest(of: a.path))
    }

    /// Takes a new store's sync tables back to format `version` with `downgrade`, reopens it and
    /// returns the names of its tables and indexes starting with `prefix` once it migrated.
    private func migratedNames(from version: Int64, downgrade: String, prefix: String) throws -> [String] {
        let a = try TestReplica(name: "format-\(version)")
        let connection = try SQLiteConnection(path: a.path)
        try connection.execute(downgrade)
        try connection.run("UPDATE _sync_format SET version = ?", [.integer(version)])
        _ = try SyncReplica(store: try ObjectStore(path: a.path, entities: syncEntities))
        #expect(try SyncFormatTable.storedVersion(on: connection) == SyncFormatTable.currentVersion)
        return try connection.rows("SELECT name FROM sqlite_master ORDER BY name").compactMap(\.first?.textValue).filter { $0.hasPrefix(prefix) }
    }

    /// Format 10 writes journal rows in their second format; a store of format 9 keeps its rows
    /// of the first, which read as they did.
    @Test func aStoreOfFormatNineKeepsItsJournalRowsOfTheFirstFormat() throws {
        let a = try TestReplica(name: "format-9")
        let connection = try SQLiteConnection(path: a.path)
        let cause = UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!
        try connection.run("INSERT INTO _sync_conflict (first, count, cause_replica, cause_seq, entries) VALUES (1, 3, ?, 7, ?)",
                           [cause.storedValue, .blob(ConflictJournalTests.version1Row)])
        try SyncStateTable.set(.journalNext, to: 4, on: connection)
        try connection.run("UPDATE _sync_format SET version = 9")
        let reopened = try SyncReplica(store: try ObjectStore(path: a.path, entities: syncEntities))
        #expect(try SyncFormatTable.storedVersion(on: connection) == SyncFormatTable.currentVersion)
        let entries = try reopened.conflicts()
        #expect(entries.map(\.kind) == [.attribute, .voidedDelete, .toOne])
        #expect(entries.map(\.cause) == Array(repeating: Dot(replica: cause, seq: 7), count: 3))
        #expect(entries[1].detail == "the delete of Team is void")
        #expect(try connection.rows("SELECT hex(substr(entries, 1, 1)) FROM _sync_conflict").first?.first == .text("01"))
    }

    @Test func aStoreOfFormatOneGainsTheTableOfFurtherEdgeRemovals() throws {
        let names = try migratedNames(from: 1, downgrade: "DROP TABLE _sync_edge_removal; ALTER TABLE _sync_changeset DROP COLUMN authenticator",
                                      prefix: "_sync_edge_removal")
        #expect(names == ["_sync_edge_removal", "_sync_edge_removal_root", "_sync_edge_removal_target"])
    }

    /// Format 11 indexes edges and their further removals by target first, and removed additions
    /// on their own.
    @Test func aStoreOfFormatTenHasItsEdgesIndexedByTargetAndRemoval() throws {
        let a = try TestReplica(name: "format-10")
        let connection = try SQLiteConnection(path: a.path)
        let indexColumns = { (index: String) in
            try connection.rows("SELECT name FROM pragma_index_info(?) ORDER BY seqno", [.text(index)]).compactMap(\.first?.textValue)
        }
        try connection.execute("""
            DROP INDEX _sync_edge_target; DROP INDEX _sync_edge_removed; DROP INDEX _sync_edge_removal_target;
            CREATE INDEX _sync_edge_target ON _sync_edge (entity, relationship, target)
            """)
        try connection.run("UPDATE _sync_format SET version = 10")
        #expect(try indexColumns("_sync_edge_removed").isEmpty)
        _ = try SyncReplica(store: try ObjectStore(path: a.path, entities: syncEntities))
        #expect(try SyncFormatTable.storedVersion(on: connection) == SyncFormatTable.currentVersion)
        #expect(try indexColumns("_sync_edge_target") == ["target", "entity", "relationship"])
        #expect(try indexColumns("_sync_edge_removed") == ["removed_replica", "removed_seq", "removed_root"])
        #expect(try indexColumns("_sync_edge_removal_target") == ["target", "entity", "relationship"])
    }

    @Test func aStoreOfFormatThreeGainsTheUniquenessMergeTables() throws {
        let names = try migratedNames(from: 3, downgrade: "DROP TABLE _sync_unique_value; DROP TABLE _sync_unique_merge", prefix: "_sync_unique")
        #expect(names == ["_sync_unique_merge", "_sync_unique_value"])
    }

    @Test func aStoreOfFormatFiveKeepsItsAttributeStampsInOneRowPerObject() throws {
        let a = try TestReplica(name: "format-5")
        let rovers = Team(), comets = Team()
        rovers.name = "Rovers"
        comets.name = "Comets"
        a.context.insert(rovers)
        a.context.insert(comets)
        try a.context.save()
        rovers.score = 3
        rovers.name = "Rangers"
        try a.context.save()
        comets.score = 5
        try a.context.save()
        func stamps() throws -> [UUID: FieldStamps] {
            try FieldStampTable.stamps("Team", [rovers.objectID, comets.objectID], on: SQLiteConnection(path: a.path))
        }
        let before = try stamps()
        #expect(before[rovers.objectID]?.sortedEntries.map(\.field) == ["name", "score"])
        #expect(before[comets.objectID]?.sortedEntries.map(\.field) == ["score"])
        try StoreFormatTests.moveStampsToLegacyTable(at: a.path)
        let connection = try SQLiteConnection(path: a.path)
        #expect(try connection.rows("SELECT count(*) FROM _sync_field").first?.first == .integer(3))
        try connection.run("UPDATE _sync_format SET version = 5")

        let reopened = try SyncReplica(store: try ObjectStore(path: a.path, entities: syncEntities))
        #expect(try SyncFormatTable.storedVersion(on: connection) == SyncFormatTable.currentVersion)
        #expect(try stamps() == before)
        #expect(try connection.rows("SELECT name FROM sqlite_master WHERE name = '_sync_field'").isEmpty)
        #expect(try reopened.heldHistory().fieldStamps == 3)
        // A concurrent write older than the stored stamp still loses to it.
        let earlier = FakeClock()
        earlier.set(1_600_000_000_000)
        let b = try TestReplica(clock: earlier, name: "peer")
        _ = try b.replica.apply(try reopened.changeSets(missingFrom: VersionVector()).filter { $0.dot.seq == 1 })
        let peerTeam = try #require(try b.context.object(Team.self, id: rovers.objectID))
        peerTeam.score = 9
        try b.context.save()
        _ = try reopened.apply(try b.replica.changeSets(missingFrom: try reopened.versionVector()))
        #expect(try reopened.record("Team", id: rovers.objectID)?.value(of: "score") == .integer(3))
    }

    @Test func aStoreOfFormatEightHasTheReplicasOfItsCreationsAndEdgesNumbered() throws {
        // Two replicas' creations and edges, and an edge a delete removed.
        let a = try TestReplica(name: "format-8")
        let b = try TestReplica(name: "peer")
        let (team, member) = try StoreFormatTests.savedTeam(in: a)
        _ = try b.replica.apply(try a.replica.changeSets(missingFrom: VersionVector()))
        let (_, recruit) = try StoreFormatTests.savedTeam(in: b)
        _ = try a.replica.apply(try b.replica.changeSets(missingFrom: try a.replica.versionVector()))
        a.context.delete(member)
        try a.context.save()
        let connection = try SQLiteConnection(path: a.path)
        func storedEdges() throws -> [EdgeTable.StoredEdge] {
            try EdgeTable.edges(from: ObjectKey(entity: "Member", id: member.objectID), "team", on: connection)
                + EdgeTable.edges(from: ObjectKey(entity: "Member", id: recruit.objectID), "team", on: connection)
        }
        func describe(_ edges: [EdgeTable.StoredEdge]) -> [String] {
            edges.map { "\($0.source) \($0.target) \($0.added) removed: \($0.isRemoved) \(String(describing: $0.removalRoot))" }
        }
        let edgesBefore = describe(try storedEdges())
        #expect(try storedEdges().map(\.isRemoved) == [true, false])
        let digest = try a.digest()
        let history = try a.replica.heldHistory()
        try StoreFormatTests.storeReplicasByIdentifier(at: a.path)
        try connection.run("UPDATE _sync_format SET version = 8")
        #expect(try connection.rows("SELECT DISTINCT typeof(replica) FROM _sync_edge").map(\.first) == [.text("blob")])

        let reopened = try SyncReplica(store: try ObjectStore(path: a.path, entities: syncEntities))
        #expect(try SyncFormatTable.storedVersion(on: connection) == SyncFormatTable.currentVersion)
        #expect(try connection.rows("SELECT count(*) FROM _sync_replica_number").first?.first == .integer(2))
        #expect(try connection.rows("SELECT typeof(replica) FROM _sync_object UNION SELECT typeof(replica) FROM _sync_edge")
            .map(\.first) == [.text("integer")])
        #expect(describe(try storedEdges()) == edgesBefore)
        #expect(try reopened.heldHistory() == history)
        #expect(try TestReplica.digest(of: a.path) == digest)
        // Merges go on from the numbered tables: the peer's move of its member converges.
        let comets = Team()
        comets.name = "Comets"
        b.context.insert(comets)
        recruit.team = comets
        try b.context.save()
        _ = try reopened.apply(try b.replica.changeSets(missingFrom: try reopened.versionVector()))
        _ = try b.replica.apply(try reopened.changeSets(missingFrom: try b.replica.versionVector()))
        #expect(try TestReplica.digest(of: a.path) == b.digest())
        let context = try reopened.store.makeContext()
        #expect(try context.object(Member.self, id: recruit.objectID)?.team?.objectID == comets.objectID)
        #expect(try reopened.record("Team", id: team.objectID) != nil)
    }

    @Test func aMigrationThatFailsLeavesTheStoreAsItWas() throws {
        let (a, _) = try StoreFormatTests.unversionedStore()
        // An older store's one-row-per-entry journal, with an entry the migration cannot read.
        let connection = try SQLiteConnection(path: a.path)
        try connection.execute("""
            CREATE TABLE _sync_journal (number INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL,
                entity TEXT NOT NULL, object TEXT NOT NULL, property TEXT, winner TEXT, loser TEXT NOT NULL,
                cause_replica TEXT NOT NULL, cause_seq INTEGER NOT NULL, detail TEXT NOT NULL)
            """)
        try connection.run("INSERT INTO _sync_journal (kind, entity, object, loser, cause_replica, cause_seq, detail) VALUES ('no_such_kind', 'Team', ?, '{}', ?, 1, '')",
                           [.text(UUID().storageText), .text(a.replica.replicaID.storageText)])
        let error = try #require(throws: SyncError.self) { try SyncReplica(store: try ObjectStore(path: a.path, entities: syncEntities)) }
        #expect(error.code == .notSyncable)
        #expect(error.message.contains("_sync_journal"), "\(error)")
        #expect(try SyncFormatTable.storedVersion(on: connection) == 0)
        #expect(try connection.rows("SELECT count(*) FROM _sync_journal").first?.first == .integer(1))
    }

    @Test func aStoreOfANewerFormatIsRefusedNamingTheFileAndBothVersions() throws {
        let a = try TestReplica(name: "newer")
        let newer = SyncFormatTable.currentVersion + 1
        try SQLiteConnection(path: a.path).run("UPDATE _sync_format SET version = ?", [.integer(newer)])

        let error = try #require(throws: SyncError.self) { try SyncReplica(store: try ObjectStore(path: a.path, entities: syncEntities)) }
        #expect(error.code == .unsupportedStoreFormat)
        #expect(error.message.contains(a.path), "\(error)")
        #expect(error.message.contains("version \(newer)") && error.message.contains("version \(SyncFormatTable.currentVersion)"), "\(error)")
        let adoptError = try #require(throws: SyncError.self) { try SyncReplica.adoptSnapshot(at: a.path) }
        #expect(adoptError.code == .unsupportedStoreFormat)
        // Refused without a change: the replica keeps its identity.
        #expect(try SyncStateTable.replicaID(on: SQLiteConnection(path: a.path)) == a.replica.replicaID)
        #expect(try SyncFormatTable.storedVersion(on: SQLiteConnection(path: a.path)) == newer)
    }
}

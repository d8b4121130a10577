import Codecs
import Foundation
import LocalStoreCore

/// `_sync_compacted`: the HLC and vector of change sets whose operations history compaction
/// dropped, kept only for those a future merge still looks up: the change sets that made a delete
/// (a delete root's vector says which edges its deleter had seen, its HLC stamps journal entries)
/// and those that created an object with uniqueness values (their vectors say whether two
/// creations were concurrent). Created by the first compaction.
///
/// The compaction point (the join of every stable vector a compaction used) and the report of the
/// last compaction live in ``SyncStateTable`` under `compacted_vector` and `last_compaction`.
enum CompactionTable {
    static let createStatements = [
        """
        CREATE TABLE IF NOT EXISTS _sync_compacted (replica BLOB NOT NULL, seq INTEGER NOT NULL, hlc INTEGER NOT NULL,
            vector TEXT NOT NULL, PRIMARY KEY (replica, seq)) WITHOUT ROWID
        """,
    ]

    /// Whether the file has the table, that is, was ever compacted.
    static func exists(on connection: SQLiteConnection) throws -> Bool {
        try !connection.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sync_compacted'").isEmpty
    }

    /// The vector and HLC kept for the dropped change set `dot`, `nil` when none is kept.
    static func kept(_ dot: Dot, on connection: SQLiteConnection) throws -> (hlc: HLC, vector: VersionVector)? {
        guard try exists(on: connection),
              let row = try connection.rows("SELECT hlc, vector FROM _sync_compacted WHERE replica = ? AND seq = ?",
                                            dot.values).first,
              case .integer(let hlc) = row[0], case .text(let json) = row[1] else { return nil }
        return (HLC(rawValue: UInt64(bitPattern: hlc)), try vector(json, of: "the kept vector of compacted change set \(dot)"))
    }

    /// Runs `body` with the name of a temporary table (columns `replica, seq`) holding `stable`,
    /// emptied afterwards: the vector the statements of a compaction join against.
    static func withStableVector<T>(_ stable: VersionVector, on connection: SQLiteConnection, _ body: (String) throws -> T) throws -> T {
        try withDots(stable.entries.map { Dot(replica: $0.key, seq: $0.value) }, on: connection, body)
    }

    /// Runs `body` with the name of an empty temporary table (columns `entity, id`) for the
    /// objects a compaction settles, emptied afterwards.
    static func withSettledObjects<T>(on connection: SQLiteConnection, _ body: (String) throws -> T) throws -> T {
        try connection.execute("CREATE TEMP TABLE IF NOT EXISTS _sync_settled (entity TEXT NOT NULL, id BLOB NOT NULL, PRIMARY KEY (entity, id)) WITHOUT ROWID")
        try connection.execute("DELETE FROM temp._sync_settled")
        defer { try? connection.execute("DELETE FROM temp._sync_settled") }
        return try body("temp._sync_settled")
    }

    /// Removes from `table` (columns `entity, id`) the objects `excluded` (columns `entity, id`) holds.
    static func removeObjects(in excluded: String, from table: String, on connection: SQLiteConnection) throws {
        try connection.execute("DELETE FROM \(table) WHERE (entity, id) IN (SELECT entity, id FROM \(excluded))")
    }

    /// Runs `body` with the name of a temporary table (columns `replica, seq`) holding `dots`,
    /// emptied afterwards.
    static func withDots<T>(_ dots: [Dot], on connection: SQLiteConnection, _ body: (String) throws -> T) throws -> T {
        try connection.execute("CREATE TEMP TABLE IF NOT EXISTS _sync_dots (replica BLOB NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (replica, seq)) WITHOUT ROWID")
        try connection.execute("DELETE FROM temp._sync_dots")
        defer { try? connection.execute("DELETE FROM temp._sync_dots") }
        let insert = try connection.cachedStatement("INSERT OR IGNORE INTO temp._sync_dots (replica, seq) VALUES (?, ?)")
        for dot in dots {
            insert.reset()
            try insert.bind(dot.replica.storedValue, at: 1)
            try insert.bind(.integer(Int64(bitPattern: dot.seq)), at: 2)
            while try insert.step() {}
        }
        return try body("temp._sync_dots")
    }

    /// Runs `body` with the name of an empty temporary table (columns `entity, id`) for the objects
    /// whose delete records a merge may still undo or re-judge, emptied afterwards.
    static func withUnsettledObjects<T>(on connection: SQLiteConnection, _ body: (String) throws -> T) throws -> T {
        try connection.execute("CREATE TEMP TABLE IF NOT EXISTS _sync_unsettled (entity TEXT NOT NULL, id BLOB NOT NULL, PRIMARY KEY (entity, id)) WITHOUT ROWID")
        try connection.execute("DELETE FROM temp._sync_unsettled")
        defer { try? connection.execute("DELETE FROM temp._sync_unsettled") }
        return try body("temp._sync_unsettled")
    }

    /// Keeps the HLC and vector of the change sets `changeSets` selects (a ``ChangeSetTable``
    /// selection aliased `c`) that `lookedUp` (a query of `replica, seq`) names; returns how many
    /// were added and the bytes they take. Creates the table the first time.
    static func keep(_ changeSets: ChangeSetTable.Selection, lookedUp: String, on connection: SQLiteConnection) throws -> (count: Int, bytes: Int64) {
        for statement in createStatements { try connection.execute(statement) }
        let measure = "SELECT count(*), ifnull(sum(length(vector) + length(replica) + 16), 0) FROM _sync_compacted"
        let before = try connection.rows(measure).first ?? []
        try connection.execute("""
            INSERT OR IGNORE INTO _sync_compacted (replica, seq, hlc, vector) SELECT c.replica, c.seq, c.hlc, c.vector \(changeSets.sql)
            AND (c.replica, c.seq) IN (\(lookedUp))
            """)
        let after = try connection.rows(measure).first ?? []
        guard case .integer(let countBefore)? = before.first, case .integer(let bytesBefore)? = before.last,
              case .integer(let countAfter)? = after.first, case .integer(let bytesAfter)? = after.last else { return (0, 0) }
        return (Int(countAfter - countBefore), bytesAfter - bytesBefore)
    }

    /// Removes the kept HLCs and vectors that `lookedUp` (a query of `replica, seq`) no longer
    /// names: those of change sets whose deletes and creations were all forgotten.
    static func removeStamps(notIn lookedUp: String, on connection: SQLiteConnection) throws -> Int64 {
        guard try exists(on: connection) else { return 0 }
        return try SyncTables.removeRows(from: "_sync_compacted", "WHERE (replica, seq) NOT IN (\(lookedUp))",
                                         size: "length(vector) + length(replica) + 16", on: connection).bytes
    }

    // MARK: Compaction point

    /// The join of every stable vector the store was compacted with; empty when it never was.
    static func compactedVector(on connection: SQLiteConnection) throws -> VersionVector {
        guard case .text(let json)? = try connection.rows("SELECT value FROM _sync_state WHERE key = 'compacted_vector'").first?.first else {
            return VersionVector()
        }
        return try vector(json, of: "the store's compaction point")
    }

    static func setCompactedVector(_ vector: VersionVector, on connection: SQLiteConnection) throws {
        try connection.run("INSERT OR REPLACE INTO _sync_state (key, value) VALUES ('compacted_vector', ?)", [.text(json(vector))])
    }

    /// The vector below which this store holds no object deleted by an explicit delete that is
    /// not void (see `SyncTables.recordForgottenBelow`); `nil` until a compaction found none.
    static func forgottenBelow(on connection: SQLiteConnection) throws -> VersionVector? {
        guard case .text(let json)? = try connection.rows("SELECT value FROM _sync_state WHERE key = 'forgotten_below'").first?.first else {
            return nil
        }
        return try vector(json, of: "the vector the store forgot deleted objects below")
    }

    static func setForgottenBelow(_ vector: VersionVector, on connection: SQLiteConnection) throws {
        try connection.run("INSERT OR REPLACE INTO _sync_state (key, value) VALUES ('forgotten_below', ?)", [.text(json(vector))])
    }

    /// A range of one replica's change sets that a peer at `vector` lacks and the store dropped
    /// some of; `nil` when the store still holds everything the peer lacks.
    static func droppedRange(missingFrom vector: VersionVector, on connection: SQLiteConnection) throws -> (replica: ReplicaID, after: UInt64, through: UInt64)? {
        let compacted = try compactedVector(on: connection)
        guard !vector.dominates(compacted) else { return nil }
        // Only dropped change sets count: the store may still hold the peer's missing ones (an
        // unacknowledged change set stays whatever the stable vector says).
        for (replica, seq) in compacted.entries.sorted(by: { $0.key.uuidString < $1.key.uuidString }) where seq > vector[replica] {
            let stored = try connection.rows("SELECT count(*) FROM _sync_changeset WHERE replica = ? AND seq > ? AND seq <= ?",
                                             [replica.storedValue, .integer(Int64(vector[replica])), .integer(Int64(seq))]).first?.first
            guard case .integer(let count)? = stored, UInt64(count) == seq - vector[replica] else { return (replica, vector[replica], seq) }
        }
        return nil
    }

    // MARK: Report

    /// The report of the last compaction that dropped something, `nil` before the first.
    static func lastCompaction(on connection: SQLiteConnection) throws -> SyncReplica.HistoryCompaction? {
        guard case .text(let json)? = try connection.rows("SELECT value FROM _sync_state WHERE key = 'last_compaction'").first?.first else {
            return nil
        }
        return try? JSONDecoder().decode(SyncReplica.HistoryCompaction.self, from: Data(json.utf8))
    }

    static func setLastCompaction(_ report: SyncReplica.HistoryCompaction, on connection: SQLiteConnection) throws {
        let json = String(decoding: try JSONEncoder().encode(report), as: UTF8.self)
        try connection.run("INSERT OR REPLACE INTO _sync_state (key, value) VALUES ('last_compaction', ?)", [.text(json)])
    }

    // MARK: Vectors as text

    static func json(_ vector: VersionVector) -> String {
        var writer = JSONWriter(reservingCapacity: 16 + 48 * vector.entries.count, escapingSlashes: true)
        writer.writeReplicaMap(vector.entries)
        return writer.string
    }

    static func vector(_ json: String, of what: String) throws -> VersionVector {
        do {
            return VersionVector(try JSONReader.read(json) { try $0.readReplicaMap() })
        } catch let error as JSONReadError {
            throw SyncError(.notSyncable, "\(what) is damaged: \(error)")
        }
    }
}

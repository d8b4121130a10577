import Foundation
import LocalStoreCore

extension SyncTables {
    /// Drops the history below `stable` that no future merge can consult (see
    /// ``SyncReplica/compactHistory(stable:droppingDeletedObjects:)`` for the rules and why each holds), inside the
    /// caller's transaction. `stable` must already be lowered to what this store may use; with
    /// `droppingDeletedObjects` false, the tombstones, stamps and positions of deleted objects stay.
    static func compactHistory(stable: VersionVector, droppingDeletedObjects: Bool, on connection: SQLiteConnection) throws -> SyncReplica.HistoryCompaction {
        var report = SyncReplica.HistoryCompaction(stable: stable)
        guard !stable.entries.isEmpty else { return report }
        for statement in CompactionTable.createStatements { try connection.execute(statement) }
        try connection.execute("CREATE TEMP TABLE IF NOT EXISTS _sync_stable (replica TEXT PRIMARY KEY NOT NULL, seq INTEGER NOT NULL) WITHOUT ROWID")
        try connection.execute("DELETE FROM temp._sync_stable")
        for (replica, seq) in stable.entries {
            try connection.run("INSERT INTO temp._sync_stable (replica, seq) VALUES (?, ?)", [.text(replica.storageText), .integer(Int64(seq))])
        }
        defer { try? connection.execute("DELETE FROM temp._sync_stable") }

        // Change sets at or below the stable vector that the outbox is done with: another
        // replica's, or this replica's once the server acknowledged them. Pending and sent ones
        // stay (the outbox still has to push them, whatever other replicas hold), and so do the
        // ones applied in part (a newer schema merges them again).
        let droppable = """
            FROM _sync_changeset AS c JOIN temp._sync_stable AS s ON s.replica = c.replica AND c.seq <= s.seq
            WHERE c.status IN ('\(OutboxStatus.acknowledged.rawValue)', '\(OutboxStatus.remote.rawValue)')
            AND NOT EXISTS (SELECT 1 FROM _sync_kept AS k WHERE k.replica = c.replica AND k.seq = c.seq)
            """
        // What a future merge looks up of a dropped change set: a delete root's vector and HLC,
        // and the creation vector of an object with uniqueness values.
        let keptBefore = try count("SELECT count(*) FROM _sync_compacted", on: connection)
        try connection.execute("""
            INSERT OR IGNORE INTO _sync_compacted (replica, seq, hlc, vector) SELECT c.replica, c.seq, c.hlc, c.vector \(droppable)
            AND EXISTS (SELECT 1 FROM _sync_delete AS d WHERE d.replica = c.replica AND d.seq = c.seq)
            """)
        try connection.execute("""
            INSERT OR IGNORE INTO _sync_compacted (replica, seq, hlc, vector)
            SELECT c.replica, c.seq, c.hlc, c.vector FROM _sync_unique_value AS u
            JOIN _sync_object AS o ON o.entity = u.entity AND o.id = u.id
            JOIN _sync_changeset AS c ON c.replica = o.replica AND c.seq = o.seq
            JOIN temp._sync_stable AS s ON s.replica = c.replica AND c.seq <= s.seq
            WHERE c.status IN ('\(OutboxStatus.acknowledged.rawValue)', '\(OutboxStatus.remote.rawValue)')
            AND NOT EXISTS (SELECT 1 FROM _sync_kept AS k WHERE k.replica = c.replica AND k.seq = c.seq)
            """)
        report.changeSetStampsKept = try count("SELECT count(*) FROM _sync_compacted", on: connection) - keptBefore
        let keptBytes = try count("SELECT ifnull(sum(length(vector) + length(replica) + 16), 0) FROM _sync_compacted", on: connection)
        let dropped = try connection.rows("""
            SELECT count(*), ifnull(sum(length(c.operations) + length(c.vector) + ifnull(length(c.authenticator), 0) + length(c.replica) + 24), 0) \(droppable)
            """).first ?? []
        if case .integer(let changeSets)? = dropped.first, case .integer(let bytes)? = dropped.last {
            report.changeSets = Int(changeSets)
            report.bytes += bytes
        }
        try connection.execute("DELETE FROM _sync_changeset WHERE (replica, seq) IN (SELECT c.replica, c.seq \(droppable))")
        report.bytes -= Int64(try count("SELECT ifnull(sum(length(vector) + length(replica) + 16), 0) FROM _sync_compacted", on: connection) - keptBytes)

        if droppingDeletedObjects { try dropDeletedObjects(into: &report, on: connection) }
        var compacted = try CompactionTable.compactedVector(on: connection)
        compacted.merge(stable)
        try CompactionTable.setCompactedVector(compacted, on: connection)
        if report.droppedRows > 0 { try CompactionTable.setLastCompaction(report, on: connection) }
        return report
    }

    /// Drops the tombstones, stamps and positions of objects deleted for good below the stable
    /// vector in `temp._sync_stable`, counting them in `report`.
    private static func dropDeletedObjects(into report: inout SyncReplica.HistoryCompaction, on connection: SQLiteConnection) throws {
        // Deleted objects whose delete can never be undone: an explicit delete (not a cascade a
        // merge added, which later edges re-judge) at or below the stable vector whose root is not
        // void. Only a change set concurrent with the delete could void it or write to the object,
        // and every future change set is causally after it.
        try connection.execute("CREATE TEMP TABLE IF NOT EXISTS _sync_settled (entity TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (entity, id)) WITHOUT ROWID")
        try connection.execute("DELETE FROM temp._sync_settled")
        defer { try? connection.execute("DELETE FROM temp._sync_settled") }
        try connection.execute("""
            INSERT INTO temp._sync_settled (entity, id) SELECT o.entity, o.id FROM _sync_object AS o
            WHERE o.tombstone IS NOT NULL AND o.tombstone <> '{}' AND EXISTS (
                SELECT 1 FROM _sync_delete AS d JOIN temp._sync_stable AS s ON s.replica = d.replica AND d.seq <= s.seq
                WHERE d.entity = o.entity AND d.id = o.id AND d.implicit = 0
                AND NOT EXISTS (SELECT 1 FROM _sync_void AS v WHERE v.replica = d.replica AND v.seq = d.seq AND v.root = d.root))
            """)
        // The last values stay only to bring the object back when its delete is voided.
        report.bytes += Int64(try count("""
            SELECT ifnull(sum(length(tombstone) - 2), 0) FROM _sync_object WHERE (entity, id) IN (SELECT entity, id FROM temp._sync_settled)
            """, on: connection))
        try connection.execute("UPDATE _sync_object SET tombstone = '{}' WHERE (entity, id) IN (SELECT entity, id FROM temp._sync_settled)")
        report.tombstones = connection.changes
        // Stamps decide between a write and a concurrent one, and nothing can write to the object again.
        let stamps = try FieldStampTable.remove(objectsIn: "temp._sync_settled", on: connection)
        report.bytes += stamps.bytes
        report.fieldStamps = stamps.stamps
        // Positions order live members of live owners; the object is neither again.
        report.bytes += Int64(try count("""
            SELECT ifnull(sum(length(entity) + length(id) + length(relationship) + length(member) + length(key) + length(replica) + 16), 0)
            FROM _sync_position WHERE (entity, id) IN (SELECT entity, id FROM temp._sync_settled) OR member IN (SELECT id FROM temp._sync_settled)
            """, on: connection))
        try connection.execute("""
            DELETE FROM _sync_position WHERE (entity, id) IN (SELECT entity, id FROM temp._sync_settled) OR member IN (SELECT id FROM temp._sync_settled)
            """)
        report.positions = connection.changes
    }

    private static func count(_ sql: String, on connection: SQLiteConnection) throws -> Int {
        if case .integer(let value)? = try connection.rows(sql).first?.first { return Int(value) }
        return 0
    }
}

import Foundation
import LocalStoreCore

extension SyncReplica {
    /// What one ``SyncReplica/compactHistory(stable:droppingDeletedObjects:)`` dropped.
    public struct HistoryCompaction: Sendable, Equatable, Codable {
        /// The stable vector the compaction used: the one it was given, lowered to this store's
        /// vector and below this replica's unacknowledged change sets that do not cover it.
        public var stable: VersionVector
        /// Change sets dropped from the store (their operations are gone).
        public var changeSets: Int = 0
        /// Of those, the ones whose HLC and vector stay (`_sync_compacted`): change sets that
        /// deleted objects or created objects with uniqueness values, which later merges look up.
        /// They go again, in the same compaction or a later one, once every object they concern
        /// is forgotten (``forgottenObjects``).
        public var changeSetStampsKept: Int = 0
        /// Deleted objects whose last values were dropped.
        public var tombstones: Int = 0
        /// Attribute stamps of those deleted objects.
        public var fieldStamps: Int = 0
        /// Ordered-relationship positions of those deleted objects, as owner or member.
        public var positions: Int = 0
        /// Removed edge additions that can never show again and that no merge to come asks
        /// about (`_sync_edge`): addition and removal at or below the stable vector.
        public var removedEdges: Int = 0
        /// Deleted objects forgotten altogether: their creation rows, delete records, edges,
        /// uniqueness and counter records, once no merge to come can re-judge their deletes.
        public var forgottenObjects: Int = 0
        /// Edge additions, removed or hidden by a delete, that went with the forgotten objects.
        public var forgottenEdges: Int = 0
        /// Bytes of the rows dropped (operations, vectors, values, stamps), net of what stays;
        /// the file shrinks by the freed pages only, see ``fileBytesFreed``.
        public var bytes: Int64 = 0
        /// How many bytes smaller the store file and its WAL are after the compaction than before
        /// it: the freed pages go back to the file system (an incremental vacuum, or once a whole
        /// `VACUUM` that switches the store to incremental vacuuming, then a WAL checkpoint).
        public var fileBytesFreed: Int64 = 0
        /// Whether nothing was dropped because the store keeps change sets for a newer schema:
        /// the upgrade merges the whole history again, which needs all of it.
        public var heldForNewerSchema = false

        /// A report of nothing dropped yet, with `stable`.
        public init(stable: VersionVector) {
            self.stable = stable
        }

        /// Rows dropped, of every kind.
        public var droppedRows: Int { changeSets + tombstones + fieldStamps + positions + removedEdges + forgottenObjects + forgottenEdges }

        private enum CodingKeys: String, CodingKey {
            case stable, changeSets, changeSetStampsKept, tombstones, fieldStamps, positions, removedEdges, forgottenObjects, forgottenEdges, bytes
            case fileBytesFreed, heldForNewerSchema
        }

        /// Reads a report as ``encode(to:)`` wrote it (the stable vector as replica ID → seq).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let entries = try container.decode([String: UInt64].self, forKey: .stable)
            stable = VersionVector(Dictionary(uniqueKeysWithValues: entries.compactMap { key, seq in UUID(uuidString: key).map { ($0, seq) } }))
            changeSets = try container.decode(Int.self, forKey: .changeSets)
            changeSetStampsKept = try container.decode(Int.self, forKey: .changeSetStampsKept)
            tombstones = try container.decode(Int.self, forKey: .tombstones)
            fieldStamps = try container.decode(Int.self, forKey: .fieldStamps)
            positions = try container.decode(Int.self, forKey: .positions)
            removedEdges = try container.decodeIfPresent(Int.self, forKey: .removedEdges) ?? 0
            forgottenObjects = try container.decodeIfPresent(Int.self, forKey: .forgottenObjects) ?? 0
            forgottenEdges = try container.decodeIfPresent(Int.self, forKey: .forgottenEdges) ?? 0
            bytes = try container.decode(Int64.self, forKey: .bytes)
            fileBytesFreed = try container.decodeIfPresent(Int64.self, forKey: .fileBytesFreed) ?? 0
            heldForNewerSchema = try container.decodeIfPresent(Bool.self, forKey: .heldForNewerSchema) ?? false
        }

        /// Writes the report as JSON-friendly values (the stable vector as replica ID → seq).
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(Dictionary(uniqueKeysWithValues: stable.entries.map { ($0.key.uuidString, $0.value) }), forKey: .stable)
            try container.encode(changeSets, forKey: .changeSets)
            try container.encode(changeSetStampsKept, forKey: .changeSetStampsKept)
            try container.encode(tombstones, forKey: .tombstones)
            try container.encode(fieldStamps, forKey: .fieldStamps)
            try container.encode(positions, forKey: .positions)
            try container.encode(removedEdges, forKey: .removedEdges)
            try container.encode(forgottenObjects, forKey: .forgottenObjects)
            try container.encode(forgottenEdges, forKey: .forgottenEdges)
            try container.encode(bytes, forKey: .bytes)
            try container.encode(fileBytesFreed, forKey: .fileBytesFreed)
            try container.encode(heldForNewerSchema, forKey: .heldForNewerSchema)
        }
    }

    /// Drops the history below a **stable vector** that no future merge can consult, in one
    /// transaction, and reports what it dropped. Merge outcomes (rows, relationships, journal
    /// entries of later merges) are the same as without it.
    ///
    /// `stable` must be causally stable: every active replica has applied every change set at or
    /// below it, and every change set not at or below it (stored anywhere, pushed or not) covers
    /// it, so that every change set this store applies from now on is causally after everything
    /// at or below it. syncd sends such a vector in its pull answers (`"stable"`). This replica's
    /// own unacknowledged change sets are the one part it can check: the vector is lowered below
    /// those that do not cover it (and to this store's vector), and the report names the vector used.
    ///
    /// What is dropped, and why no later merge can miss it:
    /// - **Change sets** (`_sync_changeset`) at or below the stable vector that are another
    ///   replica's, or this replica's and acknowledged. Merges read the operations of the change
    ///   sets they apply, never stored ones; every active replica has them, so no peer asks for
    ///   them (``changeSets(missingFrom:limit:)`` throws ``SyncError/Code/historyCompacted`` for
    ///   one that does). Pending and sent ones stay for the outbox, and change sets applied in part
    ///   for a newer schema stay for the second merge that schema needs. Of a dropped change set
    ///   that deleted objects, or created objects with uniqueness values, the HLC and vector stay:
    ///   re-judging a delete asks which edges its deleter had seen, and a uniqueness collision
    ///   asks whether two creations were concurrent.
    /// - **Tombstones** (the last values in `_sync_object`) of objects deleted by a **settled**
    ///   delete: explicit, at or below the stable vector, not void, and judged so on the change
    ///   sets at or below the vector alone, which every store holds (no edge of the object, nor of
    ///   a deleted object it is linked to, was added or removed above the vector); their
    ///   **attribute stamps** (`_sync_field_stamps`) and **positions** (`_sync_position`, as owner
    ///   or member). Values come back only when a deny rule voids the delete, stamps decide between
    ///   concurrent writes, and a deleted object orders nothing. Every change set still to come is
    ///   causally after the delete and was written on a store where it stood: none voids it,
    ///   writes to the object or links it. (A delete judged otherwise above the vector is not
    ///   settled: a store where an unlink above it took away the cascade that voided it holds the
    ///   delete in force, while one without that unlink holds the object alive and may link it.)
    /// - **Forgotten objects**: every record of an object deleted for good whose deletes no merge
    ///   can re-judge (all settled; no edge to an object whose delete may still be re-judged; no
    ///   uniqueness merge; delete roots whose every object goes with it): creation row, delete
    ///   records, edges, creation values, counter totals, and the kept stamps no remaining record
    ///   names. No change set still to come names the object (``HistoryCompaction/forgottenObjects``).
    ///   A server's store keeps the identifier, refusing a change set that creates it again. When
    ///   the store holds no such object below the stable vector any more, it records the vector
    ///   (``forgottenBelow()``), which its pulls report so that the server can let identifiers go.
    /// - **Removed edges** (`_sync_edge`) whose addition and removal are both at or below the
    ///   stable vector, removed by a plain `unlink` or by a delete that is not void, when neither
    ///   end has a delete record a merge may still undo or re-judge (a cascade, one above the
    ///   vector, a void one). Such an addition never shows again, a delete to come has seen it
    ///   (its deny rule skips it), and no unlink names it again.
    ///
    /// What stays: version vector, journal, live edges and the removed edges at objects whose
    /// deletes may be re-judged, the delete records of objects not forgotten, the stamps of live
    /// objects and uniqueness records.
    /// A store that keeps change sets for a newer schema drops nothing
    /// (``HistoryCompaction/heldForNewerSchema``): its upgrade merges the whole history again.
    /// A compacted store cannot merge its whole history again under another schema (one that
    /// renames something, or a newer schema's file opened by an older app):
    /// ``SyncReplica/init(store:wallClock:)`` then throws ``SyncError/Code/historyCompacted``,
    /// which a client answers by bootstrapping from a server's snapshot.
    ///
    /// Cheap enough to run after every pull that moved the stable vector: the change-set steps
    /// read only the rows at or below it, the tombstone step one pass over the deleted objects.
    ///
    /// **File size.** After dropping rows, the freed pages go back to the file system, so the
    /// store file shrinks (``HistoryCompaction/fileBytesFreed``): the first compaction that frees
    /// a quarter of the file's pages runs one whole `VACUUM`, which switches the store to
    /// `auto_vacuum = INCREMENTAL`; every later one an incremental vacuum of the freed pages only.
    /// A WAL checkpoint follows, so the WAL does not keep the size.
    ///
    /// **Older apps.** A replica whose schema is older than the dataset's may not apply a newer
    /// app's delete (of an entity it knows under another name) and edit the object afterwards, in
    /// change sets causally after the delete: a deny rule may then void the delete and bring the
    /// object back with its last values. While such a replica is active (syncd knows: it
    /// registered an `older` schema), pass `droppingDeletedObjects: false`, which keeps the
    /// tombstones, stamps and positions of deleted objects and every removed edge, and drops
    /// change sets alone.
    ///
    /// - Parameters:
    ///   - stable: the dataset's stable vector.
    ///   - droppingDeletedObjects: whether the last values, stamps and positions of objects
    ///     deleted for good, and removed edges, go too (the default); `false` while a replica on
    ///     an older schema is active.
    /// - Throws: ``SyncError`` when the store cannot be read or written; nothing is dropped then.
    @discardableResult
    public func compactHistory(stable: VersionVector, droppingDeletedObjects: Bool = true) throws -> HistoryCompaction {
        try withConnection { connection in
            let bytesBefore = StoreFileSpace.fileBytes(of: connection.path)
            var report = try connection.inTransaction {
                var usable = SyncReplica.meet(stable, try VersionVectorTable.vector(on: connection))
                // An unacknowledged change set of this replica that does not cover the vector is
                // concurrent with some change set at or below it and has yet to reach the others:
                // what it may meet must stay until it covers the vector.
                var unacknowledged = try ChangeSetTable.unacknowledgedVectors(of: replicaID, on: connection)
                while let notCovering = unacknowledged.first(where: { !usable.covers($0.dot) && !$0.vector.dominates(usable) }) {
                    usable = SyncReplica.meet(usable, notCovering.vector)
                    unacknowledged.removeAll { $0.dot == notCovering.dot }
                }
                guard try KeptChangeSetTable.count(on: connection) == 0 else {
                    var report = HistoryCompaction(stable: usable)
                    report.heldForNewerSchema = true
                    return report
                }
                return try SyncTables.compactHistory(stable: usable, droppingDeletedObjects: droppingDeletedObjects, on: connection)
            }
            if report.droppedRows > 0 {
                report.fileBytesFreed = StoreFileSpace.reclaim(on: connection, bytesBefore: bytesBefore)
                // The stored report (what `heldHistory()` shows) learns the freed bytes too; the
                // checkpoint after it leaves the WAL empty, as the measurement found it.
                try CompactionTable.setLastCompaction(report, on: connection)
                StoreFileSpace.truncateWAL(on: connection)
            }
            return report
        }
    }

    /// What this replica reports to a server when it pulls, of the change sets it has written and
    /// not had acknowledged: where its oldest one had seen less than the store holds now, how
    /// much (see ``UnpushedBounds``). The server keeps its stable vector below these, so that no
    /// replica compacts history those change sets may still meet.
    public func unpushedBounds() throws -> UnpushedBounds {
        try withConnection { connection in
            var bounds = UnpushedBounds(held: try VersionVectorTable.vector(on: connection),
                                        oldestUnpushed: try ChangeSetTable.oldestUnacknowledgedVector(of: replicaID, on: connection))
            // Its own entry needs no bound: every change set it writes covers its earlier ones.
            bounds.seqs[replicaID] = nil
            return bounds
        }
    }

    /// What this replica reports to a server when it pulls, of the deleted objects it forgot:
    /// the vector below which it holds no object deleted by an explicit delete that is not void,
    /// recorded by the last compaction that found none (the join of those it found), `nil` while
    /// none did. The server keeps the identifiers of the objects it forgot until every active
    /// replica reported a vector at or above the compaction that forgot them: until then, a
    /// replica may still hold a record that a create of the same identifier would meet.
    public func forgottenBelow() throws -> VersionVector? {
        try withConnection { try CompactionTable.forgottenBelow(on: $0) }
    }

    /// The vector below both: per replica, the smaller seq.
    static func meet(_ first: VersionVector, _ second: VersionVector) -> VersionVector {
        VersionVector(first.entries.reduce(into: [:]) { result, entry in result[entry.key] = min(entry.value, second[entry.key]) })
    }

    /// The join of every stable vector this store was compacted with (empty when it never was):
    /// change sets at or below it may be gone.
    public func compactedVector() throws -> VersionVector {
        try withConnection { try CompactionTable.compactedVector(on: $0) }
    }
}

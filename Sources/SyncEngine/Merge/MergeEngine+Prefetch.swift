import Codecs
import Foundation
import LocalStoreCore

extension MergeEngine {
    /// Objects per statement when reading in bulk: well under SQLite's limit of bound parameters.
    static let objectsPerRead = 500

    /// Reads what the `set`s of a remote change set need about the objects they write, a few
    /// hundred objects per statement: creation stamps, whether deleted, and attribute stamps.
    /// Returns each operation's object, for the `set`s (nil for other operations, and for
    /// objects the change set creates or that do not exist).
    ///
    /// One lookup of each per object was most of a merge of attribute changes: three statements
    /// for every object, each costing more than the rest of the object's work. Rows are read in
    /// bulk too, but only once a conflict needs their values (``currentValues(of:object:known:)``).
    func prefetch(_ changeSet: ChangeSet) throws -> [ObjectInfo?] {
        var resolved = [ObjectInfo?](repeating: nil, count: changeSet.operations.count)
        var missing: [String: [UUID]] = [:]
        var unresolved: [(index: Int, key: ObjectKey)] = []
        var seen: Set<ObjectKey> = []
        // Objects this change set creates have nothing stored to read (their creates come first).
        var created: Set<ObjectKey> = []
        for (index, operation) in changeSet.operations.enumerated() {
            if case .create(let entity, let id) = operation { created.insert(ObjectKey(entity: entity, id: id)) }
            guard case .set(let entity, let id, _, _) = operation else { continue }
            let key = ObjectKey(entity: entity, id: id)
            if let known = objects[key] {
                resolved[index] = known
                continue
            }
            if !created.isEmpty, created.contains(key) { continue }
            unresolved.append((index, key))
            if seen.insert(key).inserted { missing[entity, default: []].append(id) }
        }
        // The objects read now are the likely rows a conflict wants (see loadRowValues).
        rowCandidates = missing
        rowsScanned = []
        guard !missing.isEmpty else { return resolved }
        try flushPendingInserts()
        // In name order, though the order changes nothing but the order of reads.
        for (entity, ids) in missing.sorted(by: { $0.key < $1.key }) {
            for chunk in MergeEngine.chunks(of: ids) { try loadInfo(entity, chunk) }
        }
        for (index, key) in unresolved { resolved[index] = objects[key] }
        return resolved
    }

    private func loadInfo(_ entity: String, _ ids: ArraySlice<UUID>) throws {
        try loadFieldStamps(entity, of: try loadObjects(entity, ids))
    }

    /// Reads the creation stamps of these objects of `entity` and whether they have a row or a
    /// delete, and keeps them for the batch; returns those found.
    func loadObjects(_ entity: String, _ ids: ArraySlice<UUID>) throws -> [UUID: ObjectInfo] {
        var loaded: [UUID: ObjectInfo] = [:]
        try connection.forEachRow(
            """
            SELECT id, hlc, replica, seq, tombstone IS NULL,
                EXISTS (SELECT 1 FROM _sync_delete AS d WHERE d.entity = o.entity AND d.id = o.id)
            FROM _sync_object AS o WHERE entity = ? AND id IN (\(MergeEngine.placeholders(ids.count)))
            """, [.text(entity)] + ids.map { .text($0.storageText) }
        ) { row in
            guard let id = row.uuid(at: 0), let stamp = MergeEngine.stamp(row, at: 1) else { return }
            let known = ObjectInfo(creation: stamp, hasRow: row.integer(at: 4) == 1, mayBeDeleted: row.integer(at: 5) != 0)
            loaded[id] = known
            objects[ObjectKey(entity: entity, id: id)] = known
        }
        return loaded
    }

    /// Reads the `_sync_field` stamps of these objects of `entity` (none stored: an empty set).
    func loadFieldStamps(_ entity: String, of loaded: [UUID: ObjectInfo]) throws {
        guard !loaded.isEmpty else { return }
        for known in loaded.values { known.storedFieldStamps = [:] }
        // Rows come in primary-key order, an object's fields together, from a few replicas:
        // parse an identifier only when it differs from the previous row's.
        var object = RepeatedUUID(), replica = RepeatedUUID()
        var stamps: [String: Stamp] = [:]
        var owner: ObjectInfo?
        try connection.forEachRow(
            "SELECT id, field, hlc, replica, seq FROM _sync_field WHERE entity = ? AND id IN (\(MergeEngine.placeholders(loaded.count)))",
            [.text(entity)] + loaded.keys.map { .text($0.storageText) }
        ) { row in
            if object.update(row.textBytes(at: 0)) {
                owner?.storedFieldStamps = stamps
                owner = object.value.flatMap { loaded[$0] }
                // What an earlier run of this object's rows gave, should SQLite ever split them.
                stamps = owner?.storedFieldStamps ?? [:]
            }
            guard owner != nil, case .text(let field) = row.value(at: 1) else { return }
            replica.update(row.textBytes(at: 3))
            guard let replicaID = replica.value else { return }
            stamps[field] = Stamp(hlc: HLC(rawValue: UInt64(bitPattern: row.integer(at: 2))), replica: replicaID, seq: UInt64(row.integer(at: 4)))
        }
        owner?.storedFieldStamps = stamps
    }

    /// The UUID of the text in a column that often repeats the previous row's.
    private struct RepeatedUUID {
        private var text: [UInt8] = []
        private(set) var value: UUID?

        /// Takes `bytes` (parsing them if they differ from the last ones); true if they differed.
        @discardableResult
        mutating func update(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            if bytes.count == text.count,
               bytes.isEmpty || text.withUnsafeBufferPointer({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }) {
                return false
            }
            text = Array(bytes)
            value = UUID(storageTextBytes: bytes)
            return true
        }
    }

    /// Reads the attribute columns of `object`'s row, and with it those of the other objects of
    /// its entity the change set writes that have not been read yet.
    func loadRowValues(of object: ObjectKey, _ known: ObjectInfo) throws {
        let entity = try schema.requireEntity(object.entity, in: "read")
        if rowCandidates[object.entity] == nil, rowsScanned.insert(object.entity).inserted {
            // No candidates left (the objects were known before this change set): the change
            // set's other sets of the entity, once, so a run of conflicts still reads in bulk.
            rowCandidates[object.entity] = current.operations.compactMap {
                if case .set(object.entity, let id, _, _) = $0 { id } else { nil }
            }
        }
        var ids = [object.id]
        var seen: Set<UUID> = [object.id]
        for id in rowCandidates[object.entity] ?? [] where seen.insert(id).inserted {
            if let other = objects[ObjectKey(entity: object.entity, id: id)], other.hasRow, other.storedRowValues == nil { ids.append(id) }
        }
        // Each object is a candidate once: later conflicts on them find their rows read.
        rowCandidates[object.entity] = nil
        let columnCount = entity.attributeColumns.count
        known.storedRowValues = Array(repeating: .null, count: columnCount)
        for chunk in MergeEngine.chunks(of: ids) {
            try connection.forEachRow("\(entity.selectAttributeColumns) WHERE id IN (\(MergeEngine.placeholders(chunk.count)))",
                                      chunk.map { .text($0.storageText) }) { row in
                guard let id = row.uuid(at: 0), let reading = objects[ObjectKey(entity: object.entity, id: id)] else { return }
                reading.storedRowValues = (0..<columnCount).map { row.value(at: $0 + 1) }
            }
        }
    }

    static func chunks(of ids: [UUID]) -> [ArraySlice<UUID>] {
        stride(from: 0, to: ids.count, by: objectsPerRead).map { ids[$0..<min($0 + objectsPerRead, ids.count)] }
    }

    /// `?, ?, …`: `count` parameters for an `IN` list.
    static func placeholders(_ count: Int) -> String {
        String(repeating: "?, ", count: count - 1) + "?"
    }
}

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
        // A held run's writes first: the objects it reads would otherwise be read again, stale.
        try resolveHeldSets()
        var resolved = [ObjectInfo?](repeating: nil, count: changeSet.operations.count)
        var missing: [String: [UUID]] = [:]
        var unresolved: [(index: Int, key: ObjectKey)] = []
        var seen: Set<ObjectKey> = []
        // Objects this change set creates have nothing stored to read (their creates come first).
        var created: Set<ObjectKey> = []
        // Operations are read in place: copying each out of the array retained its values.
        changeSet.operations.withUnsafeBufferPointer { operations in
            for index in operations.indices {
                let key: ObjectKey
                switch operations[index] {
                case .create(let entity, let id):
                    created.insert(ObjectKey(entity: entity, id: id))
                    continue
                case .set(let entity, let id, _, _):
                    key = ObjectKey(entity: entity, id: id)
                default:
                    continue
                }
                if let known = objects[key] {
                    resolved[index] = known
                    continue
                }
                if !created.isEmpty, created.contains(key) { continue }
                unresolved.append((index, key))
                if seen.insert(key).inserted { missing[key.entity, default: []].append(key.id) }
            }
        }
        // The objects read now are the likely rows a conflict wants (see loadRowValues); the
        // objects created are looked for at once, and those the store lacks remembered.
        readAhead.reset(to: missing, absentCreations: try absentObjects(created))
        guard !missing.isEmpty else { return resolved }
        // In name order, though the order changes nothing but the order of reads.
        for (entity, ids) in missing.sorted(by: { $0.key < $1.key }) {
            for chunk in MergeEngine.chunks(of: ids) { try loadInfo(entity, chunk) }
        }
        for (index, key) in unresolved { resolved[index] = objects[key] }
        return resolved
    }

    /// Of `keys`, those neither the batch nor the store holds, read a few hundred per statement
    /// (those the store holds are kept for the batch, as any read object is).
    private func absentObjects(_ keys: Set<ObjectKey>) throws -> Set<ObjectKey> {
        var unknown: [String: [UUID]] = [:]
        for key in keys where objects[key] == nil { unknown[key.entity, default: []].append(key.id) }
        var absent: Set<ObjectKey> = []
        for (entity, ids) in unknown.sorted(by: { $0.key < $1.key }) {
            for chunk in MergeEngine.chunks(of: ids) {
                let found = try loadObjects(entity, chunk)
                for id in chunk where found[id] == nil { absent.insert(ObjectKey(entity: entity, id: id)) }
            }
        }
        return absent
    }

    /// Reads what ``loadObjects(_:_:)`` and ``loadFieldStamps(_:of:)`` read, for these objects of
    /// `entity`, in one statement.
    func loadInfo(_ entity: String, _ ids: ArraySlice<UUID>) throws {
        try ObjectMetadataTable.objectsWithFieldStamps(entity, ids, on: connection) { stored, stamps in
            remember(stored, of: entity).storedFieldStamps = stamps
        }
    }

    /// Reads the creation stamps of these objects of `entity` and whether they have a row or a
    /// delete, and keeps them for the batch; returns those found.
    func loadObjects(_ entity: String, _ ids: ArraySlice<UUID>) throws -> [UUID: ObjectInfo] {
        var loaded: [UUID: ObjectInfo] = [:]
        try ObjectMetadataTable.objects(entity, ids, on: connection) { stored in loaded[stored.id] = remember(stored, of: entity) }
        return loaded
    }

    /// Keeps what is stored of an object of `entity` for the batch; returns it.
    private func remember(_ stored: ObjectMetadataTable.StoredObject, of entity: String) -> ObjectInfo {
        let known = ObjectInfo(creation: stored.creation, hasRow: stored.hasRow, mayBeDeleted: stored.hasDeletes)
        objects[ObjectKey(entity: entity, id: stored.id)] = known
        return known
    }

    /// Reads the ``FieldStampTable`` stamps of these objects of `entity` (none stored: an empty set).
    func loadFieldStamps(_ entity: String, of loaded: [UUID: ObjectInfo]) throws {
        guard !loaded.isEmpty else { return }
        for known in loaded.values { known.storedFieldStamps = FieldStamps() }
        for (id, stamps) in try FieldStampTable.stamps(entity, loaded.keys, on: connection) {
            loaded[id]?.storedFieldStamps = stamps
        }
    }

    /// Reads the attribute columns of `object`'s row, and with it those of the other objects of
    /// its entity the change set writes that have not been read yet.
    func loadRowValues(of object: ObjectKey, _ known: ObjectInfo) throws {
        let entity = try schema.requireEntity(object.entity, in: "read")
        if readAhead.candidates[object.entity] == nil, readAhead.scannedEntities.insert(object.entity).inserted {
            // No candidates left (the objects were known before this change set): the change
            // set's other sets of the entity, once, so a run of conflicts still reads in bulk.
            readAhead.candidates[object.entity] = current.operations.compactMap {
                if case .set(object.entity, let id, _, _) = $0 { id } else { nil }
            }
        }
        var ids = [object.id]
        var seen: Set<UUID> = [object.id]
        for id in readAhead.candidates[object.entity] ?? [] where seen.insert(id).inserted {
            if let other = objects[ObjectKey(entity: object.entity, id: id)], other.hasRow, other.storedRowValues == nil { ids.append(id) }
        }
        // Each object is a candidate once: later conflicts on them find their rows read.
        readAhead.candidates[object.entity] = nil
        let columnCount = entity.rows.attributeColumns.count
        known.storedRowValues = Array(repeating: .null, count: columnCount)
        try entity.rows.forEachAttributeRow(ids, on: connection) { id, row in
            guard let reading = objects[ObjectKey(entity: object.entity, id: id)] else { return }
            reading.storedRowValues = (0..<columnCount).map { row.value(at: $0 + 1) }
        }
    }

    static func chunks(of ids: [UUID]) -> [ArraySlice<UUID>] {
        stride(from: 0, to: ids.count, by: objectsPerRead).map { ids[$0..<min($0 + objectsPerRead, ids.count)] }
    }
}

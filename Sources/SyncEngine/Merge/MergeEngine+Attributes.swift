import Codecs
import Foundation
import LocalStoreCore

extension MergeEngine {
    /// Applies a `set` of the current change set: by ``LastWriterWinsResolver`` (see
    /// ``applyLastWriterWins(_:to:in:known:)``), or by the attribute's merge policy.
    ///
    /// Stamps and row values are read once per object and batch, and written back by
    /// ``flushPendingWrites(keepingJournal:)``: a batch often writes many attributes of each object.
    ///
    /// `prefetched` is the object's state when the caller has it (see ``prefetch(_:)``).
    func set(_ object: ObjectKey, attribute name: String, values: [SQLValue], known prefetched: ObjectInfo? = nil) throws {
        let (entity, attribute, known) = try setTarget(object, attribute: name, values: values, known: prefetched)
        if known.createdBy == current.dot {
            // Part of the object's creation: the creation stamp stands for these writes.
            try write(values, to: attribute, of: object, in: entity, known: known)
            return
        }
        try requireSetAfterCreation(object, attribute)
        let incoming = current.stamp
        guard attribute.policy != .lastWriterWins, attribute.policy != .custom || attribute.customMerge != nil else {
            let write = LastWriterWinsSet(judged: LastWriterWinsResolver.Write(stamp: incoming, vector: current.vector, attribute: name),
                                          position: (0, 0), attribute: attribute, values: values)
            try applyLastWriterWins([write], to: object, in: entity, known: known)
            return
        }
        if known.mayBeDeleted { try journalUpdateOfDeleted(object, attribute: name, values: values, incoming: incoming) }
        if !mirror.mergedDuplicates.isEmpty { try journalWriteToMergedDuplicate(object, attribute: name, values: values) }
        let previous = try fieldStamp(object, known, name) ?? known.creation
        try mergeByPolicy(values, into: attribute, of: object, in: entity, known: known, incoming: incoming, previous: previous)
    }

    /// The entity, attribute and object a `set` of `values` names, once they are checked against the schema.
    func setTarget(_ object: ObjectKey, attribute name: String, values: [SQLValue], known prefetched: ObjectInfo?) throws
        -> (entity: SyncSchema.Entity, attribute: SyncSchema.Attribute, known: ObjectInfo) {
        let (entity, attribute) = try attributeOfSet(object.entity, name)
        guard attribute.columns.count == values.count else {
            throw SyncError(.schemaMismatch, "sets \(object.entity).\(name) with \(values.count) value(s); it has \(attribute.columns.count) column(s)")
        }
        return (entity, attribute, try prefetched ?? requireInfo(object, for: "set of \(object.entity).\(name)"))
    }

    /// Refuses a `set` of a counter outside its object's creation.
    func requireSetAfterCreation(_ object: ObjectKey, _ attribute: SyncSchema.Attribute) throws {
        if attribute.policy == .counter {
            throw SyncError(.schemaMismatch, "sets \(object.entity).\(attribute.name) of \(object.id.storageText), a counter: after its creation a counter takes only increments")
        }
    }

    /// The entity and attribute a `set` names. The last pair is kept: a change set's sets name
    /// the same few again and again, and comparing two short names costs less than hashing them.
    func attributeOfSet(_ entityName: String, _ name: String) throws -> (SyncSchema.Entity, SyncSchema.Attribute) {
        if let last = lastSetAttribute, last.attribute.name == name, last.entity.name == entityName {
            return (last.entity, last.attribute)
        }
        let entity = try schema.requireEntity(entityName, in: "set of \(name)")
        guard let attribute = entity.attribute(name) else {
            throw SyncError(.schemaMismatch, "sets \(entityName).\(name), which the schema does not have")
        }
        lastSetAttribute = (entity, attribute)
        return (entity, attribute)
    }

    /// An update arriving after a concurrent delete of its object loses to it, as `delete` journals
    /// an update that arrived first: the journal gets the entry whichever came first.
    func journalUpdateOfDeleted(_ object: ObjectKey, attribute name: String, values: [SQLValue], incoming: Stamp) throws {
        guard keepsJournal else { return }
        for delete in LastWriterWinsResolver.deletes(try deletesInForce(of: object), unseenBy: current.vector) {
            try journal(
                .updateVersusDelete, entity: object.entity, object: object.id, property: name,
                winner: side(nil, delete.stamp), loser: side(values: values, incoming),
                cause: incoming.dot, detail: MergeEngine.updateOfDeletedDetail(object, attribute: name))
        }
    }

    /// The stamp of the last write to `object`'s attribute `name`, or nil if only its creation wrote it.
    func fieldStamp(_ object: ObjectKey, _ known: ObjectInfo, _ name: String) throws -> Stamp? {
        // Most objects have no pending stamps: skip hashing the name for them.
        if !known.pendingFieldStamps.isEmpty, let pending = known.pendingFieldStamps[name] { return pending }
        if known.storedFieldStamps == nil { try loadFieldStamps(object.entity, of: [object.id: known]) }
        return known.storedFieldStamps?[name]
    }

    func notePendingWrite(_ object: ObjectKey, _ known: ObjectInfo) {
        guard !known.hasPendingWrites else { return }
        known.hasPendingWrites = true
        pending.objectsWithWrites.append((object, known))
    }

    func write(_ values: [SQLValue], to attribute: SyncSchema.Attribute, of object: ObjectKey, in entity: SyncSchema.Entity,
                       known: ObjectInfo) throws {
        if known.hasRow {
            notePendingWrite(object, known)
            if known.pendingRowValues.isEmpty {
                // Once per object and flush, not once per write.
                toMaterialize.rewrittenAttributes.insert(object.id)
                known.pendingRowValues = Array(repeating: nil, count: entity.rows.attributeColumns.count)
            }
            for (offset, value) in zip(attribute.columnOffsets, values) { known.pendingRowValues[offset] = value }
            storeChangeRecord?.attributeNames[object, default: []].insert(attribute.name)
        } else {
            // Changed where they are kept: taken out and put back, a new object's values would be
            // copied at each of its sets.
            if pending.detachedValues[object] == nil { pending.detachedValues[object] = try detachedColumns(of: object) }
            for (column, value) in zip(attribute.columns, values) { pending.detachedValues[object]?[column] = value }
            toMaterialize.affected.insert(object)
        }
    }

    /// A journal side holding the values `object`'s attribute has now: the stored row's columns
    /// themselves when no write of this batch is pending, without copying them out first.
    func currentSide(of attribute: SyncSchema.Attribute, object: ObjectKey, known: ObjectInfo, _ stamp: Stamp) throws -> JournalSide {
        if known.hasRow, known.pendingRowValues.isEmpty {
            if known.storedRowValues == nil { try loadRowValues(of: object, known) }
            if let row = known.storedRowValues { return JournalSide(value: .columns(row, attribute.columnOffsets), stamp: stamp) }
        }
        return side(values: try currentValues(of: attribute, object: object, known: known), stamp)
    }

    /// The value `object`'s attribute has now in its first column, including this batch's writes:
    /// the first of ``currentValues(of:object:known:)``, without making an array (a counter, one
    /// column, is read at every increment); nil for an attribute without columns.
    func currentFirstValue(of attribute: SyncSchema.Attribute, object: ObjectKey, known: ObjectInfo) throws -> SQLValue? {
        guard let offset = attribute.columnOffsets.first, let column = attribute.columns.first else { return nil }
        guard known.hasRow else { return try detachedColumns(of: object)[column] ?? .null }
        if !known.pendingRowValues.isEmpty, let value = known.pendingRowValues[offset] { return value }
        if known.storedRowValues == nil { try loadRowValues(of: object, known) }
        return known.storedRowValues?[offset] ?? .null
    }

    /// The values `object`'s attribute has now, including this batch's writes.
    func currentValues(of attribute: SyncSchema.Attribute, object: ObjectKey, known: ObjectInfo) throws -> [SQLValue] {
        guard known.hasRow else {
            let detached = try detachedColumns(of: object)
            return attribute.columns.map { detached[$0] ?? .null }
        }
        let pending = known.pendingRowValues
        if known.storedRowValues == nil, pending.isEmpty || attribute.columnOffsets.contains(where: { pending[$0] == nil }) {
            try loadRowValues(of: object, known)
        }
        let stored = known.storedRowValues
        return attribute.columnOffsets.map { offset in
            if !pending.isEmpty, let value = pending[offset] { return value }
            return stored?[offset] ?? .null
        }
    }

    /// The column values of an object that has no row, from this batch or its tombstone.
    func detachedColumns(of object: ObjectKey) throws -> [String: SQLValue] {
        if let values = pending.detachedValues[object] { return values }
        guard let json = try ObjectMetadataTable.tombstone(of: object, on: connection) else { return [:] }
        let decoded = try Tombstone.columns(json, of: "\(object.entity) \(object.id)")
        pending.detachedValues[object] = decoded
        return decoded
    }

    /// Writes everything the batch kept in memory: the metadata rows (see ``connection``), the
    /// attribute values and stamps (one UPDATE per object with a row, and one ``FieldStampTable``
    /// row per object written) and, unless `keepingJournal`, the journal entries. Before anything
    /// reads rows back, and as a batch's last step.
    func flushPendingWrites(keepingJournal: Bool = false) throws {
        let connection = try self.connection
        if !keepingJournal { try flushJournal() }
        try loadMissingFieldStamps()
        var stampRows = FieldStampTable.PendingRows()
        // In key order (entity, then identifier as stored): consecutive rows then land next to
        // each other in the tables' B-trees instead of on random pages, which costs SQLite a
        // fraction as much, and the order depends on nothing but the objects.
        pending.objectsWithWrites.sort { $0.key < $1.key }
        for (object, known) in pending.objectsWithWrites {
            if !known.pendingRowValues.isEmpty {
                let entity = try schema.requireEntity(object.entity, in: "write")
                for (offset, value) in known.pendingRowValues.enumerated() {
                    if let value { known.storedRowValues?[offset] = value }
                }
                try entity.rows.updateAttributes(of: object.id, known.pendingRowValues, on: connection)
                known.pendingRowValues = []
            }
            if !known.pendingFieldStamps.isEmpty {
                var stamps = known.storedFieldStamps ?? FieldStamps()
                stamps.merge(known.pendingFieldStamps)
                stampRows.append(object, stamps: stamps)
                known.storedFieldStamps = stamps
                known.pendingFieldStamps = FieldStamps()
            }
            known.hasPendingWrites = false
        }
        pending.objectsWithWrites = []
        try stampRows.flush(on: connection)
    }

    /// Reads the stored stamps of the objects with new stamps whose stored ones were not read
    /// (a local save's writes win without comparing): a row holds all of an object's stamps, so
    /// it is rewritten from them.
    private func loadMissingFieldStamps() throws {
        var missing: [String: [UUID: ObjectInfo]] = [:]
        for (object, known) in pending.objectsWithWrites where known.storedFieldStamps == nil && !known.pendingFieldStamps.isEmpty {
            missing[object.entity, default: [:]][object.id] = known
        }
        for (entity, objects) in missing.sorted(by: { $0.key < $1.key }) {
            let ids = Array(objects.keys)
            for chunk in MergeEngine.chunks(of: ids) {
                try loadFieldStamps(entity, of: Dictionary(uniqueKeysWithValues: chunk.map { ($0, objects[$0]!) }))
            }
        }
    }
}

import Codecs
import Foundation
import LocalStoreCore

/// Merges change sets from other replicas into a store's sync metadata and entity tables, inside
/// the caller's transaction. (A local save's change set is recorded by ``LocalCapture``, which
/// uses this engine's metadata but neither journals nor rewrites rows LocalStore already wrote.)
///
/// Every rule is a function of the set of change sets applied, not of their arrival order:
/// attribute writes keep the largest `(HLC, replica ID)`; edges are added by `link` and only
/// removed by `unlink`s that saw them; deletes and their delete rules are recomputed from the
/// deletes and edges present (see `MergeEngine+Deletes.swift`); the entity tables are then
/// rewritten from that metadata for every object the batch touched (`MergeEngine+Materialize.swift`).
final class MergeEngine {
    let schema: SyncSchema
    /// The store's connection, reached only through ``connection``, which writes the buffered
    /// metadata rows first.
    private let storeConnection: SQLiteConnection
    /// Whether resolutions are written to the conflict journal (not on syncd's replica).
    let keepsJournal: Bool
    /// What the engine knows of each object the batch met.
    var objects: [ObjectKey: ObjectInfo] = [:]
    /// The change set being applied, and the others the batch met.
    var changeSets = BatchChangeSets()
    /// What the batch keeps in memory of the store's small sync tables.
    var mirror: StoreMirror
    /// What the batch decided to write and has not written yet (see ``connection``).
    var pending = PendingWrites()
    /// What ``materialize()`` must rewrite and judge again.
    var toMaterialize = MaterializationWork()
    /// What the count rules of the materialization in progress gather.
    var countChecks = CountChecks()
    /// What the engine read ahead for the current change set.
    var readAhead = ReadAhead()
    /// The entity and attribute of the last `set` (see `attributeOfSet`).
    var lastSetAttribute: (entity: SyncSchema.Entity, attribute: SyncSchema.Attribute)?
    /// What materializing changed in the entity tables, for the store's change subscribers; nil
    /// (not gathered) unless someone subscribes to the store's changes.
    var storeChangeRecord: StoreChangeRecord?
    /// The edges the batch read since the last edge write (see ``EdgeReadCache``); nil when the
    /// engine's caller writes edges past it (a local save's capture), except in ``materialize()``.
    var edgeReads: EdgeReadCache?
    /// While a change set is merged in slices (`MergeEngine+Slices.swift`), what must outlive one slice.
    var sliced: SlicedChangeSet?
    /// Change sets of last-writer-wins sets only, held to be resolved object by object (`MergeEngine+SetRuns.swift`).
    var setRun = SetRun()

    /// The change set whose operations are applied now.
    var current: ChangeSet { changeSets.current }

    /// - Parameter cachesEdgeReads: whether the edges read are kept until the next edge write
    ///   through the engine (``EdgeReadCache``); a caller that writes edges itself passes false.
    init(schema: SyncSchema, connection: SQLiteConnection, keepsJournal: Bool, cachesEdgeReads: Bool = true) throws {
        self.schema = schema
        storeConnection = connection
        self.keepsJournal = keepsJournal
        edgeReads = cachesEdgeReads ? EdgeReadCache() : nil
        mirror = try StoreMirror(on: connection)
    }

    /// Applies one change set's operations to the metadata and the rows of existing objects.
    ///
    /// A change set of last-writer-wins sets only is held, with the ones after it, and resolved
    /// object by object when anything else comes (see `MergeEngine+SetRuns.swift`);
    /// `onlyLastWriterWinsSets` says whether it is one, as its validation found
    /// (``ChangeSetValidator/Findings``).
    func apply(_ changeSet: ChangeSet, onlyLastWriterWinsSets: Bool) throws {
        if sliced == nil, onlyLastWriterWinsSets {
            begin(changeSet)
            setRun.changeSets.append(changeSet)
            return
        }
        try resolveHeldSets()
        begin(changeSet)
        let prefetched = try prefetch(changeSet)
        // Operations are read in place: copying each out of the array retained its values.
        try changeSet.operations.withUnsafeBufferPointer { operations in
            for index in operations.indices {
                try atOperation(index) { try apply(at: index, of: operations, known: prefetched[index]) }
            }
        }
        try resolveUniqueValues(of: changeSet)
        try VersionVectorTable.advance(to: changeSet.dot, on: connection)
    }

    /// Makes `changeSet` the one whose operations are applied next.
    func begin(_ changeSet: ChangeSet) {
        changeSets.begin(changeSet)
    }

    /// Whether the current change set had seen `dot` (``BatchChangeSets/covers(_:)``).
    func covers(_ dot: Dot) -> Bool {
        changeSets.covers(dot)
    }

    /// Runs `body`, naming the change set (`dot`, the current one's unless given) and the
    /// operation in a ``SyncError`` it throws.
    func atOperation<T>(_ index: Int, of dot: Dot? = nil, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SyncError {
            throw SyncError(error.code, "change set \(dot ?? current.dot), operation \(index): \(error.message)")
        }
    }

    /// Applies `operations[index]`, read in place (a copy of the operation would retain its values).
    func apply(at index: Int, of operations: UnsafeBufferPointer<Operation>, known: ObjectInfo?) throws {
        switch operations[index] {
        case .create(let entity, let id):
            try create(ObjectKey(entity: entity, id: id))
        case .set(let entity, let id, let attribute, let values):
            try set(ObjectKey(entity: entity, id: id), attribute: attribute, values: values, known: known)
        case .delete(let entity, let id, let root):
            try delete(ObjectKey(entity: entity, id: id), root: root)
        case .link(let entity, let id, let relationship, let target):
            try link(ObjectKey(entity: entity, id: id), relationship: relationship, target: target)
        case .unlink(let entity, let id, let relationship, let target, let observed):
            try unlink(ObjectKey(entity: entity, id: id), relationship: relationship, target: target, observed: observed)
        case .position(let entity, let id, let relationship, let member, let key):
            try position(ObjectKey(entity: entity, id: id), relationship: relationship, member: member, key: key)
        case .increment(let entity, let id, let attribute, let delta):
            try increment(ObjectKey(entity: entity, id: id), attribute: attribute, delta: delta)
        }
    }

    // MARK: Objects and attributes

    private func create(_ object: ObjectKey) throws {
        _ = try schema.requireEntity(object.entity, in: "create of \(object.id)")
        // The prefetch looked for every object the change set creates: those it did not find
        // need no second look, unless the batch created one since.
        if try objects[object] != nil || !readAhead.absentCreations.contains(object) && info(object) != nil {
            throw SyncError(.conflictingChangeSet, "creates \(object.entity) \(object.id), which already exists")
        }
        // The table is only read, and the batch never writes it: the store's connection as it
        // is, without writing the creation rows kept in memory (which `connection` would do).
        if mirror.remembersForgottenObjects == nil { mirror.remembersForgottenObjects = try ServerForgottenObjectTable.exists(on: storeConnection) }
        if mirror.remembersForgottenObjects == true, try ServerForgottenObjectTable.contains(object, on: storeConnection) {
            throw SyncError(.conflictingChangeSet, "creates \(object.entity) \(object.id), which was deleted (and its history compacted)")
        }
        let stamp = current.stamp
        // A merged creation's row is written when the batch materializes.
        pending.objectRows.append(object, creation: stamp, replicaNumber: try replicaNumber(of: stamp.replica), hasRow: false)
        let created = ObjectInfo(creation: stamp, hasRow: false, mayBeDeleted: false)
        created.createdBy = current.dot
        created.storedFieldStamps = FieldStamps()
        objects[object] = created
        // Room for every column at once: its sets fill them one by one.
        pending.detachedValues[object] = Dictionary(minimumCapacity: schema.entity(object.entity)?.rows.attributeColumns.count ?? 0)
        toMaterialize.affected.insert(object)
    }

    func info(_ object: ObjectKey) throws -> ObjectInfo? {
        // A held run's writes first: reading the object from the store would miss them.
        try resolveHeldSets()
        if let known = objects[object] { return known }
        return try loadObjects(object.entity, [object.id])[object.id]
    }

    /// The store's number of `replica`, numbering it first if the store has not yet.
    func replicaNumber(of replica: ReplicaID) throws -> SQLValue {
        // The numbering table is written by no buffered row: no need to write them first.
        try mirror.replicaNumbers.number(of: replica, on: storeConnection)
    }

    func requireInfo(_ object: ObjectKey, for what: @autoclosure () -> String) throws -> ObjectInfo {
        guard let known = try info(object) else {
            throw SyncError(.schemaMismatch, "\(what()) names \(object.entity) \(object.id), which was never created")
        }
        return known
    }

    /// The store's connection, once the ``ObjectMetadataTable`` and ``EdgeTable`` rows kept in
    /// memory are written: the only way to the store, so whatever reads or updates it sees every
    /// row the batch recorded, and no caller has to remember to write them. (Attribute values and
    /// stamps the batch won stay in its ``ObjectInfo``s, where the engine reads them, until
    /// ``flushPendingWrites(keepingJournal:)``; journal entries until ``journalEntries(causedBy:)``
    /// or the end of the batch.)
    var connection: SQLiteConnection {
        get throws {
            try resolveHeldSets()
            try pending.writeRows(on: storeConnection)
            return storeConnection
        }
    }

    /// The most journal entries packed into one row: a merge losing a million writes holds a few
    /// megabytes of entries at most.
    static let journalEntriesPerRow = 16_384

    /// Writes the journal entries kept in memory. Entries stay packed until their cause changes
    /// (or ``journalEntriesPerRow`` are packed), so how they are packed depends on the entries
    /// alone, not on when the engine happens to read.
    func flushJournal() throws {
        try resolveHeldSets()
        guard pending.journal.count > 0 else { return }
        try ConflictJournal.write(pending.journal, on: connection)
        pending.journal = JournalBatch()
    }

    /// The journal entries `dot` caused, including those still kept in memory.
    func journalEntries(causedBy dot: Dot) throws -> [ConflictEntry] {
        try flushJournal()
        return try ConflictJournal.entries(causedBy: dot, on: connection)
    }

    /// Adds an entry to the conflict journal. Entries are kept in memory while their cause stays
    /// the same (a change set losing many writes) and written as one packed row.
    func journal(
        _ kind: ConflictEntry.Kind, entity: String, object: UUID, property: String?, winner: JournalSide?,
        loser: JournalSide, cause: Dot, detail: String
    ) throws {
        try journal(kind, entity: entity, object: object, property: property, winner: winner, loser: loser, cause: cause, detail: .text(detail))
    }

    func journal(
        _ kind: ConflictEntry.Kind, entity: String, object: UUID, property: String?, winner: JournalSide?,
        loser: JournalSide, cause: Dot, detail: JournalDetail
    ) throws {
        guard keepsJournal else { return }
        if setRun.isResolving {
            // Resolved object by object: the entry takes its place in change set order later.
            try setRun.holdJournalEntry(kind, entity: entity, object: object, property: property, winner: winner, loser: loser, detail: detail)
            return
        }
        try makeRoomInJournal(for: cause)
        try pending.journal.append(kind, entity: entity, object: object, property: property, winner: winner, loser: loser, cause: cause, detail: detail)
    }

    /// Adds an entry held by a run of sets (``JournalBatch/appendHeld(_:body:numberedIn:cause:)``).
    func journalHeld(_ head: JournalEntryHead, body: UnsafeRawBufferPointer, numberedIn table: JournalTable, cause: Stamp) throws {
        try makeRoomInJournal(for: cause.dot, hlc: cause.hlc)
        pending.journal.appendHeld(head, body: body, numberedIn: table, cause: cause)
    }

    /// Writes the entries kept in memory when the next one, caused by `cause` (with `hlc`, when
    /// known), cannot join them.
    private func makeRoomInJournal(for cause: Dot, hlc: HLC? = nil) throws {
        if pending.journal.count > 0, !pending.journal.accepts(cause: cause, hlc: hlc) || pending.journal.count >= MergeEngine.journalEntriesPerRow {
            try flushJournal()
        }
    }

    /// A side whose value is JSON text (or none).
    func side(_ value: String?, _ stamp: Stamp) -> JournalSide {
        JournalSide(value: value.map(JournalSide.Value.json) ?? .none, stamp: stamp)
    }

    /// A side whose value is an attribute's column values.
    func side(values: [SQLValue], _ stamp: Stamp) -> JournalSide {
        JournalSide(value: .values(values), stamp: stamp)
    }

    // MARK: Deletes

    /// Records the current change set's delete of `object`, from the delete that started at `root`;
    /// returns what is known of the object.
    func recordDelete(_ object: ObjectKey, root: UUID) throws -> ObjectInfo {
        _ = try schema.requireEntity(object.entity, in: "delete of \(object.id)")
        let known = try requireInfo(object, for: "delete")
        objects[object]?.mayBeDeleted = true
        try DeleteTable.insert(object, root: DeleteRoot(dot: current.dot, root: root), implicit: false, on: connection)
        return known
    }

    private func delete(_ object: ObjectKey, root: UUID) throws {
        let known = try recordDelete(object, root: root)
        toMaterialize.touchedRoots.insert(DeleteRoot(dot: current.dot, root: root))
        // Deny rules of deletes around this object ask whether it is alive: judge them again.
        try markChanged(object)
        // Concurrent updates lose to the delete: journal them.
        let entity = try schema.requireEntity(object.entity, in: "delete")
        for attribute in entity.attributes.sorted(by: { $0.name < $1.name }) {
            guard let stamp = try fieldStamp(object, known, attribute.name), !covers(stamp.dot) else { continue }
            try journal(
                .updateVersusDelete, entity: object.entity, object: object.id, property: attribute.name,
                winner: side(nil, current.stamp),
                loser: try currentSide(of: attribute, object: object, known: known, stamp),
                cause: current.dot, detail: MergeEngine.updateOfDeletedDetail(object, attribute: attribute.name))
        }
    }

    func storeTombstone(_ values: [String: SQLValue], for object: ObjectKey) throws {
        let json = try Tombstone.json(values)
        try ObjectMetadataTable.setTombstone(json, of: object, on: connection)
    }

    // MARK: Relationships

    func canonicalRelationship(_ object: ObjectKey, _ name: String) throws -> SyncSchema.Relationship {
        let entity = try schema.requireEntity(object.entity, in: "relationship \(name)")
        guard let relationship = entity.relationship(name) else {
            throw SyncError(.schemaMismatch, "names \(object.entity).\(name), which the schema does not have")
        }
        guard relationship.isCanonical else {
            throw SyncError(.schemaMismatch, "links through \(object.entity).\(name), which is not the canonical side of its relationship")
        }
        return relationship
    }

    /// `canonicalRelationship(_:_:)` for an edge from `source` to `target`: a self-inverse edge must
    /// also name its ends in canonical order (``SyncSchema/canonicalPair(_:_:)``), so that every
    /// replica finds an edge and its removals under one `(source, target)`.
    func canonicalRelationship(_ source: ObjectKey, _ name: String, target: UUID) throws -> SyncSchema.Relationship {
        let relationship = try canonicalRelationship(source, name)
        if relationship.isSelfInverse && target.precedesInStorageOrder(source.id) {
            throw SyncError(.schemaMismatch, "names the self-inverse edge \(source.entity).\(name) from \(source.id) to \(target); it is recorded from the identifier that sorts first, \(target)")
        }
        return relationship
    }

    private func link(_ source: ObjectKey, relationship name: String, target: UUID) throws {
        let relationship = try canonicalRelationship(source, name, target: target)
        let (source, target) = redirected(source, target, relationship)
        let targetKey = ObjectKey(entity: relationship.target, id: target)
        let sourceInfo = try requireInfo(source, for: "link of \(source.entity).\(name)")
        let targetInfo = try requireInfo(targetKey, for: "link of \(source.entity).\(name)")
        let stamp = current.stamp
        // An object the current change set created has no edge that could be a rival: every other
        // change set that links it comes after this one, and this one's own edges are covered by
        // its vector. Not reading them lets the batch's new edges be written together.
        let createdNow = (source: sourceInfo.createdBy == stamp.dot, target: targetInfo.createdBy == stamp.dot)
        if relationship.kind == .toOne && relationship.isSelfInverse {
            try journalCompetingPartners(source, targetKey, relationship, stamp: stamp)
        } else if relationship.kind == .toOne {
            for edge in try createdNow.source ? [] : liveEdges(from: source, relationship) where edge.target != target && !covers(edge.added.dot) {
                try journalRivals(.toOne, on: source, name, incoming: .init(target, stamp), held: .init(edge.target, edge.added),
                                  detail: "\(source.entity).\(name) was set to different targets concurrently: the larger (HLC, replica) won")
            }
            if let inverse = schema.inverse(of: relationship), inverse.kind == .toOne {
                // One-to-one: sources claiming the same target concurrently conflict on the target's side.
                for edge in try (createdNow.target ? [] : liveEdges(to: targetKey, relationship)).sorted(by: { $0.added < $1.added })
                where edge.source != source.id && !covers(edge.added.dot) {
                    try journalRivals(.toOne, on: targetKey, inverse.name, incoming: .init(source.id, stamp), held: .init(edge.source, edge.added),
                                      detail: "\(targetKey.entity).\(inverse.name) was set to different objects concurrently: the larger (HLC, replica) won")
                }
            }
        }
        noteEdgeWrite()
        pending.edgeRows.append(from: source, name, to: target, added: stamp, replicaNumber: try replicaNumber(of: stamp.replica))
        try touchEdge(source, targetKey, relationship)
    }

    /// A self-inverse to-one link between `source` and `target` meets, at each end, the live edges
    /// to other partners that its change set had not seen: each such pair is a `to_one` entry on
    /// that end (values: the two partners' IDs).
    private func journalCompetingPartners(_ source: ObjectKey, _ target: ObjectKey, _ relationship: SyncSchema.Relationship, stamp: Stamp) throws {
        for (end, partner) in [(source, target), (target, source)] {
            for edge in try incidentEdges(of: end, relationship).sorted(by: { $0.added < $1.added })
            where edge.other != partner && !covers(edge.added.dot) {
                try journalRivals(.toOne, on: end, relationship.name, incoming: .init(partner.id, stamp), held: .init(edge.other.id, edge.added),
                                  detail: "\(end.entity).\(relationship.name) (its own inverse) was set to different objects concurrently: the larger (HLC, replica) won")
            }
            if source == target { break }
        }
    }

    /// Journals two concurrent writes of one place of `object` (`to_one`, `move`), the winner
    /// decided by ``RelationshipResolver/rivals(_:_:)``; the incoming write's change set is the cause.
    private func journalRivals(_ kind: ConflictEntry.Kind, on object: ObjectKey, _ property: String,
                               incoming: RelationshipResolver.Rival, held: RelationshipResolver.Rival, detail: String) throws {
        let (winner, loser) = RelationshipResolver.rivals(incoming, held)
        try journal(kind, entity: object.entity, object: object.id, property: property,
                    winner: side("\"\(winner.value)\"", winner.stamp), loser: side("\"\(loser.value)\"", loser.stamp),
                    cause: incoming.stamp.dot, detail: detail)
    }

    private func unlink(_ source: ObjectKey, relationship name: String, target: UUID, observed: [Dot]) throws {
        let (source, target, relationship) = try removeEdge(from: source, name, to: target, observed: observed)
        try touchEdge(source, target, relationship)
    }

    /// Marks the edges an `unlink` from `source` to `target` observed as removed by the current
    /// change set; returns the edge's ends as merges leave them, and its canonical relationship.
    func removeEdge(from source: ObjectKey, _ name: String, to target: UUID, observed: [Dot]) throws
        -> (source: ObjectKey, target: ObjectKey, relationship: SyncSchema.Relationship) {
        let relationship = try canonicalRelationship(source, name, target: target)
        // An unlink caused by deleting one of the two objects carries that delete's root, so a voided
        // delete brings the edge back. (The delete names the objects as written, before any merge.)
        let root = deletionRoot(of: source) ?? deletionRoot(of: ObjectKey(entity: relationship.target, id: target))
        let (source, target) = redirected(source, target, relationship)
        let targetKey = ObjectKey(entity: relationship.target, id: target)
        let removerNumber = try replicaNumber(of: current.dot.replica)
        noteEdgeWrite()
        for dot in observed {
            try EdgeTable.markRemoved(from: source, name, to: target, added: dot, by: current.dot, removerNumber: removerNumber, root: root,
                                      on: connection)
        }
        return (source, targetKey, relationship)
    }

    /// The root of the delete of `object` in the current change set, if it deletes it.
    private func deletionRoot(of object: ObjectKey) -> UUID? {
        // A change set merged in slices may delete the object in another slice than this unlink's.
        if let sliced { return sliced.deletionRoots[object] }
        for operation in current.operations {
            if case .delete(let entity, let id, let root) = operation, entity == object.entity, id == object.id { return root }
        }
        return nil
    }

    private func touchEdge(_ source: ObjectKey, _ target: ObjectKey, _ relationship: SyncSchema.Relationship) throws {
        toMaterialize.affected.insert(source)
        toMaterialize.affected.insert(target)
        toMaterialize.reorderedOwners.insert(source)
        toMaterialize.reorderedOwners.insert(target)
        if relationship.kind == .toOne, relationship.isSelfInverse {
            // Who is whose partner depends on every edge around both ends.
            for end in [source, target] {
                for (other, _) in try incidentEdges(of: end, relationship) { toMaterialize.affected.insert(other) }
            }
        } else if relationship.kind == .toOne, schema.inverse(of: relationship)?.kind == .toOne {
            // One-to-one: who holds the target decides among every source pointing at it.
            for edge in try liveEdges(to: target, relationship) { toMaterialize.affected.insert(ObjectKey(entity: source.entity, id: edge.source)) }
            for edge in try liveEdges(from: source, relationship) { toMaterialize.affected.insert(ObjectKey(entity: target.entity, id: edge.target)) }
        }
        for endpoint in [source, target] { try touchRoots(of: endpoint) }
    }

    /// A `position` operation as merges leave it: the owner and member (their survivors), the
    /// key and stamp it writes, and the position it finds.
    struct PositionWrite {
        var owner: ObjectKey
        var relationship: String
        var member: UUID
        var key: String
        var incoming: Stamp
        /// The stored position (a position written before stamps were kept has none).
        var existing: (key: String, stamp: Stamp?)?

        /// Whether the write replaces what it finds: there is none, or it has the larger `(HLC, replica)`.
        var wins: Bool { existing?.stamp.map { incoming > $0 } ?? true }
    }

    /// The current change set's position of `member` in `owner`'s ordered relationship `name`.
    func positionWrite(_ owner: ObjectKey, relationship name: String, member: UUID, key: String) throws -> PositionWrite {
        let entity = try schema.requireEntity(owner.entity, in: "position")
        guard let relationship = entity.relationship(name), relationship.kind == .orderedToMany else {
            throw SyncError(.schemaMismatch, "positions a member in \(owner.entity).\(name), which is not an ordered relationship")
        }
        let owner = survivor(of: owner)
        let member = survivor(of: ObjectKey(entity: relationship.target, id: member)).id
        let existing = try PositionTable.position(of: member, in: owner, name, on: connection)
        return PositionWrite(owner: owner, relationship: name, member: member, key: key, incoming: current.stamp, existing: existing)
    }

    /// Stores `write` if it wins; returns whether it did.
    func store(_ write: PositionWrite) throws -> Bool {
        guard write.wins else { return false }
        try PositionTable.setPosition(of: write.member, in: write.owner, write.relationship, key: write.key, stamp: write.incoming, on: connection)
        return true
    }

    private func position(_ owner: ObjectKey, relationship name: String, member: UUID, key: String) throws {
        let write = try positionWrite(owner, relationship: name, member: member, key: key)
        let incoming = write.incoming
        if let existing = write.existing, let previous = existing.stamp, !covers(previous.dot) {
            try journalRivals(.move, on: write.owner, name, incoming: .init(value: write.key, stamp: incoming), held: .init(value: existing.key, stamp: previous),
                              detail: "member \(write.member) of \(write.owner.entity).\(name) was moved concurrently: the larger (HLC, replica) won")
        }
        guard try store(write) else { return }
        toMaterialize.affected.insert(write.owner)
        toMaterialize.reorderedOwners.insert(write.owner)
    }
}

extension SQLValue {
    /// The text, if this is a text value.
    var textValue: String? {
        if case .text(let text) = self { return text }
        return nil
    }
}

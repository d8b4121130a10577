import Codecs
import Foundation
import LocalStoreCore

/// Records the merge metadata of a local save's change set, inside the save's transaction: the
/// path every `ObjectContext.save()` of a synced store takes.
///
/// LocalStore has already written the rows, and a local change set's HLC is larger than every
/// stamp this replica has seen, so nothing is resolved and nothing is journaled: the change set's
/// creations, stamps, edges, deletes and positions go into the tables a ``MergeEngine`` keeps,
/// and only what a save may change beyond the columns the app wrote is materialized (deletes whose
/// rules its edges bear on, edges a `maxCount` hides). How the metadata is written matters for a
/// large insert, which spends most of its capture time here:
/// - An object created by the save cannot have metadata yet, so its ``ObjectMetadataTable`` row is
///   inserted without looking it up first; the table's primary key still refuses a second
///   creation, reported as the lookup reported it.
/// - Its attribute sets change no metadata (the creation stamp stands for them) and are skipped.
/// - ``ObjectMetadataTable`` and ``EdgeTable`` rows are inserted in primary-key order, ids bound without
///   making strings: rows in random id order spread over every page of the tables, more than the
///   page cache holds, and pages were written out and read back several times within one save.
final class LocalCapture {
    /// The metadata tables and the materialization the capture shares with merges.
    private let engine: MergeEngine
    /// Objects whose rows the change set changed beyond what the app wrote (a saturated counter, a
    /// `.max` write below the stored value): the saving context refreshes them.
    private(set) var rewritten: Set<UUID> = []
    /// Whether the change set may free an edge this replica keeps hidden: it linked or unlinked
    /// through a relationship a `maxCount` may hide members of, or unlinked a to-one whose other
    /// live edges compete (§3.4, §3.7). Materializing then shows what the change frees on this
    /// replica too, as it does on every replica that merges the change set.
    private(set) var mayRevealHiddenEdges = false

    init(schema: SyncSchema, connection: SQLiteConnection) throws {
        // Links are written here, past the engine (``EdgeTable/AdditionWriter``): it keeps no edge reads.
        engine = try MergeEngine(schema: schema, connection: connection, keepsJournal: true, cachesEdgeReads: false)
    }

    private var schema: SyncSchema { engine.schema }
    private var current: ChangeSet { engine.current }

    /// Whether the save must be materialized: a delete's rules or a hidden edge may depend on it.
    var needsMaterializing: Bool { !engine.toMaterialize.touchedRoots.isEmpty || mayRevealHiddenEdges }

    // MARK: What a save had before

    /// The live edges of `object`'s `relationship` as stored before the save.
    func liveEdges(from object: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> [EdgeRecord] {
        try engine.liveEdges(from: object, relationship)
    }

    /// The objects at the other end of `object`'s live edges through `relationship`, whichever
    /// end records them, with the stamps that added them, as stored before the save.
    func incidentEdges(of object: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> [(other: ObjectKey, added: Stamp)] {
        try engine.incidentEdges(of: object, relationship)
    }

    /// The position keys of `owner`'s ordered `relationship`, by member, as stored before the save.
    func positionKeys(in owner: ObjectKey, _ relationship: String) throws -> [UUID: String] {
        try PositionTable.keys(in: owner, relationship, on: engine.connection)
    }

    // MARK: Finishing

    /// Writes what the capture kept in memory; with `materializing`, rewrites the entity tables
    /// as a merge does (see ``needsMaterializing``). Returns the objects whose rows changed
    /// beyond what the app wrote.
    func finish(materializing: Bool) throws -> Set<UUID> {
        guard materializing else {
            try engine.flushPendingWrites()
            return rewritten
        }
        return try engine.materialize().union(rewritten)
    }

    /// Records `changeSet`, made by ``ChangeRecorder`` from a save; `deletedValues` are the last
    /// saved column values of the objects it deletes, kept as their tombstones.
    func record(_ changeSet: ChangeSet, deletedValues: [UUID: [String: SQLValue]]) throws {
        engine.begin(changeSet)
        var creates: [(index: Int, object: ObjectKey)] = []
        for (index, operation) in changeSet.operations.enumerated() {
            if case .create(let entity, let id) = operation { creates.append((index, ObjectKey(entity: entity, id: id))) }
        }
        try recordCreates(creates)
        var links: [PendingLink] = []
        // The sets of one object come together: look it up once for all of them.
        var lastSet: (object: ObjectKey, isNew: Bool)?
        for (index, operation) in changeSet.operations.enumerated() {
            switch operation {
            case .create:
                continue
            case .set(let entity, let id, _, _) where isCreatedHere(ObjectKey(entity: entity, id: id), cache: &lastSet):
                continue
            case .link(let entity, let id, let relationship, let target):
                links.append(PendingLink(index: index, source: ObjectKey(entity: entity, id: id), relationship: relationship, target: target))
            default:
                // Edges first: the operation may read them.
                try recordLinks(&links)
                try engine.atOperation(index) { try record(operation, deletedValues: deletedValues) }
            }
        }
        try recordLinks(&links)
        if schema.hasUniqueKeys { try engine.recordUniqueValues(engine.uniqueCreations(of: changeSet)) }
        try VersionVectorTable.advance(to: changeSet.dot, on: engine.connection)
    }

    /// Writes `values` to `object`'s attribute `name` after the save wrote others to its row (the
    /// policy's merge of them with the stored value); the saving context refreshes the object.
    func rewrite(_ values: [SQLValue], of name: String, of object: ObjectKey) throws {
        let (entity, attribute) = try engine.attributeOfSet(object.entity, name)
        let known = try engine.requireInfo(object, for: "local write of \(object.entity).\(name)")
        try engine.write(values, to: attribute, of: object, in: entity, known: known)
        rewritten.insert(object.id)
    }

    /// Whether the current change set created `object`.
    private func isCreatedHere(_ object: ObjectKey, cache: inout (object: ObjectKey, isNew: Bool)?) -> Bool {
        if let cache, cache.object == object { return cache.isNew }
        let isNew = engine.objects[object]?.createdBy == current.dot
        cache = (object, isNew)
        return isNew
    }

    private func record(_ operation: Operation, deletedValues: [UUID: [String: SQLValue]]) throws {
        switch operation {
        case .create, .link:
            preconditionFailure("creates and links are recorded in bulk")
        case .set(let entity, let id, let attribute, let values):
            try recordSet(ObjectKey(entity: entity, id: id), attribute: attribute, values: values)
        case .delete(let entity, let id, let root):
            try recordDelete(ObjectKey(entity: entity, id: id), root: root, values: deletedValues[id])
        case .unlink(let entity, let id, let relationship, let target, let observed):
            try recordUnlink(ObjectKey(entity: entity, id: id), relationship: relationship, target: target, observed: observed)
        case .position(let entity, let id, let relationship, let member, let key):
            _ = try engine.store(engine.positionWrite(ObjectKey(entity: entity, id: id), relationship: relationship, member: member, key: key))
        case .increment(let entity, let id, let attribute, let delta):
            try recordIncrement(ObjectKey(entity: entity, id: id), attribute: attribute, delta: delta)
        }
    }

    // MARK: Creates

    private func recordCreates(_ creates: [(index: Int, object: ObjectKey)]) throws {
        guard !creates.isEmpty else { return }
        let stamp = current.stamp
        var entity: (name: String, known: Bool) = ("", false)
        engine.objects.reserveCapacity(engine.objects.count + creates.count)
        let writer = try ObjectMetadataTable.CreationWriter(creation: stamp, on: engine.connection)
        for (index, object) in creates.sorted(by: { $0.object < $1.object }) {
            // Creates of one entity come together: check each name once.
            if !entity.known || entity.name != object.entity {
                _ = try engine.atOperation(index) { try schema.requireEntity(object.entity, in: "create of \(object.id)") }
                entity = (object.entity, true)
            }
            guard try writer.insert(object) else {
                throw SyncError(.conflictingChangeSet, "change set \(current.dot), operation \(index): creates \(object.entity) \(object.id), which already exists")
            }
            let created = MergeEngine.ObjectInfo(creation: stamp, hasRow: true, mayBeDeleted: false)
            created.createdBy = current.dot
            created.storedFieldStamps = FieldStamps()
            engine.objects[object] = created
        }
    }

    // MARK: Attributes

    /// A `set` of an object the save did not create: its stamp is the attribute's latest.
    private func recordSet(_ object: ObjectKey, attribute name: String, values: [SQLValue]) throws {
        let (_, attribute, known) = try engine.setTarget(object, attribute: name, values: values, known: nil)
        try engine.requireSetAfterCreation(object, attribute)
        engine.notePendingWrite(object, known)
        known.pendingFieldStamps[name] = current.stamp
    }

    /// An `increment`: LocalStore already wrote the app's value, the shown value plus `delta`. It
    /// is right unless the counter was saturated, when the exact total decides what the row shows.
    private func recordIncrement(_ object: ObjectKey, attribute name: String, delta: Int64) throws {
        let increment = try engine.recordIncrement(object, attribute: name, delta: delta)
        guard increment.saturatedTotal != nil else { return }
        try engine.addDelta(of: increment)
        rewritten.insert(object.id)
    }

    // MARK: Deletes

    private func recordDelete(_ object: ObjectKey, root: UUID, values: [String: SQLValue]?) throws {
        _ = try engine.recordDelete(object, root: root)
        // LocalStore removed the row; keep its values in case a concurrent reference voids the delete.
        engine.objects[object]?.hasRow = false
        try engine.storeTombstone(values ?? [:], for: object)
        // Deletes whose deny rule counted on this object being alive must be judged again.
        try engine.touchRootsAround(object)
    }

    // MARK: Edges

    /// A `link` of the change set, not recorded yet.
    struct PendingLink {
        var index: Int
        var source: ObjectKey
        var relationship: String
        var target: UUID

        /// ``EdgeTable``'s primary-key order (the rest of the key is the change set's dot).
        func precedes(_ other: PendingLink) -> Bool {
            if source != other.source { return source < other.source }
            if relationship != other.relationship { return relationship < other.relationship }
            return target.precedesInStorageOrder(other.target)
        }
    }

    /// Records `links` (consecutive `link` operations) and empties it: both objects must exist,
    /// and deletes of an object that existed before the save are judged again (see ``MergeEngine/touchRoots(of:)``).
    private func recordLinks(_ links: inout [PendingLink]) throws {
        guard !links.isEmpty else { return }
        var relationship: (source: String, name: String, canonical: SyncSchema.Relationship, what: String)?
        var touched: Set<ObjectKey> = []
        let writer = try EdgeTable.AdditionWriter(added: current.stamp, on: engine.connection)
        for link in links.sorted(by: { $0.precedes($1) }) {
            try engine.atOperation(link.index) {
                // Links of one relationship come together: look each up once.
                if relationship.map({ $0.source != link.source.entity || $0.name != link.relationship }) ?? true {
                    relationship = (link.source.entity, link.relationship, try engine.canonicalRelationship(link.source, link.relationship),
                                    "link of \(link.source.entity).\(link.relationship)")
                }
                let (_, _, canonical, what) = relationship!
                func check(_ endpoint: ObjectKey) throws {
                    guard try engine.requireInfo(endpoint, for: what).createdBy != current.dot, touched.insert(endpoint).inserted else { return }
                    try engine.touchRoots(of: endpoint)
                }
                try check(link.source)
                try check(ObjectKey(entity: canonical.target, id: link.target))
                touchMergeBounds(link.source, ObjectKey(entity: canonical.target, id: link.target), canonical)
            }
            try writer.insert(from: link.source, link.relationship, to: link.target)
        }
        links.removeAll(keepingCapacity: true)
    }

    private func recordUnlink(_ source: ObjectKey, relationship name: String, target: UUID, observed: [Dot]) throws {
        let (source, target, relationship) = try engine.removeEdge(from: source, name, to: target, observed: observed)
        if try unlinkMayRevealAnotherEdge(source, target, relationship) {
            mayRevealHiddenEdges = true
            engine.toMaterialize.affected.insert(source)
            engine.toMaterialize.affected.insert(target)
        }
        // LocalStore wrote the rows; only deletes the edge may bear on need judging again (an
        // object created in this very change set has none).
        for endpoint in [source, target] where engine.objects[endpoint]?.createdBy != current.dot { try engine.touchRoots(of: endpoint) }
        touchMergeBounds(source, target, relationship)
    }

    /// Whether an unlink through a to-one may let an edge the saving replica keeps hidden show:
    /// another live edge of the source (the to-one falls back to it, §3.4), another source's live
    /// claim on the target of a one-to-one, or another live edge at either end of a self-inverse
    /// to-one. LocalStore only cleared the columns the app changed, so the saving replica
    /// materializes then, as every replica that merges the change set does.
    private func unlinkMayRevealAnotherEdge(_ source: ObjectKey, _ target: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> Bool {
        guard relationship.kind == .toOne else { return false }
        if !(try engine.incidentEdges(of: source, relationship)).isEmpty { return true }
        if relationship.isSelfInverse { return !(try engine.incidentEdges(of: target, relationship)).isEmpty }
        guard schema.inverse(of: relationship)?.kind == .toOne else { return false }
        return !(try engine.liveEdges(to: target, relationship)).isEmpty
    }

    /// For an edge through `relationship`: when a `maxCount` may hide members there, both ends are
    /// rewritten when the save materializes.
    private func touchMergeBounds(_ source: ObjectKey, _ target: ObjectKey, _ relationship: SyncSchema.Relationship) {
        guard engine.isBoundedAtMerge(relationship) else { return }
        mayRevealHiddenEdges = true
        engine.toMaterialize.affected.insert(source)
        engine.toMaterialize.affected.insert(target)
    }
}

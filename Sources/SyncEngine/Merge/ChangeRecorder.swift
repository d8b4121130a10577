import Codecs
import Foundation
import LocalStoreCore

/// Turns each local save into a change set, inside the save's transaction: the outbox entry,
/// the replica's seq and HLC, and the merge metadata all commit with the data, or not at all.
final class ChangeRecorder: SaveObserver {
    let schema: SyncSchema
    let wallClock: @Sendable () -> UInt64

    init(schema: SyncSchema, wallClock: @escaping @Sendable () -> UInt64) {
        self.schema = schema
        self.wallClock = wallClock
    }

    func storeWillCommit(_ changes: [SavedObjectChange], connection: SQLiteConnection) throws -> Set<UUID> {
        let capture = try LocalCapture(schema: schema, connection: connection)
        var policyRewrites: [PolicyRewrite] = []
        let operations = try operations(for: changes, capture: capture, policyRewrites: &policyRewrites)
        guard !operations.isEmpty else { return [] }
        let changeSet = try ChangeSetTable.numberLocal(operations, wallClock: wallClock(), on: connection)
        try capture.record(changeSet, deletedValues: deletedValues(of: changes))
        for rewrite in policyRewrites { try capture.rewrite(rewrite.values, of: rewrite.attribute, of: rewrite.object) }
        // The change set row is stored after the metadata rows: a large save's blob fills the page
        // cache, and the metadata indexes written after it had to be read back from the file.
        // Materializing reads the row (the HLC of a delete), so then it goes first.
        guard capture.needsMaterializing else {
            let rewritten = try capture.finish(materializing: false)
            try ChangeSetTable.store(changeSet, status: .pending, on: connection)
            return rewritten
        }
        try ChangeSetTable.store(changeSet, status: .pending, on: connection)
        return try capture.finish(materializing: true)
    }

    /// A value a save wrote to an attribute with a merge policy that the policy replaces: a
    /// `.max` attribute set below its stored value keeps the stored one.
    struct PolicyRewrite {
        var object: ObjectKey
        var attribute: String
        var values: [SQLValue]
    }

    /// The operation that records a save's new `values` of an attribute of an object that existed
    /// before: a `set`, or for a counter an `increment` by the difference to the value as loaded
    /// or last saved. `.max`, `.min` and `.custom` record the merge of both values, which is what
    /// every replica then holds; when it differs from what the app wrote, the row is rewritten.
    private func updateOperation(
        _ object: ObjectKey, _ attribute: SyncSchema.Attribute?, name: String, values: [SQLValue], previous: [SQLValue]?,
        policyRewrites: inout [PolicyRewrite]
    ) throws -> Operation {
        guard let attribute, attribute.policy != .lastWriterWins, let previous else {
            return .set(entity: object.entity, id: object.id, attribute: name, values: values)
        }
        guard attribute.policy == .counter else {
            let merged = MergePolicyResolver.merged(previous, values, by: attribute, incomingWinsTie: true)
            if merged != values { policyRewrites.append(PolicyRewrite(object: object, attribute: name, values: merged)) }
            return .set(entity: object.entity, id: object.id, attribute: name, values: merged)
        }
        guard case .integer(let before)? = previous.first, case .integer(let after)? = values.first else {
            throw SyncError(.schemaMismatch, "a save changed the counter \(object.entity).\(name) of \(object.id.storageText) from \(previous) to \(values); a counter holds an integer")
        }
        let (delta, overflow) = after.subtractingReportingOverflow(before)
        guard !overflow else {
            throw SyncError(.schemaMismatch, "a save changed the counter \(object.entity).\(name) of \(object.id.storageText) from \(before) to \(after), a difference no 64-bit increment holds")
        }
        return .increment(entity: object.entity, id: object.id, attribute: name, delta: delta)
    }

    /// The last saved column values of each deleted object, kept as its tombstone.
    private func deletedValues(of changes: [SavedObjectChange]) -> [UUID: [String: SQLValue]] {
        var deletedValues: [UUID: [String: SQLValue]] = [:]
        for change in changes where change.kind == .delete {
            guard let entity = schema.entity(change.entity) else { continue }
            var values: [String: SQLValue] = [:]
            for (name, attributeValues) in change.attributes {
                guard let attribute = entity.attribute(name) else { continue }
                for (column, value) in zip(attribute.columns, attributeValues) { values[column] = value }
            }
            deletedValues[change.objectID] = values
        }
        return deletedValues
    }

    /// The operations of a save, in the order they apply: creates, attribute writes, edges,
    /// positions, deletes. Built into one array in passes over the changes: a large insert has
    /// about ten operations per object, and concatenating per-kind arrays copied them all again.
    /// The passes go by index, and entities by their index in the schema: copying each change
    /// (or entity) in every pass retained and released all its fields, a tenth of a large save.
    private func operations(for changes: [SavedObjectChange], capture: LocalCapture, policyRewrites: inout [PolicyRewrite]) throws -> [Operation] {
        let entityIndices = try self.entityIndices(of: changes)
        var operations: [Operation] = []
        operations.reserveCapacity(changes.reduce(0) { $0 + 1 + $1.attributes.count + $1.relationships.count })
        for index in changes.indices where changes[index].kind == .insert {
            operations.append(.create(entity: changes[index].entity, id: changes[index].objectID))
        }
        for index in changes.indices where changes[index].kind != .delete {
            let (entity, id) = (changes[index].entity, changes[index].objectID)
            guard changes[index].kind == .update else {
                for attribute in changes[index].attributes {
                    operations.append(.set(entity: entity, id: id, attribute: attribute.name, values: attribute.values))
                }
                continue
            }
            let described = schema.entities[entityIndices[index]]
            let previousValues = changes[index].previousValues
            for (position, attribute) in changes[index].attributes.enumerated() {
                operations.append(try updateOperation(
                    ObjectKey(entity: entity, id: id), described.attribute(attribute.name), name: attribute.name, values: attribute.values,
                    previous: position < previousValues.count ? previousValues[position] : nil, policyRewrites: &policyRewrites))
            }
        }
        // Both ends of a self-inverse edge change in one save; each edge operation is written once.
        var selfInverseEdges: Set<SelfInverseEdgeOperation> = []
        for index in changes.indices where !changes[index].relationships.isEmpty {
            let object = ObjectKey(entity: changes[index].entity, id: changes[index].objectID)
            for (name, before, after) in changes[index].relationships {
                guard let relationship = schema.entities[entityIndices[index]].relationship(name), relationship.isCanonical else { continue }
                if relationship.isSelfInverse {
                    try appendSelfInverseEdgeOperations(object, relationship, before: before, after: after, isNew: changes[index].kind == .insert,
                                                        capture: capture, written: &selfInverseEdges, to: &operations)
                    continue
                }
                try appendEdgeOperations(object, relationship, before: before, after: after, isNew: changes[index].kind == .insert,
                                         capture: capture, to: &operations)
            }
        }
        for index in changes.indices where changes[index].kind != .delete && !changes[index].relationships.isEmpty {
            for (name, _, after) in changes[index].relationships {
                guard let relationship = schema.entities[entityIndices[index]].relationship(name), relationship.kind == .orderedToMany else { continue }
                operations += try positionOperations(ObjectKey(entity: changes[index].entity, id: changes[index].objectID), relationship,
                                                     members: after, capture: capture)
            }
        }
        for index in changes.indices where changes[index].kind == .delete {
            operations.append(.delete(entity: changes[index].entity, id: changes[index].objectID, root: changes[index].deletionRoot ?? changes[index].objectID))
        }
        return operations
    }

    /// For each change, the index of its entity in `schema.entities`; looked up once per run of
    /// changes of one entity (a save lists its objects entity by entity, mostly).
    private func entityIndices(of changes: [SavedObjectChange]) throws -> [Int] {
        var indices: [Int] = []
        indices.reserveCapacity(changes.count)
        var last: (name: String, index: Int)?
        for change in changes.indices {
            let name = changes[change].entity
            if let last, last.name == name {
                indices.append(last.index)
                continue
            }
            guard let found = schema.entities.firstIndex(where: { $0.name == name }) else {
                throw SyncError(.schemaMismatch, "a save changed \(name), which the sync schema does not have")
            }
            last = (name, found)
            indices.append(found)
        }
        return indices
    }

    /// Appends the unlinks and links that take `relationship` of `object` from `before` to `after`.
    private func appendEdgeOperations(
        _ object: ObjectKey, _ relationship: SyncSchema.Relationship, before: [UUID], after: [UUID], isNew: Bool, capture: LocalCapture,
        to operations: inout [Operation]
    ) throws {
        // A new object has no edges yet: skip the lookup, which every insert would otherwise pay.
        let live = isNew ? [] : try capture.liveEdges(from: object, relationship)
        func unlink(_ target: UUID) {
            let observed = live.filter { $0.target == target }.map(\.added.dot).sorted()
            guard !observed.isEmpty else { return }
            operations.append(.unlink(entity: object.entity, id: object.id, relationship: relationship.name, target: target, observed: observed))
        }
        func link(_ target: UUID) {
            operations.append(.link(entity: object.entity, id: object.id, relationship: relationship.name, target: target))
        }
        if relationship.kind == .toOne {
            // Every live edge goes, including ones that lost a concurrent write and never showed:
            // the object now holds exactly what the app set.
            let target = after.first
            for stale in Set(live.map(\.target)).subtracting(target.map { [$0] } ?? []).sorted(by: { $0.precedesInStorageOrder($1) }) { unlink(stale) }
            if let target, target != before.first || !live.contains(where: { $0.target == target }) { link(target) }
        } else {
            let kept = Set(after)
            for removed in Set(before).subtracting(kept).sorted(by: { $0.precedesInStorageOrder($1) }) { unlink(removed) }
            let previous = Set(before)
            var added = after.filter { !previous.contains($0) }
            if relationship.kind == .toMany { added.sort { $0.precedesInStorageOrder($1) } }
            for member in added { link(member) }
        }
    }

    /// A self-inverse edge operation already written by this save: `(relationship, source, target)`
    /// in canonical order, and whether it links or unlinks.
    private struct SelfInverseEdgeOperation: Hashable {
        var relationship: String
        var source: UUID
        var target: UUID
        var isLink: Bool
    }

    /// The unlinks and links that take a self-inverse `relationship` of `object` from `before` to
    /// `after`, each edge named from the end whose identifier sorts first. Like any to-one, a
    /// self-inverse to-one unlinks every live edge of the object but the new partner's.
    private func appendSelfInverseEdgeOperations(
        _ object: ObjectKey, _ relationship: SyncSchema.Relationship, before: [UUID], after: [UUID], isNew: Bool, capture: LocalCapture,
        written: inout Set<SelfInverseEdgeOperation>, to operations: inout [Operation]
    ) throws {
        // A new object has no edges yet: skip the lookup, as for any relationship.
        let live = isNew ? [] : try capture.incidentEdges(of: object, relationship)
        func append(_ other: UUID, isLink: Bool) {
            let (source, target) = SyncSchema.canonicalPair(object.id, other)
            guard written.insert(SelfInverseEdgeOperation(relationship: relationship.name, source: source, target: target, isLink: isLink)).inserted
            else { return }
            if isLink {
                operations.append(.link(entity: object.entity, id: source, relationship: relationship.name, target: target))
                return
            }
            let observed = live.filter { $0.other.id == other }.map(\.added.dot).sorted()
            guard !observed.isEmpty else { return }
            operations.append(.unlink(entity: object.entity, id: source, relationship: relationship.name, target: target, observed: observed))
        }
        let removed: Set<UUID>
        var added: [UUID]
        if relationship.kind == .toOne {
            let partner = after.first
            removed = Set(live.map(\.other.id)).subtracting(partner.map { [$0] } ?? [])
            added = partner.map { partner in partner != before.first || !live.contains { $0.other.id == partner } ? [partner] : [] } ?? []
        } else {
            removed = Set(before).subtracting(after)
            let previous = Set(before)
            added = after.filter { !previous.contains($0) }
        }
        for other in removed.sorted(by: { $0.precedesInStorageOrder($1) }) { append(other, isLink: false) }
        added.sort { $0.precedesInStorageOrder($1) }
        for other in added { append(other, isLink: true) }
    }

    /// Keys for the members whose place changed, so the keys sort in the app's order. Members
    /// already in increasing key order keep their keys (the longest such run is kept).
    private func positionOperations(
        _ owner: ObjectKey, _ relationship: SyncSchema.Relationship, members: [UUID], capture: LocalCapture
    ) throws -> [Operation] {
        guard !members.isEmpty else { return [] }
        let existing = try capture.positionKeys(in: owner, relationship.name)
        let keys = members.map { existing[$0] }
        let kept = PositionOrder.longestIncreasingRun(keys)
        var operations: [Operation] = []
        var index = 0
        while index < members.count {
            if kept.contains(index) {
                index += 1
                continue
            }
            var end = index
            while end < members.count && !kept.contains(end) { end += 1 }
            let lower = index > 0 ? keys[index - 1] : nil
            let upper = end < members.count ? keys[end] : nil
            let fresh = PositionKey.keys(count: end - index, between: lower, upper)
            for (offset, key) in fresh.enumerated() {
                operations.append(.position(entity: owner.entity, id: owner.id, relationship: relationship.name, member: members[index + offset], key: key))
            }
            index = end
        }
        return operations
    }
}

/// Helpers for keeping as many existing position keys as possible.
enum PositionOrder {
    /// Indices of a longest strictly increasing subsequence of the non-nil keys.
    static func longestIncreasingRun(_ keys: [String?]) -> Set<Int> {
        var tails: [Int] = []          // index into keys of the smallest tail of each length
        var previous = [Int](repeating: -1, count: keys.count)
        for (index, key) in keys.enumerated() {
            guard let key else { continue }
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if keys[tails[middle]]! < key { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var result: Set<Int> = []
        var cursor = tails.last ?? -1
        while cursor >= 0 {
            result.insert(cursor)
            cursor = previous[cursor]
        }
        return result
    }
}

/// Where a local change set stands in the outbox.
public enum OutboxStatus: String, Sendable, Codable {
    /// Committed locally, not sent yet.
    case pending
    /// Sent, not yet acknowledged by the server.
    case sent
    /// The server has stored it.
    case acknowledged
    /// Received from another replica.
    case remote
}

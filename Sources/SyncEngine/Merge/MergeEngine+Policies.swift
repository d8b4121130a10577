import Codecs
import Foundation
import LocalStoreCore

/// Attributes with a merge policy (`@Attribute(merge:)`, CONTRACT.md §3.9): their value is a
/// function of the set of writes, not of the last one, so nothing is journaled as lost.
extension MergeEngine {
    /// A `set` of a `.max`, `.min` or `.custom` attribute: the stored value becomes the policy's
    /// merge of the current value and the incoming one, whatever their stamps. The attribute's
    /// stamp still advances to the larger one (deletes judge concurrent updates by it, §3.2).
    func mergeByPolicy(_ values: [SQLValue], into attribute: SyncSchema.Attribute, of object: ObjectKey, in entity: SyncSchema.Entity,
                       known: ObjectInfo, incoming: Stamp, previous: Stamp) throws {
        let currentValues = try currentValues(of: attribute, object: object, known: known)
        if incoming > previous {
            notePendingWrite(object, known)
            known.pendingFieldStamps[attribute.name] = incoming
        }
        let merged = MergeEngine.merged(currentValues, values, by: attribute, incomingWinsTie: incoming > previous)
        if merged != currentValues { try write(merged, to: attribute, of: object, in: entity, known: known) }
    }

    /// What `.max`, `.min` or `.custom` make of `current` and `incoming`. A custom merge that
    /// cannot read the values (a value written by another version of the type) falls back to the
    /// larger stamp, as without a policy.
    static func merged(_ current: [SQLValue], _ incoming: [SQLValue], by attribute: SyncSchema.Attribute, incomingWinsTie: Bool) -> [SQLValue] {
        switch attribute.policy {
        case .max: return current.precedesInSQLiteOrder(incoming) ? incoming : current
        case .min: return incoming.precedesInSQLiteOrder(current) ? incoming : current
        case .custom: return attribute.customMerge?(current, incoming) ?? (incomingWinsTie ? incoming : current)
        case .lastWriterWins, .counter: return incomingWinsTie ? incoming : current
        }
    }

    /// An `increment` of a counter: adds `delta` to the exact total and shows it clamped to the
    /// column's range (`_sync_counter` keeps the total while it is outside). The same on every
    /// replica, because addition commutes and each change set applies once.
    func increment(_ object: ObjectKey, attribute name: String, delta: Int64) throws {
        let (entity, attribute) = try attributeOfSet(object.entity, name)
        guard attribute.policy == .counter else {
            throw SyncError(.schemaMismatch, "increments \(object.entity).\(name) of \(object.id.storageText), which is not a counter (merge: .\(attribute.policy.rawValue))")
        }
        let known = try requireInfo(object, for: "increment of \(object.entity).\(name)")
        let incoming = current.stamp
        if !isLocal, known.mayBeDeleted {
            try journalUpdateOfDeleted(object, attribute: name, values: [.integer(delta)], incoming: incoming)
        }
        let previous = try fieldStamp(object, known, name) ?? known.creation
        if incoming > previous {
            notePendingWrite(object, known)
            known.pendingFieldStamps[name] = incoming
        }
        if hasCounterTable == nil { hasCounterTable = try CounterTable.exists(on: connection) }
        let saturatedTotal = hasCounterTable == true ? try CounterTable.total(of: object, name, on: connection) : nil
        // A local save already wrote the app's value, the shown value plus `delta`: it is right
        // unless the counter was saturated, when the exact total decides.
        if isLocal && saturatedTotal == nil { return }
        let shown = try currentValues(of: attribute, object: object, known: known)
        guard case .integer(let shownValue)? = shown.first else {
            throw SyncError(.schemaMismatch, "increments \(object.entity).\(name) of \(object.id.storageText), whose value \(shown.first?.description ?? "none") is not an integer")
        }
        let total = (saturatedTotal ?? Int128(shownValue)) + Int128(delta)
        let range = CounterTable.range(of: attribute.columnType)
        let clamped = Swift.min(Swift.max(total, range.lowerBound), range.upperBound)
        if clamped != total || saturatedTotal != nil {
            try CounterTable.setTotal(clamped == total ? nil : total, of: object, name, on: connection)
            hasCounterTable = true
        }
        let value = SQLValue.integer(Int64(clamped))
        if isLocal {
            try write([value], to: attribute, of: object, in: entity, known: known)
            locallyRewritten.insert(object.id)
            return
        }
        if value != shown[0] { try write([value], to: attribute, of: object, in: entity, known: known) }
        if clamped != total && saturatedTotal == nil {
            try journal(
                .counterSaturated, entity: object.entity, object: object.id, property: name,
                winner: side(values: [value], incoming), loser: side(String(total), incoming), cause: incoming.dot,
                detail: "the counter \(object.entity).\(name) adds up to \(total), outside its \(attribute.columnType.rawValue) range: it shows \(clamped) until increments bring it back")
        }
    }

    /// Writes `values` to `object`'s attribute `name` after a local save wrote others to its row
    /// (the policy's merge of them with the stored value); the saving context refreshes the object.
    func rewriteLocally(_ values: [SQLValue], of name: String, of object: ObjectKey) throws {
        let (entity, attribute) = try attributeOfSet(object.entity, name)
        let known = try requireInfo(object, for: "local write of \(object.entity).\(name)")
        try write(values, to: attribute, of: object, in: entity, known: known)
        locallyRewritten.insert(object.id)
    }
}

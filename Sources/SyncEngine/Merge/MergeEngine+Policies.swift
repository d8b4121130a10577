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
        let merged = MergePolicyResolver.merged(currentValues, values, by: attribute, incomingWinsTie: incoming > previous)
        if merged != currentValues { try write(merged, to: attribute, of: object, in: entity, known: known) }
    }

    /// An `increment` of a counter, by ``CounterResolver``: adds `delta` to the exact total and
    /// shows it clamped to the column's range (`_sync_counter` keeps the total while it is outside).
    func increment(_ object: ObjectKey, attribute name: String, delta: Int64) throws {
        let increment = try recordIncrement(object, attribute: name, delta: delta)
        if increment.known.mayBeDeleted {
            try journalUpdateOfDeleted(object, attribute: name, values: [.integer(delta)], incoming: increment.incoming)
        }
        let outcome = try addDelta(of: increment)
        guard outcome.saturates else { return }
        let shown = outcome.counter.shown
        try journal(
            .counterSaturated, entity: object.entity, object: object.id, property: name,
            winner: side(values: [.integer(shown)], increment.incoming), loser: side(String(outcome.total), increment.incoming), cause: increment.incoming.dot,
            detail: "the counter \(object.entity).\(name) adds up to \(outcome.total), outside its \(increment.attribute.columnType.rawValue) range: it shows \(shown) until increments bring it back")
    }

    /// An `increment` of a counter, once its stamp is recorded.
    struct CounterIncrement {
        var object: ObjectKey
        var entity: SyncSchema.Entity
        var attribute: SyncSchema.Attribute
        var known: ObjectInfo
        var delta: Int64
        var incoming: Stamp
        /// The exact total `_sync_counter` keeps while the counter is saturated, if it is.
        var saturatedTotal: Int128?
    }

    /// Checks an `increment` against the schema, records its stamp if it is the attribute's latest
    /// write, and reads the counter's saturated total.
    @inline(__always)
    func recordIncrement(_ object: ObjectKey, attribute name: String, delta: Int64) throws -> CounterIncrement {
        let (entity, attribute) = try attributeOfSet(object.entity, name)
        guard attribute.policy == .counter else {
            throw SyncError(.schemaMismatch, "increments \(object.entity).\(name) of \(object.id.storageText), which is not a counter (merge: .\(attribute.policy.rawValue))")
        }
        let known = try requireInfo(object, for: "increment of \(object.entity).\(name)")
        let incoming = current.stamp
        let previous = try fieldStamp(object, known, name) ?? known.creation
        if incoming > previous {
            notePendingWrite(object, known)
            known.pendingFieldStamps[name] = incoming
        }
        if mirror.hasCounterTable == nil { mirror.hasCounterTable = try CounterTable.exists(on: connection) }
        let saturatedTotal = mirror.hasCounterTable == true ? try CounterTable.total(of: object, name, on: connection) : nil
        return CounterIncrement(object: object, entity: entity, attribute: attribute, known: known, delta: delta,
                                incoming: incoming, saturatedTotal: saturatedTotal)
    }

    /// Asks ``CounterResolver`` what `increment` makes of the counter and writes it: the shown
    /// value when it changes, the exact total beside the row while it is outside the range.
    @discardableResult
    func addDelta(of increment: CounterIncrement) throws -> CounterResolver.Outcome {
        let object = increment.object, name = increment.attribute.name
        let shown = try currentFirstValue(of: increment.attribute, object: object, known: increment.known)
        guard case .integer(let shownValue)? = shown else {
            throw SyncError(.schemaMismatch, "increments \(object.entity).\(name) of \(object.id.storageText), whose value \(shown?.description ?? "none") is not an integer")
        }
        let before = CounterResolver.Counter(shown: shownValue, saturatedTotal: increment.saturatedTotal)
        let outcome = CounterResolver(range: CounterTable.range(of: increment.attribute.columnType)).adding(increment.delta, to: before)
        if outcome.counter.saturatedTotal != before.saturatedTotal {
            try CounterTable.setTotal(outcome.counter.saturatedTotal, of: object, name, on: connection)
            mirror.hasCounterTable = true
        }
        if outcome.counter.shown != before.shown {
            try write([.integer(outcome.counter.shown)], to: increment.attribute, of: object, in: increment.entity, known: increment.known)
        }
        return outcome
    }
}

import Foundation
import LocalStoreCore

/// One entry of the conflict journal: a resolution that discarded or changed something a
/// replica committed, with what won, what lost and why.
///
/// ```swift
/// for entry in try replica.conflicts() where entry.kind == .attribute {
///     print("\(entry.entity).\(entry.property!) lost \(entry.loser.value?.jsonText ?? "nothing")")
/// }
/// ```
public struct ConflictEntry: Hashable, Sendable, Codable {
    /// What kind of resolution this was.
    public enum Kind: String, Hashable, Sendable, Codable {
        /// Concurrent writes to one attribute: the larger `(HLC, replica ID)` won.
        case attribute
        /// An update to an object that was deleted concurrently: the delete won.
        case updateVersusDelete = "update_vs_delete"
        /// A to-one relationship set to different targets concurrently.
        case toOne = "to_one"
        /// Concurrent moves of one member of an ordered relationship.
        case move
        /// A new reference to an object deleted concurrently was dropped (delete rule nullify).
        case referenceDropped = "reference_dropped"
        /// An object was deleted because it referred to an object deleted concurrently (delete rule cascade).
        case cascadedDelete = "cascaded_delete"
        /// A delete was voided because a concurrent reference was added (delete rule deny).
        case voidedDelete = "voided_delete"
        /// Two objects were created concurrently with equal unique values; the later one was merged
        /// into the earlier (or a write reached the merged one).
        case uniqueMerged = "unique_merged"
        /// Concurrent links took a relationship beyond its `maxCount`: the links made last are
        /// hidden while the earlier ones fill it.
        case aboveMaxCount = "above_max_count"
        /// Concurrent unlinks or deletes left a relationship below its `minCount`: the merge keeps
        /// the result, and the next save that changes the relationship must fix it.
        case belowMinCount = "below_min_count"
        /// A counter's total left its column's range: the counter shows the range's bound.
        case counterSaturated = "counter_saturated"
    }

    /// One side of a resolution: a value (`nil` for none) and the change set that wrote it.
    public struct Side: Hashable, Sendable, Codable {
        /// The value as a JSON value (``ConflictEntry/Value``): an attribute's value (``Value/null``
        /// when it was SQL `NULL`), an object ID or a position key; `nil` when the side wrote no
        /// value (a delete, an object's creation).
        public var value: Value?
        /// The change set that wrote it.
        public var dot: Dot
        /// That change set's timestamp.
        public var hlc: HLC

        /// A side with these fields.
        public init(value: Value?, dot: Dot, hlc: HLC) {
            self.value = value
            self.dot = dot
            self.hlc = hlc
        }

        private enum CodingKeys: String, CodingKey { case value, dot, hlc }

        /// Reads a side; a `value` that is JSON `null` is ``Value/null``, an absent one is none.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            value = container.contains(.value) ? try container.decode(Value.self, forKey: .value) : nil
            dot = try container.decode(Dot.self, forKey: .dot)
            hlc = try container.decode(HLC.self, forKey: .hlc)
        }

        /// Writes a side, leaving `value` out when there is none.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(value, forKey: .value)
            try container.encode(dot, forKey: .dot)
            try container.encode(hlc, forKey: .hlc)
        }
    }

    /// Position in the journal (increasing).
    public var number: Int64
    /// What kind of resolution discarded something.
    public var kind: Kind
    /// The entity of the object concerned.
    public var entity: String
    /// The object concerned.
    public var objectID: UUID
    /// The attribute or relationship concerned, if any.
    public var property: String?
    /// What won, if anything did.
    public var winner: Side?
    /// What was discarded.
    public var loser: Side
    /// The change set whose arrival caused the resolution.
    public var cause: Dot
    /// A sentence for people.
    public var detail: String
}

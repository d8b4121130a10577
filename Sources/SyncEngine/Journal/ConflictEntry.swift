import Foundation
import LocalStoreCore

/// One entry of the conflict journal: a resolution that discarded or changed something a
/// replica committed, with what won, what lost and why.
///
/// ```swift
/// for entry in try replica.conflicts() where entry.kind == .attribute {
///     print("\(entry.entity).\(entry.property!) lost \(entry.loser.value ?? "nil")")
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
        /// A counter's total left its column's range: the counter shows the range's bound.
        case counterSaturated = "counter_saturated"
    }

    /// One side of a resolution: a value (as JSON text, `nil` for none) and the change set that wrote it.
    public struct Side: Hashable, Sendable, Codable {
        /// The value, as JSON text; `nil` when the side wrote no value (a delete, a removed reference).
        public var value: String?
        /// The change set that wrote it.
        public var dot: Dot
        /// That change set's timestamp.
        public var hlc: HLC
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

import Foundation

/// What the engine read ahead for the current change set: the objects whose rows may be read
/// together with the next row a conflict needs (``MergeEngine/loadRowValues(of:_:)``), one
/// statement for a run of conflicts rather than one per conflict; and the objects it creates that
/// the store was found not to hold, so that each `create` need not ask again.
struct ReadAhead {
    /// Per entity, the objects not read yet.
    var candidates: [String: [UUID]] = [:]
    /// Entities whose sets in the current change set were already taken as candidates.
    var scannedEntities: Set<String> = []

    /// Objects the current change set creates that the store does not hold.
    var absentCreations: Set<ObjectKey> = []

    /// Starts over with the objects a change set's prefetch read.
    mutating func reset(to candidates: [String: [UUID]], absentCreations: Set<ObjectKey> = []) {
        self.candidates = candidates
        scannedEntities = []
        self.absentCreations = absentCreations
    }
}

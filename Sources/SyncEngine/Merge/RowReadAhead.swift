import Foundation

/// The objects of the current change set whose rows may be read together with the next row a
/// conflict needs (``MergeEngine/loadRowValues(of:_:)``): one statement for a run of conflicts,
/// not one per conflict.
struct RowReadAhead {
    /// Per entity, the objects not read yet.
    var candidates: [String: [UUID]] = [:]
    /// Entities whose sets in the current change set were already taken as candidates.
    var scannedEntities: Set<String> = []

    /// Starts over with the objects a change set's prefetch read.
    mutating func reset(to candidates: [String: [UUID]]) {
        self.candidates = candidates
        scannedEntities = []
    }
}

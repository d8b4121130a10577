import Foundation

/// The last-writer-wins decisions of a whole run of set-only change sets (``SetRun``): it takes
/// the run's writes, grouped by object, and what is stored of each object, and returns every
/// object's outcome (the writes that win, the journal entries the writes make). It reads and
/// writes nothing: ``MergeEngine`` gathers the objects' state, asks once for the run, and applies
/// the outcomes (`MergeEngine+SetRuns.swift`).
///
/// The run is laid out in arrays, not a dictionary per object: each change set's stamp and
/// vector once, each write's change set and attribute as small indices, and the writes of one
/// object next to each other in change set order, so an object's writes from every change set
/// of the run are judged one after the other (``LastWriterWinsResolver``) on its state.
struct SetRunResolver {
    /// The writes of a run, grouped by object.
    struct Writes: Equatable {
        /// The writes of object `slot` are `first[slot]..<first[slot + 1]`, in change set order;
        /// one element more than there are objects.
        var first: [Int] = [0]
        /// Each write's change set in the run (an index into the stamps and vectors).
        var changeSets: [Int32] = []
        /// Each write's attribute, as an index into ``attributeNames``.
        var attributeSlots: [Int32] = []
        /// The names of the attributes the run writes.
        var attributeNames: [String] = []

        /// How many objects the run writes.
        var objectCount: Int { first.count - 1 }

        /// The writes of object `slot`.
        func writes(of slot: Int) -> Range<Int> { first[slot]..<first[slot + 1] }
    }

    /// Whether journal entries are wanted (syncd's store keeps no journal).
    var keepsJournal: Bool

    /// Judges the run: `stamps` and `vectors` are its change sets', in order; `objects` what is
    /// known of each object before the run, by slot. Returns each object's outcome, by slot;
    /// write indices in an outcome count from the object's first write.
    func resolve(_ writes: Writes, stamps: [Stamp], vectors: [VersionVector], objects: [LastWriterWinsResolver.Object])
        -> [LastWriterWinsResolver.Outcome] {
        precondition(objects.count == writes.objectCount, "one state per object of the run")
        let judge = LastWriterWinsResolver(keepsJournal: keepsJournal)
        return objects.indices.map { slot in
            judge.judge(writes.writes(of: slot).lazy.map { write in
                let changeSet = Int(writes.changeSets[write])
                return LastWriterWinsResolver.Write(stamp: stamps[changeSet], vector: vectors[changeSet],
                                                    attribute: writes.attributeNames[Int(writes.attributeSlots[write])])
            }, on: objects[slot])
        }
    }
}

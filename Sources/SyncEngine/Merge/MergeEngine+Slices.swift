import Codecs
import Foundation
import LocalStoreCore

/// What outlives one slice while a change set is merged a slice at a time: the only state of the
/// change set the engine keeps that is not already in the engine's per-object caches.
struct SlicedChangeSet {
    /// The change set without its operations.
    let header: ChangeSet
    /// The root of every delete in the change set, from all its slices: an `unlink` caused by a
    /// delete carries the delete's root, and the delete may lie in another slice.
    let deletionRoots: [ObjectKey: UUID]
    /// The objects of uniquely keyed entities the change set created so far, with the values set on them.
    var uniqueCreations = UniqueCreations()
    /// The index in the whole change set of the slice's first operation, for errors.
    var nextOperationIndex = 0
}

/// Merging one change set given as a sequence of operation slices, in the caller's transaction,
/// with the result of merging it whole (``apply(_:)``).
///
/// Operations are applied in their order, whatever the slice boundaries, and every rule that
/// looks beyond one operation reads state that crosses slices:
///
/// - the engine's caches (``objects``, ``MaterializationWork``'s objects and touched delete
///   roots) live for the whole batch, so an object created in one slice and linked, set or
///   deleted in a later one is the object the whole change set would find;
/// - the deletes of the change set are known before the first slice (``SlicedChangeSet/deletionRoots``),
///   since an `unlink` records the root of a delete that may come in any slice;
/// - uniqueness collisions are judged after the last slice, on the creations of all slices;
/// - delete rules, one-to-one choices, positions and count checks are computed by
///   ``materialize()``, once, after the whole batch, as for a whole change set;
/// - the version vector advances once, after the last slice.
///
/// Between slices the attribute writes held in memory are written to the store, and the values
/// of objects created without a row yet go to their tombstones (which ``detachedColumns(of:)``
/// reads back), so memory holds one slice of operations and, per object touched, its
/// ``ObjectInfo`` (creation stamp, flags, attribute stamps), not its values.
extension MergeEngine {
    /// Starts merging `header`'s change set (whose operations are ignored) a slice at a time;
    /// `deletionRoots` holds the root of every delete of the whole change set.
    func beginSlices(of header: ChangeSet, deletionRoots: [ObjectKey: UUID]) {
        var header = header
        header.operations = []
        changeSets.begin(header)
        sliced = SlicedChangeSet(header: header, deletionRoots: deletionRoots)
    }

    /// Applies the next slice of the change set begun by ``beginSlices(of:deletionRoots:)``.
    func applySlice(_ operations: [Operation]) throws {
        guard var state = sliced else { preconditionFailure("applySlice before beginSlices") }
        var slice = state.header
        slice.operations = operations
        changeSets.current = slice
        let prefetched = try prefetch(slice)
        try operations.withUnsafeBufferPointer { operations in
            for index in operations.indices {
                try atOperation(state.nextOperationIndex + index) { try apply(at: index, of: operations, known: prefetched[index]) }
            }
        }
        noteUniqueCreations(in: operations, into: &state.uniqueCreations)
        state.nextOperationIndex += operations.count
        sliced = state
        try releaseSliceMemory()
    }

    /// Ends the change set begun by ``beginSlices(of:deletionRoots:)``: uniqueness merges of its
    /// creations, then its dot in the version vector.
    func finishSlices() throws {
        guard let state = sliced else { preconditionFailure("finishSlices before beginSlices") }
        changeSets.current = state.header
        try resolveUniqueValues(state.uniqueCreations)
        try VersionVectorTable.advance(to: state.header.dot, on: connection)
        sliced = nil
    }

    /// Writes what a slice left in memory that the store can hold until ``materialize()``:
    /// pending attribute writes and stamps, and the values of objects without a row.
    private func releaseSliceMemory() throws {
        // The journal stays packed as a whole merge packs it (see flushJournal()).
        try flushPendingWrites(keepingJournal: true)
        for (object, values) in pending.detachedValues.sorted(by: { $0.key < $1.key }) {
            try storeTombstone(values, for: object)
        }
        pending.detachedValues = [:]
    }
}

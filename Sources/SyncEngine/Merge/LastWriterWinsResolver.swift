import Foundation

/// The last-writer-wins rule for the `set`s of one object: which write each attribute keeps, and
/// which conflict journal entries the writes make, decided from what is known of the object
/// before them. It reads and writes nothing: ``MergeEngine`` reads the object's state, asks,
/// and writes the outcome (`MergeEngine+LastWriterWins.swift`), for one `set` of a change set
/// merged operation by operation as for every write of a run of sets (``SetRun``) on the object.
///
/// The rule (CONTRACT.md §3.1, §3.2, §3.8):
/// - A write wins when its stamp `(HLC, replica ID)` is larger than the stamp of the attribute's
///   last write, or of the object's creation if nothing wrote it since.
/// - A write whose change set had not seen that last write is concurrent with it: the loser,
///   either one, goes to the journal (`attribute`). A write that loses is journaled whatever its
///   change set had seen: it can only lose to a write it had not seen.
/// - A write to an object that a delete in force removes, which the delete's change set had not
///   seen, loses to the delete (`update_vs_delete`, once per deleting change set); a write to a
///   duplicate that a uniqueness merge removed is kept on the merged object only
///   (`unique_merged`). Neither changes how the attribute's stamp is judged, so that every
///   replica ends with the same stamps.
struct LastWriterWinsResolver {
    /// What is known of the object before the writes.
    struct Object {
        /// The stamp of the object's creation: the stamp of every attribute nothing wrote since.
        var creation: Stamp
        /// The stamps of its attributes' last writes, as stored.
        var storedStamps: FieldStamps
        /// The stamps of writes won earlier in the batch, not stored yet (they come first).
        var pendingStamps = FieldStamps()
        /// The deletes in force that remove the object: each delete's change set and its stamp.
        var deletes: [(dot: Dot, stamp: Stamp)] = []
        /// The object a uniqueness merge merged this duplicate into, if one did.
        var survivor: UUID?

        /// The stamp of the last write to `attribute` before the writes.
        func stamp(of attribute: String) -> Stamp {
            if !pendingStamps.isEmpty, let pending = pendingStamps[attribute] { return pending }
            return storedStamps[attribute] ?? creation
        }
    }

    /// One write: the stamp and vector of its change set (what the change set had seen), and the
    /// attribute it sets.
    struct Write {
        var stamp: Stamp
        var vector: VersionVector
        var attribute: String
    }

    /// What a journal entry shows of one side.
    enum Value: Equatable {
        /// Nothing: the side is a delete.
        case none
        /// The values that the write at this index, among those judged, sets.
        case written(Int)
        /// What the attribute held before the writes.
        case held
        /// The identifier of the object the duplicate was merged into.
        case survivor(UUID)
    }

    /// One side of a journal entry.
    struct Side: Equatable {
        var value: Value
        var stamp: Stamp
    }

    /// A journal entry a write made; its cause is the write's change set.
    struct Entry: Equatable {
        enum Reason: Equatable {
            /// Two writes to the attribute were concurrent (`attribute`).
            case concurrentWrites
            /// The object was deleted concurrently with the write (`update_vs_delete`).
            case deletedConcurrently
            /// The object is a duplicate a uniqueness merge removed (`unique_merged`).
            case mergedDuplicate
        }

        /// The index of the write that made it, among those judged.
        var write: Int
        var reason: Reason
        var winner: Side
        var loser: Side
    }

    /// What the writes come to.
    struct Outcome: Equatable {
        /// The indices of the writes that won their attribute, in order: a later one of the same
        /// attribute replaces an earlier one.
        var winners: [Int] = []
        /// The journal entries, writes in order, each write's in the order it made them.
        var entries: [Entry] = []
    }

    /// Whether journal entries are wanted (syncd's store keeps no journal).
    var keepsJournal: Bool

    /// Judges `writes`, in change set order, on `object`.
    func judge(_ writes: some Collection<Write>, on object: Object) -> Outcome {
        var outcome = Outcome()
        outcome.winners.reserveCapacity(writes.count)
        if keepsJournal { outcome.entries.reserveCapacity(writes.count) }
        // The stamp each attribute has as the writes go, and the write that set it, once one did:
        // an object has few attributes, so a short list beats hashing their names.
        var won: [(attribute: String, stamp: Stamp, write: Int)] = []
        for (index, write) in writes.enumerated() {
            if keepsJournal, !object.deletes.isEmpty {
                for delete in LastWriterWinsResolver.deletes(object.deletes, unseenBy: write.vector) {
                    outcome.entries.append(Entry(write: index, reason: .deletedConcurrently,
                                                 winner: Side(value: .none, stamp: delete.stamp), loser: Side(value: .written(index), stamp: write.stamp)))
                }
            }
            if keepsJournal, let survivor = object.survivor {
                outcome.entries.append(Entry(write: index, reason: .mergedDuplicate,
                                             winner: Side(value: .survivor(survivor), stamp: write.stamp),
                                             loser: Side(value: .written(index), stamp: write.stamp)))
            }
            let earlier = won.firstIndex { $0.attribute == write.attribute }
            let held = earlier.map { Side(value: .written(won[$0].write), stamp: won[$0].stamp) }
                ?? Side(value: .held, stamp: object.stamp(of: write.attribute))
            let incoming = Side(value: .written(index), stamp: write.stamp)
            if write.stamp > held.stamp {
                if keepsJournal, !write.vector.covers(held.stamp.dot) {
                    outcome.entries.append(Entry(write: index, reason: .concurrentWrites, winner: incoming, loser: held))
                }
                if let earlier { won[earlier] = (write.attribute, write.stamp, index) } else { won.append((write.attribute, write.stamp, index)) }
                outcome.winners.append(index)
            } else if keepsJournal {
                outcome.entries.append(Entry(write: index, reason: .concurrentWrites, winner: held, loser: incoming))
            }
        }
        return outcome
    }

    /// Of `deletes` (in force), those a write whose change set had seen `vector` had not seen,
    /// each deleting change set once: the write loses to each of them.
    static func deletes(_ deletes: [(dot: Dot, stamp: Stamp)], unseenBy vector: VersionVector) -> [(dot: Dot, stamp: Stamp)] {
        var seen: Set<Dot> = []
        return deletes.filter { !vector.covers($0.dot) && seen.insert($0.dot).inserted }
    }
}

import Codecs
import Foundation
import LocalStoreCore

/// Consecutive change sets of a batch that only set last-writer-wins attributes, held by the
/// engine until something else comes, then resolved object by object.
///
/// A batch of many change sets often writes the same objects again and again (each save of a
/// replica that edits the same records). Resolved change set by change set, every write looks its
/// object up again, and by the time the next change set reaches an object its stamps and values
/// have left the processor's caches; resolved object by object, an object's writes from every
/// change set of the run are judged one after the other on state read once.
///
/// The result is the one change set order gives, entry for entry:
///
/// - a last-writer-wins `set` reads and writes only its own object's stamps and values, and the
///   writes of one object are still judged in change set order;
/// - each write is judged with its own change set's stamp and vector
///   (``LastWriterWinsResolver/Write``), so coverage and stamps are those of its change set;
/// - journal entries are held with the position of the write that made them and handed to the
///   journal in change set and operation order, so they are numbered and packed as they would
///   have been;
/// - the version vector advances over the run's change sets in order.
///
/// Anything that reads or writes the store through the engine (``MergeEngine/connection``),
/// the journal, or a change set that is not a run of sets resolves the held run first.
struct SetRun: ~Copyable {
    /// The held change sets, in the order they were applied.
    var changeSets: [ChangeSet] = []
    /// Whether the run is being resolved (journal entries are held, the run is not resolved again).
    var isResolving = false
    /// The write being judged: its change set's index in ``changeSets`` and its operation's index.
    var position: (changeSet: Int32, operation: Int32) = (0, 0)
    /// The journal entries the run made, encoded one after the other.
    private var journalBytes = ByteWriter(reservingCapacity: 0)
    /// Where each held entry lies in ``journalBytes``, with the write that made it.
    private(set) var journalEntries: [(changeSet: Int32, operation: Int32, start: Int, end: Int)] = []

    /// Holds an entry made by the write at ``position``.
    mutating func holdJournalEntry(
        _ kind: ConflictEntry.Kind, entity: String, object: UUID, property: String?, winner: JournalSide?,
        loser: JournalSide, detail: JournalDetail
    ) throws {
        let start = journalBytes.count
        try JournalBatch.encodeEntry(kind, entity: entity, object: object, property: property, winner: winner, loser: loser,
                                     detail: detail, into: &journalBytes)
        journalEntries.append((position.changeSet, position.operation, start, journalBytes.count))
    }

    /// The held entries in change set and operation order (entries of one write in the order
    /// they were made), each with its bytes.
    func forEachJournalEntryInOrder(_ body: (_ changeSet: Int, _ entry: UnsafeRawBufferPointer) throws -> Void) rethrows {
        let order = journalEntries.indices.sorted { left, right in
            let (a, b) = (journalEntries[left], journalEntries[right])
            if a.changeSet != b.changeSet { return a.changeSet < b.changeSet }
            if a.operation != b.operation { return a.operation < b.operation }
            return left < right
        }
        try journalBytes.withBytes { bytes in
            for index in order {
                let entry = journalEntries[index]
                try body(Int(entry.changeSet), UnsafeRawBufferPointer(rebasing: bytes[entry.start..<entry.end]))
            }
        }
    }
}

extension MergeEngine {
    /// Whether `changeSet` only sets last-writer-wins attributes the schema has: such change sets
    /// are held and resolved object by object (see ``SetRun``). Anything else, or a set the
    /// schema refuses, takes the usual path, which reports it.
    func holdsAsSetRun(_ changeSet: ChangeSet) -> Bool {
        guard !changeSet.operations.isEmpty else { return false }
        for operation in changeSet.operations {
            guard case .set(let entity, _, let name, _) = operation,
                  let (_, attribute) = try? attributeOfSet(entity, name),
                  attribute.policy == .lastWriterWins else { return false }
        }
        return true
    }

    /// Resolves the held run of sets, object by object (see ``SetRun``); nothing when none is held.
    func resolveHeldSets() throws {
        guard !setRun.changeSets.isEmpty, !setRun.isResolving else { return }
        setRun.isResolving = true
        let run = setRun.changeSets
        let (objectKeys, firstWrite, writes) = MergeEngine.writesByObject(of: run)
        try loadUnknownObjects(objectKeys)
        // Object by object: each object's writes from every change set of the run are judged
        // together, on its state read once (``LastWriterWinsResolver``).
        var objectWrites: [LastWriterWinsSet] = []
        for (slot, object) in objectKeys.enumerated() {
            objectWrites.removeAll(keepingCapacity: true)
            let prefetched = objects[object]
            var target: (entity: SyncSchema.Entity, known: ObjectInfo)?
            for (changeSetIndex, operationIndex) in writes[firstWrite[slot]..<firstWrite[slot + 1]] {
                guard case .set(_, _, let name, let values) = run[Int(changeSetIndex)].operations[Int(operationIndex)] else { continue }
                let (entity, attribute, known) = try atOperation(Int(operationIndex), of: run[Int(changeSetIndex)].dot) {
                    try setTarget(object, attribute: name, values: values, known: prefetched)
                }
                target = (entity, known)
                let judged = LastWriterWinsResolver.Write(stamp: run[Int(changeSetIndex)].stamp, vector: run[Int(changeSetIndex)].vector, attribute: name)
                objectWrites.append(LastWriterWinsSet(judged: judged, position: (changeSetIndex, operationIndex), attribute: attribute, values: values))
            }
            guard let target, let first = objectWrites.first else { continue }
            try atOperation(Int(first.position.operation), of: first.judged.stamp.dot) {
                try applyLastWriterWins(objectWrites, to: object, in: target.entity, known: target.known)
            }
        }
        // Still resolving: the store access does not resolve the run again.
        for changeSet in run { try VersionVectorTable.advance(to: changeSet.dot, on: connection) }
        var resolved = SetRun()
        swap(&resolved, &setRun)
        try resolved.forEachJournalEntryInOrder { changeSetIndex, entry in
            try journalEncoded(entry, cause: run[changeSetIndex].dot)
        }
    }

    /// The objects the run writes, in the order of their first write, and each one's writes
    /// (change set and operation indices, in change set order) as the range
    /// `writes[firstWrite[slot]..<firstWrite[slot + 1]]`: two arrays, not an array per object.
    private static func writesByObject(of run: [ChangeSet])
        -> (objects: [ObjectKey], firstWrite: [Int], writes: [(changeSet: Int32, operation: Int32)]) {
        var slotOfObject: [ObjectKey: Int] = [:]
        var objects: [ObjectKey] = []
        var slotOfWrite: [Int] = []
        slotOfWrite.reserveCapacity(run.reduce(0) { $0 + $1.operations.count })
        for changeSet in run {
            // Operations are read in place: copying each out of the array retained its values.
            changeSet.operations.withUnsafeBufferPointer { operations in
                for index in operations.indices {
                    guard case .set(let entity, let id, _, _) = operations[index] else { continue }
                    let object = ObjectKey(entity: entity, id: id)
                    if let slot = slotOfObject[object] {
                        slotOfWrite.append(slot)
                    } else {
                        slotOfObject[object] = objects.count
                        slotOfWrite.append(objects.count)
                        objects.append(object)
                    }
                }
            }
        }
        var firstWrite = [Int](repeating: 0, count: objects.count + 1)
        for slot in slotOfWrite { firstWrite[slot + 1] += 1 }
        for slot in objects.indices { firstWrite[slot + 1] += firstWrite[slot] }
        var next = firstWrite
        var writes = [(changeSet: Int32, operation: Int32)](repeating: (0, 0), count: slotOfWrite.count)
        var write = 0
        for (changeSetIndex, changeSet) in run.enumerated() {
            for operationIndex in changeSet.operations.indices {
                let slot = slotOfWrite[write]
                writes[next[slot]] = (Int32(changeSetIndex), Int32(operationIndex))
                next[slot] += 1
                write += 1
            }
        }
        return (objects, firstWrite, writes)
    }

    /// Reads, a few hundred per statement, what the engine does not know yet of `objectKeys`;
    /// they are also the rows a conflict reads in bulk (see ``loadRowValues(of:_:)``).
    private func loadUnknownObjects(_ objectKeys: [ObjectKey]) throws {
        var missing: [String: [UUID]] = [:]
        for object in objectKeys where objects[object] == nil { missing[object.entity, default: []].append(object.id) }
        rowCandidates = missing
        rowsScanned = []
        for (entity, ids) in missing.sorted(by: { $0.key < $1.key }) {
            for chunk in MergeEngine.chunks(of: ids) { try loadInfo(entity, chunk) }
        }
    }
}

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
    /// The names and replicas the held entries' heads refer to.
    private(set) var journalTable = JournalTable()
    /// The held entries, per change set of the run (by index; none until one is held).
    private var heldJournals: [HeldJournal] = []

    /// The entries held for one change set of a run, in the order they were made: object by
    /// object, which for most runs is the change set's operation order too.
    private final class HeldJournal {
        /// Each entry: the operation that made it, its head and where its body ends in ``bodies``.
        var entries: [(operation: Int32, head: JournalEntryHead, end: Int)] = []
        /// The bodies, one after the other (``JournalBatch/writeBody(_:object:winner:loser:detail:into:)``).
        var bodies: ByteWriter

        /// Room for an entry per operation of a change set of `operations`, as a run of stale
        /// writes makes: grown from nothing, the buffer would be copied a dozen times.
        init(operations: Int) {
            let expected = min(operations, 1 << 16)
            entries.reserveCapacity(expected)
            bodies = ByteWriter(reservingCapacity: expected * JournalBatch.typicalHeldBodySize)
        }
    }

    /// Holds an entry made by the write at ``position``; its cause is that write's change set.
    mutating func holdJournalEntry(
        _ kind: ConflictEntry.Kind, entity: String, object: UUID, property: String?, winner: JournalSide?,
        loser: JournalSide, detail: JournalDetail
    ) throws {
        let changeSet = Int(position.changeSet)
        let cause = changeSets[changeSet].stamp
        var causeHLC: HLC? = cause.hlc
        let head = JournalBatch.head(kind, entity: entity, property: property, winner: winner, loser: loser, detail: detail,
                                     cause: cause.dot, causeHLC: &causeHLC, table: &journalTable)
        while heldJournals.count <= changeSet { heldJournals.append(HeldJournal(operations: changeSets[heldJournals.count].operations.count)) }
        let held = heldJournals[changeSet]
        try JournalBatch.writeBody(head, object: object, winner: winner, loser: loser, detail: detail, into: &held.bodies)
        held.entries.append((position.operation, head, held.bodies.count))
    }

    /// The held entries in change set and operation order (entries of one write in the order
    /// they were made), each with its body.
    func forEachJournalEntryInOrder(
        _ body: (_ changeSet: Int, _ head: JournalEntryHead, _ entryBody: UnsafeRawBufferPointer) throws -> Void
    ) rethrows {
        for (changeSet, held) in heldJournals.enumerated() {
            let entries = held.entries
            // Kept per change set in the order made, the bodies are read one after the other and
            // stream through the cache; picked out of one buffer of the whole run in change set
            // order, each would wait on memory.
            var order = Array(entries.indices)
            if !zip(entries, entries.dropFirst()).allSatisfy({ $0.operation <= $1.operation }) {
                order.sort { left, right in
                    let (a, b) = (entries[left].operation, entries[right].operation)
                    return a != b ? a < b : left < right
                }
            }
            try held.bodies.withBytes { bytes in
                for index in order {
                    let start = index == 0 ? 0 : entries[index - 1].end
                    try body(changeSet, entries[index].head, UnsafeRawBufferPointer(rebasing: bytes[start..<entries[index].end]))
                }
            }
        }
    }
}

extension MergeEngine {
    /// Resolves the held run of sets, object by object (see ``SetRun``); nothing when none is
    /// held. Three steps: what the run's objects have stored is read (in bulk), the whole run
    /// is judged at once by ``SetRunResolver``, which reads nothing, and its outcomes are
    /// written, object by object.
    func resolveHeldSets() throws {
        guard !setRun.changeSets.isEmpty, !setRun.isResolving else { return }
        setRun.isResolving = true
        let run = setRun.changeSets
        let writes = try writesByObject(of: run)
        try loadUnknownObjects(writes.objects)
        let stamps = run.map(\.stamp)
        let vectors = run.map(\.vector)
        let knowns = try objectsOfRun(writes, stamps: stamps)
        let states = try knowns.indices.map { slot in
            let first = writes.decisions.first[slot]
            return try atOperation(Int(writes.operations[first]), of: stamps[Int(writes.decisions.changeSets[first])].dot) {
                try lastWriterWinsState(of: writes.objects[slot], known: knowns[slot])
            }
        }
        let outcomes = SetRunResolver(keepsJournal: keepsJournal).resolve(writes.decisions, stamps: stamps, vectors: vectors, objects: states)
        var objectWrites: [LastWriterWinsSet] = []
        for (slot, object) in writes.objects.enumerated() {
            objectWrites.removeAll(keepingCapacity: true)
            for write in writes.decisions.writes(of: slot) {
                let changeSet = writes.decisions.changeSets[write]
                let attribute = writes.attributes[Int(writes.decisions.attributeSlots[write])]
                let judged = LastWriterWinsResolver.Write(stamp: stamps[Int(changeSet)], vector: vectors[Int(changeSet)], attribute: attribute.name)
                objectWrites.append(LastWriterWinsSet(judged: judged, position: (changeSet, writes.operations[write]), attribute: attribute,
                                                      values: writes.values[write]))
            }
            let first = objectWrites[0]
            let entity = writes.entities[Int(writes.decisions.attributeSlots[writes.decisions.first[slot]])]
            try atOperation(Int(first.position.operation), of: first.judged.stamp.dot) {
                try apply(outcomes[slot], of: objectWrites, to: object, in: entity, known: knowns[slot], survivor: states[slot].survivor)
            }
        }
        // Still resolving: the store access does not resolve the run again.
        for changeSet in run { try VersionVectorTable.advance(to: changeSet.dot, on: connection) }
        var resolved = SetRun()
        swap(&resolved, &setRun)
        let table = resolved.journalTable
        try resolved.forEachJournalEntryInOrder { changeSetIndex, head, body in
            try journalHeld(head, body: body, numberedIn: table, cause: run[changeSetIndex].stamp)
        }
    }

    /// What the engine knows of each object of the run, by slot, with its stored stamps read
    /// (a few hundred objects per statement). Each write is checked against the schema and the
    /// objects that exist, naming the operation when it fails, as a `set` merged on its own is.
    private func objectsOfRun(_ writes: RunWrites, stamps: [Stamp]) throws -> [ObjectInfo] {
        var knowns: [ObjectInfo] = []
        knowns.reserveCapacity(writes.objects.count)
        var withoutStamps: [String: [(UUID, ObjectInfo)]] = [:]
        for (slot, object) in writes.objects.enumerated() {
            var known = objects[object]
            for write in writes.decisions.writes(of: slot) {
                let attribute = writes.attributes[Int(writes.decisions.attributeSlots[write])]
                let values = writes.values[write]
                if known == nil || attribute.columns.count != values.count {
                    known = try atOperation(Int(writes.operations[write]), of: stamps[Int(writes.decisions.changeSets[write])].dot) {
                        try setTarget(object, attribute: attribute.name, values: values, known: known).known
                    }
                }
            }
            // A run writes at least once to each of its objects, so the loop above found it.
            let found = known!
            if found.storedFieldStamps == nil { withoutStamps[object.entity, default: []].append((object.id, found)) }
            knowns.append(found)
        }
        // In name order, though the order changes nothing but the order of reads.
        for (entity, loaded) in withoutStamps.sorted(by: { $0.key < $1.key }) {
            for start in stride(from: 0, to: loaded.count, by: MergeEngine.objectsPerRead) {
                let chunk = loaded[start..<min(start + MergeEngine.objectsPerRead, loaded.count)]
                try loadFieldStamps(entity, of: Dictionary(chunk, uniquingKeysWith: { first, _ in first }))
            }
        }
        return knowns
    }

    /// The writes of a run grouped by object: flat arrays, not an array per object.
    private struct RunWrites {
        /// The objects the run writes, in the order of their first write; an object's slot is its
        /// index here.
        var objects: [ObjectKey] = []
        /// What ``SetRunResolver`` judges: each write's change set and attribute, by object.
        var decisions = SetRunResolver.Writes()
        /// Each write's operation in its change set.
        var operations: [Int32] = []
        /// Each write's values.
        var values: [[SQLValue]] = []
        /// The attributes the run writes (``SetRunResolver/Writes/attributeNames`` names them), and the entity of each.
        var attributes: [SyncSchema.Attribute] = []
        var entities: [SyncSchema.Entity] = []
    }

    /// Reads the run's operations once (validation found each a `set` of a last-writer-wins
    /// attribute the schema has, ``ChangeSetValidator/Findings``): each operation's payload is copied out of its
    /// change set here only, and its attribute looked up by name only when it is not the one
    /// the operation before it named.
    private func writesByObject(of run: [ChangeSet]) throws -> RunWrites {
        let count = run.reduce(0) { $0 + $1.operations.count }
        // Each object's slot by entity, then identifier: a run writes one or a few entities, and
        // hashing an identifier alone costs less than hashing it with its entity's name.
        var slotsByEntity: [String: [UUID: Int32]] = [:]
        var entitySlots: (entity: String, slots: [UUID: Int32])?
        var result = RunWrites()
        var objectOfWrite: [Int32] = []
        var positionOfWrite: [(changeSet: Int32, operation: Int32)] = []
        var attributeOfWrite: [Int32] = []
        var valuesOfWrite: [[SQLValue]] = []
        objectOfWrite.reserveCapacity(count)
        positionOfWrite.reserveCapacity(count)
        attributeOfWrite.reserveCapacity(count)
        valuesOfWrite.reserveCapacity(count)
        var lastAttribute: (entity: String, name: String, slot: Int32)?
        for (changeSetIndex, changeSet) in run.enumerated() {
            for index in changeSet.operations.indices {
                guard case .set(let entity, let id, let name, let values) = changeSet.operations[index] else { continue }
                if entitySlots?.entity != entity {
                    if let previous = entitySlots { slotsByEntity[previous.entity] = previous.slots }
                    entitySlots = (entity, slotsByEntity.removeValue(forKey: entity) ?? [:])
                }
                let newSlot = Int32(result.objects.count)
                let slot = entitySlots!.slots[id, default: newSlot]
                if slot == newSlot {
                    entitySlots!.slots[id] = newSlot
                    result.objects.append(ObjectKey(entity: entity, id: id))
                }
                objectOfWrite.append(slot)
                if lastAttribute == nil || lastAttribute?.name != name || lastAttribute?.entity != entity {
                    let (schemaEntity, attribute) = try atOperation(index, of: changeSet.dot) { try attributeOfSet(entity, name) }
                    let slot = result.attributes.firstIndex { $0 === attribute } ?? {
                        result.attributes.append(attribute)
                        result.entities.append(schemaEntity)
                        result.decisions.attributeNames.append(attribute.name)
                        return result.attributes.count - 1
                    }()
                    lastAttribute = (entity, name, Int32(slot))
                }
                attributeOfWrite.append(lastAttribute!.slot)
                valuesOfWrite.append(values)
                positionOfWrite.append((Int32(changeSetIndex), Int32(index)))
            }
        }
        // Counting sort by object, stable: each object's writes stay in change set order.
        var first = [Int](repeating: 0, count: result.objects.count + 1)
        for slot in objectOfWrite { first[Int(slot) + 1] += 1 }
        for slot in result.objects.indices { first[slot + 1] += first[slot] }
        var next = first
        result.decisions.changeSets = [Int32](repeating: 0, count: objectOfWrite.count)
        result.operations = [Int32](repeating: 0, count: objectOfWrite.count)
        result.decisions.attributeSlots = [Int32](repeating: 0, count: objectOfWrite.count)
        result.values = [[SQLValue]](repeating: [], count: objectOfWrite.count)
        for write in objectOfWrite.indices {
            let slot = Int(objectOfWrite[write])
            let target = next[slot]
            (result.decisions.changeSets[target], result.operations[target]) = positionOfWrite[write]
            result.decisions.attributeSlots[target] = attributeOfWrite[write]
            swap(&result.values[target], &valuesOfWrite[write])
            next[slot] += 1
        }
        result.decisions.first = first
        return result
    }

    /// Reads, a few hundred per statement, what the engine does not know yet of `objectKeys`;
    /// they are also the rows a conflict reads in bulk (see ``loadRowValues(of:_:)``).
    private func loadUnknownObjects(_ objectKeys: [ObjectKey]) throws {
        var missing: [String: [UUID]] = [:]
        for object in objectKeys where objects[object] == nil { missing[object.entity, default: []].append(object.id) }
        readAhead.reset(to: missing)
        for (entity, ids) in missing.sorted(by: { $0.key < $1.key }) {
            for chunk in MergeEngine.chunks(of: ids) { try loadInfo(entity, chunk) }
        }
    }
}

import Codecs
import Foundation
import LocalStoreCore
import SQLiteDatabase

/// Merging one large change set a slice of operations at a time, in one transaction, with the
/// result of ``SyncReplica/apply(_:)`` of the change set alone: the same store, journal and
/// version vector, byte for byte.
///
/// What is held in memory besides one slice: the change set's deletes (object and root: an
/// `unlink` caused by a delete names its root, and the delete may come in any slice), the
/// objects of entities with a counter it creates (only the creating change set may set a
/// counter) and of entities with uniqueness keys with the values set on them (collisions are
/// judged on creations), the encoded operations (about a seventh of their JSON, stored in
/// `_sync_changeset` at the end), and the merge engine's per-object state for every object
/// touched (creation stamp, flags and attribute stamps, not values: those are written to the
/// store after each slice).
extension SyncReplica {
    /// What the first reading of a sliced change set learns.
    struct SliceSurvey {
        var operationCount = 0
        var deletionRoots: [ObjectKey: UUID] = [:]
        /// Objects created by operations this schema does not know, kept instead of applied.
        var leftOut: [UUID] = []
    }

    /// Applies one change set given in slices, in one transaction: all or nothing.
    ///
    /// The change set is checked as ``apply(_:)`` checks a batch holding it alone: values that do
    /// not fit the schema are `.schemaMismatch`, a change set whose predecessors are not applied
    /// is `.causalityViolation`, the dot of a change set applied before with other contents is
    /// `.conflictingChangeSet`, and the same contents again are ``MergeResult/alreadyApplied``.
    public func apply(slices: some ChangeSetSlices) throws -> MergeResult {
        try apply(slices: slices) { _, _, _ in }
    }

    /// ``apply(slices:)`` with one more step in the same transaction, given the change set's
    /// header and, when it was applied now, its operations in their stored form (`nil` when it
    /// was applied before): ``SQLiteDatasetEngine`` verifies its author and logs it there.
    func apply(slices: some ChangeSetSlices,
               alsoInTransaction: (SQLiteConnection, ChangeSet, UnsafeRawBufferPointer?) throws -> Void) throws -> MergeResult {
        var header = slices.header
        header.operations = []
        try ChangeSet.checkStorableRanges([header])
        let survey = try survey(slices, header: header)
        let hub = store.changeHub
        return try hub.publishing { ticket, storeChange in try withConnection { connection in
            try connection.inTransaction {
                let vector = try VersionVectorTable.vector(on: connection)
                if vector.covers(header.dot) {
                    let same = try ChangeSetTable.storedContents(of: header.dot, match: header, operations: {
                        try SyncReplica.encodedOperations(of: slices, count: survey.operationCount)
                    }, on: connection)
                    guard same != false else {
                        throw SyncError(.conflictingChangeSet, "change set \(header.dot) was applied before with different contents")
                    }
                    try alsoInTransaction(connection, header, nil)
                    return MergeResult(applied: [], alreadyApplied: [header.dot], changedObjectIDs: [])
                }
                guard SyncReplica.isApplicable(header, to: vector) else { throw SyncReplica.causalityError(header, vector: vector) }
                try ChangeSetTable.store(header, operations: StoredOperations.encode([]), status: .remote, on: connection)
                var keptObjects: Set<UUID>?
                if projection.keepsUnknown { try recordKeptObjects(survey.leftOut, keptObjects: &keptObjects, on: connection) }
                let engine = try MergeEngine(schema: schema, connection: connection, keepsJournal: keepsConflictJournal)
                engine.storeChangeRecord = hub.hasSubscribers ? StoreChangeRecord() : nil
                engine.beginSlices(of: header, deletionRoots: survey.deletionRoots)
                var encoder = StoredOperations.Encoder(operationCount: survey.operationCount)
                var appliedInPart = false
                try slices.forEachSlice { operations in
                    try encoder.append(operations)
                    var slice = header
                    slice.operations = operations
                    var applicable = projection.knownPart(of: slice) ?? slice
                    if applicable.operations.count != operations.count { appliedInPart = true }
                    if let keptObjects { SyncReplica.removeLinks(toKept: keptObjects, from: &applicable.operations) }
                    try engine.applySlice(applicable.operations)
                }
                try engine.finishSlices()
                let encoded = encoder.finish()
                try ChangeSetTable.setOperations(of: header.dot, to: encoded, on: connection)
                if appliedInPart {
                    try KeptChangeSetTable.record(header.dot, schemaVersionHash: store.schemaDocument.versionHash, on: connection)
                }
                let changed = try engine.materialize()
                let latest = HLC(rawValue: try SyncStateTable.value(of: .hlc, on: connection))
                try SyncStateTable.set(.hlc, to: max(latest, header.hlc).rawValue, on: connection)
                try encoded.withBytes { try alsoInTransaction(connection, header, $0) }
                if let record = engine.storeChangeRecord {
                    storeChange = record.storeChange(origin: .merge)
                    ticket = hub.reserveTicket()
                }
                return MergeResult(applied: [header.dot], alreadyApplied: [], changedObjectIDs: changed)
            }
        } }
    }

    /// Reads `slices` once: validates every slice as ``validate(_:)`` validates a change set,
    /// and counts the operations, the deletes and what this schema leaves out.
    private func survey(_ slices: some ChangeSetSlices, header: ChangeSet) throws -> SliceSurvey {
        batchesValidated.add(1, ordering: .relaxed)
        var survey = SliceSurvey()
        var created: Set<UUID> = []
        var last: ChangeSetValidator.Attribute?
        try slices.forEachSlice { operations in
            var slice = header
            slice.operations = operations
            let known = projection.knownPart(of: slice)
            if let known, known.operations.count != operations.count { survey.leftOut += projection.objectsLeftOut(of: slice) }
            let applicable = known ?? slice
            try validator.validate(applicable, startingAt: survey.operationCount, created: &created, last: &last)
            // As merged: under the names this schema gives them; the first delete of an object counts.
            for operation in applicable.operations {
                if case .delete(let entity, let id, let root) = operation, survey.deletionRoots[ObjectKey(entity: entity, id: id)] == nil {
                    survey.deletionRoots[ObjectKey(entity: entity, id: id)] = root
                }
            }
            survey.operationCount += operations.count
        }
        return survey
    }

    /// The stored form of the operations of `slices`, `count` of them.
    private static func encodedOperations(of slices: some ChangeSetSlices, count: Int) throws -> ByteWriter {
        var encoder = StoredOperations.Encoder(operationCount: count)
        try slices.forEachSlice { try encoder.append($0) }
        return encoder.finish()
    }
}

import Foundation
import LocalStoreCore

/// What a merge batch has decided to write and keeps in memory until it is cheaper to write at
/// once: metadata rows until the store is next read, attribute values until the batch (or
/// slice) ends, journal entries until their cause changes. The engine owns the only way to the
/// store (``MergeEngine/connection``), and that way writes the rows first, so no caller has to
/// remember to.
struct PendingWrites: ~Copyable {
    /// ``ObjectMetadataTable`` rows of the objects the batch created.
    var objectRows = ObjectMetadataTable.PendingRows()
    /// ``EdgeTable`` rows of the edges the batch added.
    var edgeRows = EdgeTable.PendingRows()
    /// Journal entries, all with one cause (see ``MergeEngine/journal(_:entity:object:property:winner:loser:cause:detail:)``).
    var journal = JournalBatch()
    /// Objects with attribute writes kept in their ``MergeEngine/ObjectInfo``, in the order they
    /// were first written.
    var objectsWithWrites: [(key: ObjectKey, info: MergeEngine.ObjectInfo)] = []
    /// Column values of objects without a row, changed in the batch, to be written back to their
    /// tombstones (or their new row) at the end.
    var detachedValues: [ObjectKey: [String: SQLValue]] = [:]

    /// Writes the metadata rows kept.
    mutating func writeRows(on connection: SQLiteConnection) throws {
        try objectRows.flush(on: connection)
        try edgeRows.flush(on: connection)
    }
}

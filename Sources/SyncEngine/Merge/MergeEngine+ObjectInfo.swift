import Codecs
import Foundation
import LocalStoreCore

extension MergeEngine {
    /// What the engine knows of one object during a batch: read once, kept for the batch (a
    /// class, so the many operations on one object share one lookup).
    final class ObjectInfo {
        let creation: Stamp
        /// Whether the object has a row in its entity table; if not, its values are in its tombstone (``ObjectMetadataTable``).
        var hasRow: Bool
        /// False only when ``DeleteTable`` surely has no row for the object, so the lookups deletes
        /// need can be skipped for the (many) objects nobody deleted.
        var mayBeDeleted: Bool
        /// The change set of this batch that created the object, if one did.
        var createdBy: Dot?
        /// ``FieldStampTable``'s stamps of the object's attributes, once read.
        var storedFieldStamps: FieldStamps?
        /// Stamps of writes this batch won, not yet in ``FieldStampTable``.
        var pendingFieldStamps = FieldStamps()
        /// The row's attribute columns (in `EntityTable.attributeColumns` order), once read (for the journal).
        var storedRowValues: [SQLValue]?
        /// Columns remote writes set, not yet in the row, by position in `EntityTable.attributeColumns`
        /// (empty when none): one UPDATE per object, not per write.
        var pendingRowValues: [SQLValue?] = []
        /// Whether the object is in ``PendingWrites/objectsWithWrites``.
        var hasPendingWrites = false

        init(creation: Stamp, hasRow: Bool, mayBeDeleted: Bool) {
            self.creation = creation
            self.hasRow = hasRow
            self.mayBeDeleted = mayBeDeleted
        }
    }
}

import Foundation
import SQLiteDatabase
import Synchronization

/// What one save changed about one object, at the level of stored values: what change
/// capture for sync records.
package struct SavedObjectChange: Sendable {
    package enum Kind: Sendable { case insert, update, delete }

    package var kind: Kind
    package var entity: String
    package var objectID: UUID
    /// Inserts: every attribute; updates: the attributes whose stored values changed;
    /// deletes: every attribute as last saved (for the conflict journal).
    package var attributes: [(name: String, values: [SQLValue])]
    /// Relationships whose members changed, with members before and after (in order for ordered ones).
    package var relationships: [(name: String, before: [UUID], after: [UUID])]
    /// For deletes: the object whose deletion this one follows from (itself, or the object a cascade started at).
    package var deletionRoot: UUID?
    /// Updates: for each entry of `attributes`, the values as loaded or last saved (a counter's
    /// increment is the difference; `.max`, `.min` and `.custom` attributes merge with them).
    package var previousValues: [[SQLValue]] = []
}

/// Receives every save's changes inside the save's transaction, so what it records commits
/// or rolls back together with the data.
package protocol SaveObserver: AnyObject, Sendable {
    /// Records `changes`; returns the objects whose stored rows it changed beyond the save's own
    /// writes, which the saving context then refreshes.
    func storeWillCommit(_ changes: [SavedObjectChange], connection: SQLiteConnection) throws -> Set<UUID>
}

/// The observer slot of a store, safe to set from any thread.
final class SaveObserverSlot: Sendable {
    private let observer = Mutex<(any SaveObserver)?>(nil)

    func set(_ newValue: (any SaveObserver)?) { observer.withLock { $0 = newValue } }
    func get() -> (any SaveObserver)? { observer.withLock { $0 } }
}

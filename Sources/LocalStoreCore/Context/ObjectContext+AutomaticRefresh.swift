import Foundation
import Synchronization

/// Objects to refresh, noted on committing threads and taken on a context's own: the objects
/// merges changed since a context last refreshed, or those a live query's objects need.
final class ObjectIDInbox: Sendable {
    private let objectIDs = Mutex<Set<UUID>>([])

    func add(_ ids: Set<UUID>) {
        guard !ids.isEmpty else { return }
        objectIDs.withLock { $0.formUnion(ids) }
    }

    func take() -> Set<UUID> {
        objectIDs.withLock { ids in
            defer { ids.removeAll() }
            return ids
        }
    }
}

extension ObjectContext {
    /// Whether the context refreshes its registered objects with what merges commit (merges a
    /// `SyncReplica` applies and record edits), as ``refresh(objectIDs:)`` does: unsaved edits
    /// are kept, objects deleted by the merge leave the context.
    ///
    /// A context is not `Sendable`: it is used from one thread (or actor) at a time, while merges
    /// commit on other threads. So a merge only notes which objects it changed, and the context
    /// refreshes them on its own thread, at its next ``fetch(_:)``, ``fetchAll(_:)``,
    /// ``object(_:id:)`` or ``save()``, or when you call ``refreshMergedObjects()`` (for example
    /// when ``ObjectStore/changes`` delivers a change with ``StoreChange/isFromMerge``).
    /// Changes committed while this is `false` are not noted.
    public var automaticallyRefreshes: Bool {
        get { mergedObjectSubscription != nil }
        set {
            guard newValue != automaticallyRefreshes else { return }
            if newValue {
                let inbox = ObjectIDInbox()
                mergedObjectSubscription = (inbox, store.changeHub.subscribe { change in
                    if change.origin != .save { inbox.add(change.updated.union(change.deleted)) }
                })
            } else if let (_, key) = mergedObjectSubscription {
                store.changeHub.unsubscribe(key)
                mergedObjectSubscription = nil
            }
        }
    }

    /// Refreshes the registered objects that merges changed since the last refresh; does
    /// nothing unless ``automaticallyRefreshes`` is on.
    public func refreshMergedObjects() throws {
        guard let (inbox, _) = mergedObjectSubscription else { return }
        let objectIDs = inbox.take()
        if !objectIDs.isEmpty { try refresh(objectIDs: objectIDs) }
    }
}

import Foundation
import Synchronization

/// What one committed transaction changed in a store: a context's save, a merge of remote
/// change sets, or an edit through a sync replica.
///
/// Read them from ``ObjectStore/changes``:
///
/// ```swift
/// for await change in store.changes {
///     for id in change.updated where change.entityName(of: id) == "Todo" {
///         print(id, change.changedPropertyNames(of: id))
///     }
/// }
/// ```
public struct StoreChange: Sendable, Equatable {
    /// What committed the change.
    public enum Origin: Sendable, Equatable {
        /// A context's ``ObjectContext/save()``.
        case save
        /// Change sets from other replicas merged into the store.
        case merge
        /// Records edited without Swift types (SyncKit's record editor).
        case recordEdit
    }

    /// What committed the change.
    public var origin: Origin
    /// Objects that came into existence.
    public var inserted: Set<UUID> = []
    /// Objects whose attributes or relationships changed.
    public var updated: Set<UUID> = []
    /// Objects that were deleted.
    public var deleted: Set<UUID> = []
    /// The entity name of every inserted, updated and deleted object.
    public package(set) var entityNames: [UUID: String] = [:]
    /// The names of the entities the change lists objects of, so that a subscriber watching a
    /// few entities can pass over a change in one set test instead of one lookup per object.
    public package(set) var changedEntityNames: Set<String> = []
    /// For updated objects, the names of the attributes and relationships that changed. A merge
    /// names the attributes it wrote; objects whose relationships a merge rewrote may have none.
    public var changedProperties: [UUID: Set<String>] = [:]
    /// The context whose save committed the change (`nil` for merges and record edits), so
    /// that a context's subscribers can tell its own saves from the rest.
    package var savingContext: ObjectIdentifier?

    /// Creates an empty change with the given origin.
    public init(origin: Origin) {
        self.origin = origin
    }

    /// Whether the change came from merging other replicas' change sets.
    public var isFromMerge: Bool { origin == .merge }

    /// Whether the change lists no object at all.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    /// Every object the change lists.
    public var allObjectIDs: Set<UUID> { inserted.union(updated).union(deleted) }

    /// The entity name of an object the change lists, or `nil` for any other object.
    public func entityName(of objectID: UUID) -> String? { entityNames[objectID] }

    /// The attributes and relationships that changed on an updated object (empty for others).
    public func changedPropertyNames(of objectID: UUID) -> Set<String> { changedProperties[objectID] ?? [] }

    /// Records that the change lists `objectID`, an object of `entity`.
    package mutating func setEntity(_ entity: String, of objectID: UUID) {
        entityNames[objectID] = entity
        changedEntityNames.insert(entity)
    }
}

/// Hands committed changes to the store's subscribers in commit order.
///
/// A writer reserves a ticket as the last step inside its transaction, while it holds SQLite's
/// write lock, so tickets are numbered in commit order; after the transaction it settles the
/// ticket with its change (or with `nil` when the transaction rolled back). Changes are
/// delivered in ticket order, each as soon as every earlier ticket is settled.
package final class StoreChangeHub: Sendable {
    private struct State {
        var subscribers: [Int: AsyncStream<StoreChange>.Continuation] = [:]
        /// Receivers called synchronously, in commit order (contexts that refresh themselves).
        var receivers: [Int: @Sendable (StoreChange) -> Void] = [:]
        var nextSubscriber = 0
        var nextTicket: UInt64 = 0
        var nextToDeliver: UInt64 = 0
        var settled: [UInt64: StoreChange?] = [:]
        /// Whether a thread is handing changes to subscribers right now; others leave their
        /// settled changes to it, so that delivery stays in commit order without holding the lock.
        var isDelivering = false
    }

    /// A place in the commit order, reserved inside a transaction.
    package struct Ticket: Sendable {
        let number: UInt64
    }

    private let state = Mutex(State())
    /// Read without the lock on every commit: with no subscriber, a commit costs one atomic load.
    private let subscriberCount = Atomic<Int>(0)

    package init() {}

    /// Whether anyone is subscribed; writers skip building changes when not.
    package var hasSubscribers: Bool { subscriberCount.load(ordering: .acquiring) > 0 }

    func subscribe(bufferingPolicy: AsyncStream<StoreChange>.Continuation.BufferingPolicy) -> AsyncStream<StoreChange> {
        let (stream, continuation) = AsyncStream<StoreChange>.makeStream(bufferingPolicy: bufferingPolicy)
        let key = state.withLock { state in
            let key = state.nextSubscriber
            state.nextSubscriber += 1
            state.subscribers[key] = continuation
            subscriberCount.store(state.subscribers.count + state.receivers.count, ordering: .releasing)
            return key
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(key) }
        return stream
    }

    /// Registers `receive`, called with every committed change from now on; returns the key that
    /// ``unsubscribe(_:)`` takes. `receive` runs on the committing thread and must not block.
    package func subscribe(_ receive: @escaping @Sendable (StoreChange) -> Void) -> Int {
        state.withLock { state in
            let key = state.nextSubscriber
            state.nextSubscriber += 1
            state.receivers[key] = receive
            subscriberCount.store(state.subscribers.count + state.receivers.count, ordering: .releasing)
            return key
        }
    }

    /// Ends the subscription `key`.
    package func unsubscribe(_ key: Int) {
        state.withLock { state in
            state.subscribers[key] = nil
            state.receivers[key] = nil
            subscriberCount.store(state.subscribers.count + state.receivers.count, ordering: .releasing)
        }
    }

    /// Reserves the next place in the commit order; call it inside the write transaction, last.
    /// Returns `nil` when nobody is subscribed.
    package func reserveTicket() -> Ticket? {
        guard hasSubscribers else { return nil }
        return state.withLock { state in
            defer { state.nextTicket += 1 }
            return Ticket(number: state.nextTicket)
        }
    }

    /// Settles a ticket after its transaction: with the committed change, or `nil` when the
    /// transaction rolled back. Delivers every change whose turn has come.
    ///
    /// Subscribers are called without the lock held, so a receiver may subscribe, unsubscribe or
    /// commit (a live query's observer saving, say): a change committed meanwhile, on this thread
    /// or another, is delivered by the thread already delivering, after the change in hand.
    package func settle(_ ticket: Ticket, with change: StoreChange?) {
        var isDeliverer = state.withLock { state in
            state.settled[ticket.number] = .some(change)
            guard !state.isDelivering else { return false }
            state.isDelivering = true
            return true
        }
        while isDeliverer {
            let turn: (change: StoreChange, subscribers: [AsyncStream<StoreChange>.Continuation], receivers: [@Sendable (StoreChange) -> Void])?
            turn = state.withLock { state in
                while let next = state.settled.removeValue(forKey: state.nextToDeliver) {
                    state.nextToDeliver += 1
                    guard let next, !next.isEmpty else { continue }
                    return (next, Array(state.subscribers.values), Array(state.receivers.values))
                }
                state.isDelivering = false
                return nil
            }
            guard let turn else {
                isDeliverer = false
                continue
            }
            for continuation in turn.subscribers { continuation.yield(turn.change) }
            for receive in turn.receivers { receive(turn.change) }
        }
    }

    /// Runs `transaction` (which must reserve its ticket last, inside the transaction) and
    /// settles the ticket: with the change after a commit, with nothing after a rollback.
    package func publishing<T>(_ transaction: (inout Ticket?, inout StoreChange?) throws -> T) throws -> T {
        var ticket: Ticket?
        var change: StoreChange?
        do {
            let result = try transaction(&ticket, &change)
            if let ticket { settle(ticket, with: change) }
            return result
        } catch {
            if let ticket { settle(ticket, with: nil) }
            throw error
        }
    }
}

import Foundation
import Observation
import Synchronization

/// The result of a fetch that stays current: ``results`` are what the context's
/// ``ObjectContext/fetch(_:)`` returns for the descriptor now, in the descriptor's order, as
/// saves and merges change the store.
///
/// ```swift
/// let open = try context.liveQuery(FetchDescriptor<Todo>(
///     predicate: #Predicate { !$0.isDone }, sortBy: [SortDescriptor(\.title)]))
/// withObservationTracking {
///     show(open.results)
/// } onChange: {
///     Task { @MainActor in redraw() }   // read open.results again there
/// }
/// ```
///
/// When it updates: after every committed change (a save through any context of the store, a
/// merge, a record edit) that inserts, updates or deletes an object of the queried entity or of
/// an entity the queried one reaches through relationships (a predicate or sort may follow
/// them), the query is marked stale and the observers of ``results`` are told at once, on the
/// committing thread. The fetch itself runs on the context's own thread: at the next read of
/// ``results``, or at ``update()``. A change that touches none of those entities costs one pass
/// over the entity names it lists, and no fetch.
///
/// Before fetching again, the query refreshes the objects of its context that other contexts'
/// saves and merges changed, as ``ObjectContext/refresh(objectIDs:)`` does (unsaved edits are
/// kept), so the objects in ``results`` show the stored values and their observers hear of the
/// change. Unsaved changes in the context appear at the next fetch, not by themselves: call
/// ``update()`` after editing to see them.
///
/// Like its context, a live query belongs to one thread or actor. Observers are called on the
/// thread that committed the change, after the commit and without a lock held: an observer
/// may save (the change it commits reaches subscribers right after the one in hand), but work
/// for the query's context belongs on that context's thread or actor (for example a task).
public final class LiveQuery<Entity: PersistentEntity>: Observable {
    /// What the query fetches.
    public let descriptor: FetchDescriptor<Entity>
    /// The context the query fetches in; the query keeps it alive.
    public let context: ObjectContext
    /// Why the last fetch failed, or `nil` when it succeeded. ``results`` keep the objects of the
    /// last successful fetch meanwhile.
    public private(set) var lastError: (any Error)?

    private var fetchedResults: [Entity]
    private let monitor: LiveQueryMonitor
    private let subscription: Int

    init(descriptor: FetchDescriptor<Entity>, context: ObjectContext) throws {
        self.descriptor = descriptor
        self.context = context
        fetchedResults = try context.fetch(descriptor)
        let monitor = LiveQueryMonitor(
            watchedEntityNames: LiveQueryMonitor.reachableEntityNames(from: Entity._$entity), context: ObjectIdentifier(context))
        self.monitor = monitor
        subscription = context.store.changeHub.subscribe { change in monitor.note(change) }
    }

    deinit {
        context.store.changeHub.unsubscribe(subscription)
    }

    /// The objects the descriptor matches, in its order, as of the last committed change that
    /// touched the queried entities. Reading it inside `withObservationTracking` registers the
    /// read; a stale query fetches again here first.
    public var results: [Entity] {
        monitor.registerRead()
        if monitor.takeStaleness() { fetchAgain() }
        return fetchedResults
    }

    /// Fetches now, including the context's unsaved changes, and tells the observers if the
    /// results changed.
    public func update() throws {
        _ = monitor.takeStaleness()
        let fetched = try fetch()
        lastError = nil
        guard !fetched.elementsEqual(fetchedResults, by: { $0 === $1 }) else { return }
        monitor.withResultsChange { fetchedResults = fetched }
    }

    private func fetchAgain() {
        do {
            fetchedResults = try fetch()
            lastError = nil
        } catch {
            lastError = error
        }
    }

    private func fetch() throws -> [Entity] {
        let changedElsewhere = monitor.objectsChangedElsewhere.take()
        if !changedElsewhere.isEmpty { try context.refresh(objectIDs: changedElsewhere) }
        return try context.fetch(descriptor)
    }
}

extension ObjectContext {
    /// A query whose results stay equal to what ``fetch(_:)`` returns for `descriptor`, as
    /// saves and merges commit; see ``LiveQuery``. Fetches once now, so an unsupported
    /// predicate throws here.
    ///
    /// ```swift
    /// let recent = try context.liveQuery(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]))
    /// ```
    public func liveQuery<Entity: PersistentEntity>(_ descriptor: FetchDescriptor<Entity>) throws -> LiveQuery<Entity> {
        try LiveQuery(descriptor: descriptor, context: self)
    }
}

/// The part of a live query that committing threads use: which entities it watches, whether
/// it is stale, and the registrar its observers register with.
///
/// The registrar's subject is this monitor rather than the query: a committing thread must not
/// hold the query, whose last release there would run its `deinit` on that thread rather than on
/// the query's own.
final class LiveQueryMonitor: Sendable, Observable {
    let watchedEntityNames: Set<String>
    /// The query's context, to tell its own saves from the rest.
    let context: ObjectIdentifier
    private let isStale = Atomic<Bool>(false)
    /// Watched objects that merges or other contexts' saves updated or deleted since the last fetch.
    let objectsChangedElsewhere = ObjectIDInbox()
    private let registrar = ObservationRegistrar()

    init(watchedEntityNames: Set<String>, context: ObjectIdentifier) {
        self.watchedEntityNames = watchedEntityNames
        self.context = context
    }

    /// What observers of the query's results register for.
    var results: Void { () }

    /// Registers a read of the query's results with Swift Observation.
    func registerRead() {
        registrar.access(self, keyPath: \.results)
    }

    /// Runs `mutation` of the query's results between its observers' `willSet` and `didSet`.
    func withResultsChange(_ mutation: () -> Void) {
        registrar.withMutation(of: self, keyPath: \.results, mutation)
    }

    /// Marks the query stale and tells its observers if `change` touches a watched entity.
    func note(_ change: StoreChange) {
        guard !change.changedEntityNames.isDisjoint(with: watchedEntityNames) else { return }
        if change.savingContext != context {
            let changed = change.updated.union(change.deleted).filter {
                change.entityName(of: $0).map(watchedEntityNames.contains) ?? false
            }
            objectsChangedElsewhere.add(changed)
        }
        isStale.store(true, ordering: .releasing)
        withResultsChange {}
    }

    /// Whether a change arrived since the last call.
    func takeStaleness() -> Bool {
        isStale.exchange(false, ordering: .acquiringAndReleasing)
    }

    /// `entity` and every entity it reaches through relationships, by name.
    static func reachableEntityNames(from entity: EntityDescription) -> Set<String> {
        var names: Set<String> = [entity.name]
        var pending = [entity]
        while let next = pending.popLast() {
            for relationship in next.relationships {
                let target = relationship.targetType._$entity
                if names.insert(target.name).inserted { pending.append(target) }
            }
        }
        return names
    }
}

import Foundation

/// What to fetch: a predicate, a sort order and a page, shaped like SwiftData's `FetchDescriptor`.
///
/// The predicate and the sort descriptors are translated to one SQL statement, so SQLite
/// does the filtering, sorting and paging (with indexes where there are any); rows are never
/// loaded to be filtered in Swift. A construct that has no SQL translation makes the fetch
/// throw ``StoreError/Code/unsupportedQuery`` naming it.
///
/// ```swift
/// var descriptor = FetchDescriptor<Person>(
///     predicate: #Predicate { $0.name.starts(with: "A") && ($0.score ?? 0) > 3 && $0.place?.name == "Paris" },
///     sortBy: [SortDescriptor(\.name), SortDescriptor(\.born, order: .reverse)])
/// descriptor.fetchLimit = 20
/// descriptor.fetchOffset = 40
/// let people = try context.fetch(descriptor)
/// let total = try context.fetchCount(FetchDescriptor<Person>(predicate: descriptor.predicate))
/// ```
///
/// Objects with equal sort keys come in storage order (the order their rows were
/// inserted), so a sorted, paged fetch is deterministic. Storage order is local: replicas
/// that synced the same objects may have inserted their rows in different orders. Make the
/// identifier the last key for an order every replica agrees on:
///
/// ```swift
/// let lists = try context.fetch(FetchDescriptor<TodoList>(sortBy: [SortDescriptor(\.name), SortDescriptor(\.objectID)]))
/// ```
public struct FetchDescriptor<Entity: PersistentEntity>: Sendable {
    /// Which objects to fetch; `nil` fetches every object of the entity.
    public var predicate: Predicate<Entity>?
    /// The sort order, most significant first. Attributes with default storage can be sorted on.
    public var sortBy: [SortDescriptor<Entity>]
    /// The most objects to return; `nil` for no limit.
    public var fetchLimit: Int?
    /// How many matching objects to skip before the first one returned; `nil` for none.
    public var fetchOffset: Int?
    /// Whether the fetch sees the context's unsaved inserts, changes and deletes (the default).
    ///
    /// When `false`, the query runs on what was last saved: unsaved inserts are not found,
    /// and objects changed or marked for deletion match by their saved values.
    public var includePendingChanges: Bool

    /// Describes a fetch of `Entity` objects matching `predicate`, sorted by `sortBy`.
    ///
    /// ```swift
    /// let adults = FetchDescriptor<Person>(predicate: #Predicate { $0.age >= 18 }, sortBy: [SortDescriptor(\.name)])
    /// ```
    public init(predicate: Predicate<Entity>? = nil, sortBy: [SortDescriptor<Entity>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
        self.fetchLimit = nil
        self.fetchOffset = nil
        self.includePendingChanges = true
    }
}

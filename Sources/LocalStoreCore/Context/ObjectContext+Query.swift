import Codecs
import Foundation
import SQLiteDatabase

/// Queries: ``fetch(_:)``, ``fetchCount(_:)``, ``fetchIdentifiers(_:)`` and ``aggregate(_:matching:)``.
///
/// ## Unsaved changes
///
/// By default (``FetchDescriptor/includePendingChanges`` is `true`) a query sees the context
/// exactly as it is in memory, as SwiftData's fetches do:
///
/// - unsaved inserted objects are found when they match,
/// - changed objects match by their current, unsaved values,
/// - objects marked for deletion are never returned nor counted,
/// - sorting, `fetchLimit` and `fetchOffset` apply to that combined state.
///
/// To do this, when the context has unsaved changes the query runs inside a transaction in
/// which those changes are written first; the transaction is always rolled back, so nothing
/// is ever stored by a query. Without unsaved changes no transaction is opened and no write
/// lock is taken. The objects returned are the context's own (one per row), so they show
/// their unsaved values.
///
/// Delete rules are applied by ``save()``, not by a query: until the save, an object related
/// to one marked for deletion still exists (a cascade has not deleted it yet) and still
/// refers to it, in memory and in a query (`$0.author == nil` is false), but the deleted
/// object's row is gone, so a path through it finds nothing (`$0.author?.name == "Ann"` is
/// false). If the unsaved changes cannot be written (two objects with the same `.unique`
/// value), the query throws the error ``save()`` would throw.
extension ObjectContext {
    /// The objects that match `descriptor`, in its order.
    ///
    /// ```swift
    /// let parisians = try context.fetch(FetchDescriptor<Person>(
    ///     predicate: #Predicate { $0.place?.name == "Paris" }, sortBy: [SortDescriptor(\.name)]))
    /// ```
    ///
    /// Throws ``StoreError/Code/unsupportedQuery`` when the predicate or a sort descriptor
    /// uses something SQL cannot express, naming it; nothing is ever filtered in memory.
    public func fetch<Entity: PersistentEntity>(_ descriptor: FetchDescriptor<Entity>) throws -> [Entity] {
        try refreshMergedObjects()
        let plan = try QueryPlan(descriptor, schema: store.schema)
        let columns = ([EntityTable.identifierColumn] + plan.mapping.columns.map(\.name))
            .map { PredicateTranslator.rootAlias + "." + quotedName($0) }.joined(separator: ", ")
        let query = plan.select(columns)
        return try withPendingChanges(descriptor.includePendingChanges) {
            var objects: [Entity] = []
            try run(query) { statement in
                if let object = try materialize(plan.mapping, statement: statement) as? Entity { objects.append(object) }
            }
            return objects
        }
    }

    /// How many objects ``fetch(_:)`` would return for `descriptor` (its limit and offset included).
    ///
    /// ```swift
    /// let adults = try context.fetchCount(FetchDescriptor<Person>(predicate: #Predicate { $0.age >= 18 }))
    /// ```
    public func fetchCount<Entity: PersistentEntity>(_ descriptor: FetchDescriptor<Entity>) throws -> Int {
        let plan = try QueryPlan(descriptor, schema: store.schema)
        let query = plan.isPaged
            ? plan.select("1", ordered: false).wrapped("SELECT COUNT(*) FROM (", ")")
            : plan.select("COUNT(*)", ordered: false)
        return try withPendingChanges(descriptor.includePendingChanges) {
            var count = 0
            try run(query) { statement in
                if case .integer(let value) = statement.value(at: 0) { count = Int(value) }
            }
            return count
        }
    }

    /// The identifiers of the objects ``fetch(_:)`` would return, in the same order, without
    /// creating the objects.
    ///
    /// ```swift
    /// let ids = try context.fetchIdentifiers(FetchDescriptor<Person>(sortBy: [SortDescriptor(\.name)]))
    /// ```
    public func fetchIdentifiers<Entity: PersistentEntity>(_ descriptor: FetchDescriptor<Entity>) throws -> [UUID] {
        let plan = try QueryPlan(descriptor, schema: store.schema)
        let query = plan.select(PredicateTranslator.rootAlias + "." + EntityTable.quotedIdentifierColumn)
        return try withPendingChanges(descriptor.includePendingChanges) {
            var identifiers: [UUID] = []
            try run(query) { statement in
                guard case .text(let text) = statement.value(at: 0), let id = UUID(storageText: text) else {
                    throw StoreError(.corruptValue, "a row of \(plan.mapping.name) has an identifier that is not a UUID", entity: plan.mapping.name)
                }
                identifiers.append(id)
            }
            return identifiers
        }
    }

    /// Computes `aggregate` over the objects ``fetch(_:)`` would return for `descriptor`.
    ///
    /// ```swift
    /// let best = try context.aggregate(.maximum(\Person.score),
    ///                                  matching: FetchDescriptor(predicate: #Predicate { $0.place?.name == "Paris" }))
    /// ```
    public func aggregate<Entity: PersistentEntity, Result>(
        _ aggregate: Aggregate<Entity, Result>, matching descriptor: FetchDescriptor<Entity> = FetchDescriptor()
    ) throws -> Result {
        let plan = try QueryPlan(descriptor, schema: store.schema)
        let (column, attribute) = try aggregate.sqlExpression(mapping: plan.mapping, column: PredicateTranslator.rootAlias)
        let function = aggregate.function.rawValue
        let query = plan.isPaged
            ? plan.select(column + " AS value").wrapped("SELECT \(function)(value) FROM (", ")")
            : plan.select("\(function)(\(column))", ordered: false)
        return try withPendingChanges(descriptor.includePendingChanges) {
            var result: SQLValue = .null
            try run(query) { statement in result = statement.value(at: 0) }
            do {
                return try aggregate.decode(result)
            } catch {
                throw StoreError(.corruptValue, "the \(function) of \(plan.mapping.name).\(attribute.name) is not a \(Result.self): \(error)",
                                 entity: plan.mapping.name, attribute: attribute.name)
            }
        }
    }

    // MARK: Running

    /// Runs `body` with the unsaved changes written in a transaction that is rolled back
    /// afterwards, whatever happens; runs it directly when there is nothing unsaved.
    func withPendingChanges<T>(_ include: Bool, _ body: () throws -> T) throws -> T {
        guard include, hasChanges else { return try body() }
        let ownsTransaction = !connection.isInTransaction
        // IMMEDIATE takes the write lock up front: a deferred transaction that reads first
        // could fail to upgrade to writing when another connection has written meanwhile.
        try connection.execute(ownsTransaction ? "BEGIN IMMEDIATE" : "SAVEPOINT localstore_query")
        let undo = ownsTransaction ? "ROLLBACK" : "ROLLBACK TO localstore_query; RELEASE localstore_query"
        let result: T
        do {
            try writeChanges()
            result = try body()
        } catch {
            try? connection.execute(undo)
            throw error
        }
        try connection.execute(undo)
        return result
    }

    /// Runs one query statement, calling `row` for each result row.
    private func run(_ query: SQLExpression, row: (SQLiteStatement) throws -> Void) throws {
        let statement: SQLiteStatement
        do {
            statement = try connection.cachedStatement(query.sql)
        } catch where StringCollation.isMissingCollation(error) {
            try StringCollation.register(on: connection)
            statement = try connection.cachedStatement(query.sql)
        }
        // A statement left mid-way would keep a read transaction open and block the rollback.
        defer { statement.reset() }
        try statement.bind(query.arguments)
        while try statement.step() { try row(statement) }
    }
}

/// A fetch descriptor translated to SQL pieces: FROM with its joins, WHERE, ORDER BY, page.
struct QueryPlan {
    let mapping: EntityMapping
    let from: String
    let condition: SQLExpression?
    let orderBy: String
    let limit: Int?
    let offset: Int?

    init<Entity: PersistentEntity>(_ descriptor: FetchDescriptor<Entity>, schema: StoreSchema) throws {
        guard let mapping = schema.entity(for: Entity.self) else {
            throw StoreError(.invalidSchema, "\(Entity._$entity.name) is not one of the entities this store was opened with", entity: Entity._$entity.name)
        }
        self.mapping = mapping
        let translator = PredicateTranslator(schema: schema, root: mapping)
        condition = try descriptor.predicate.map { try translator.condition(for: $0) }
        // Sorting may join to-one targets, so the FROM clause is read after it.
        orderBy = try SortTranslation.orderBy(descriptor.sortBy, translator: translator)
        from = translator.fromClause
        if let limit = descriptor.fetchLimit, limit < 0 {
            throw StoreError(.unsupportedQuery, "fetchLimit must not be negative (it is \(limit))", entity: mapping.name)
        }
        if let offset = descriptor.fetchOffset, offset < 0 {
            throw StoreError(.unsupportedQuery, "fetchOffset must not be negative (it is \(offset))", entity: mapping.name)
        }
        limit = descriptor.fetchLimit
        offset = descriptor.fetchOffset
    }

    var isPaged: Bool { limit != nil || offset != nil }

    /// `SELECT columns FROM … WHERE … [ORDER BY …] [LIMIT ? OFFSET ?]`; a paged query is always
    /// ordered, since the page depends on the order.
    func select(_ columns: String, ordered: Bool = true) -> SQLExpression {
        var sql = "SELECT \(columns) FROM \(from)"
        var arguments: [SQLValue] = []
        if let condition {
            sql += " WHERE " + condition.sql
            arguments += condition.arguments
        }
        if ordered || isPaged { sql += " ORDER BY " + orderBy }
        if isPaged {
            sql += " LIMIT ? OFFSET ?"
            arguments += [.integer(Int64(limit ?? -1)), .integer(Int64(offset ?? 0))]
        }
        return SQLExpression(sql, arguments)
    }
}

import Foundation
import LocalStore
@testable import LocalStoreCore
import Testing

/// The SQL each construct becomes: columns through the schema table (persistentName
/// honoured), `=` vs `IS` by nullability, bound arguments, joins and subqueries.
@Suite struct PredicateTranslationTests {
    let fixture: QueryFixture

    init() throws { fixture = try QueryFixture(empty: true) }

    func sql<Entity: PersistentEntity>(_ predicate: Predicate<Entity>, sortBy: [SortDescriptor<Entity>] = []) throws -> SQLExpression {
        try QueryPlan(FetchDescriptor(predicate: predicate, sortBy: sortBy), schema: fixture.store.schema).select(#"t0."_object_id""#)
    }

    @Test func nonOptionalEqualityUsesEqualsAndPersistentName() throws {
        let query = try sql(#Predicate<QPerson> { $0.nickname == "Al" })
        #expect(query.sql == #"SELECT t0."_object_id" FROM "HandPerson" AS t0 WHERE (t0."nick" = ?) ORDER BY t0.rowid"#)
        #expect(query.arguments == [.text("Al")])
    }

    @Test func optionalEqualityUsesIsSoNilEqualsNil() throws {
        #expect(try sql(#Predicate<QPerson> { $0.score == nil }).sql.contains(#"(t0."score" IS NULL)"#))
        let three = 3.0
        let query = try sql(#Predicate<QPerson> { $0.score != three })
        #expect(query.sql.contains(#"(t0."score" IS NOT ?)"#))
        #expect(query.arguments == [.real(3)])
    }

    @Test func capturedValuesAreBoundNotSpliced() throws {
        let hostile = "x' OR 1=1 --"
        let query = try sql(#Predicate<QPerson> { $0.name == hostile })
        #expect(!query.sql.contains("OR 1=1"))
        #expect(query.arguments == [.text(hostile)])
        #expect(try fixture.context.fetch(FetchDescriptor(predicate: #Predicate<QPerson> { $0.name == hostile })).isEmpty)
    }

    @Test func valuesAreEncodedLikeTheirColumn() throws {
        let busy = QMood.busy
        let day = Date(timeIntervalSince1970: 86_400)
        let prefs = QPrefs(theme: "light")
        #expect(try sql(#Predicate<QPerson> { $0.mood == busy }).arguments == [.text("busy")])
        #expect(try sql(#Predicate<QPerson> { $0.born == day }).arguments == [.real(86_400)])
        #expect(try sql(#Predicate<QPerson> { $0.prefs == prefs }).arguments == [.text(#"{"theme":"light"}"#)])
    }

    @Test func startsWithAndContainsAvoidLike() throws {
        let starts = try sql(#Predicate<QPerson> { $0.name.starts(with: "a%") })
        #expect(starts.sql.contains(#"(substr(t0."name", 1, length(?)) = ?)"#))
        #expect(starts.arguments == [.text("a%"), .text("a%")])
        #expect(try sql(#Predicate<QPerson> { $0.name.contains("_") }).sql.contains(#"(instr(t0."name", ?) > 0)"#))
        for name in ["abc", "a%c", "A%x", "a_c"] {
            let person = QPerson()
            person.email = name + "@example.org"
            person.name = name
            fixture.context.insert(person)
        }
        try fixture.context.save()
        let wildcard = try fixture.context.fetch(FetchDescriptor(predicate: #Predicate<QPerson> { $0.name.starts(with: "a%") }))
        #expect(wildcard.map(\.name) == ["a%c"])
        let underscore = try fixture.context.fetch(FetchDescriptor(predicate: #Predicate<QPerson> { $0.name.contains("_") }))
        #expect(underscore.map(\.name) == ["a_c"])
    }

    @Test func capturedArrayBecomesIn() throws {
        let names = ["a", "b", "c"]
        let query = try sql(#Predicate<QPerson> { names.contains($0.name) })
        #expect(query.sql.contains(#"(t0."name" IN (?, ?, ?))"#))
        let none: [String] = []
        #expect(try sql(#Predicate<QPerson> { none.contains($0.name) }).sql.contains("WHERE 0"))
        let scores: [Double?] = [1, nil]
        #expect(try sql(#Predicate<QPerson> { scores.contains($0.score) }).sql.contains(#"OR (t0."score" IS NULL)"#))
    }

    @Test func toOnePathJoinsOnceAndCompositionFieldsUseTheirColumns() throws {
        let query = try sql(#Predicate<QPerson> { $0.place?.name == "Paris" || $0.place?.name == "Rome" })
        #expect(query.sql.components(separatedBy: "LEFT JOIN").count == 2)
        #expect(query.sql.contains(#"LEFT JOIN "HandPlace" AS t1 ON t1."_object_id" = t0."place""#))
        #expect(try sql(#Predicate<QPerson> { $0.place == nil }).sql.contains(#"t0."place" IS NULL"#))
        #expect(!(try sql(#Predicate<QPerson> { $0.place == nil }).sql.contains("JOIN")))
        #expect(try sql(#Predicate<QPlace> { ($0.location?.latitude ?? 0) > 40 }).sql.contains(#"COALESCE(t0."location_latitude", ?)"#))
    }

    @Test func toManyQuantifiersAreSubqueries() throws {
        let contains = try sql(#Predicate<QAuthor> { $0.books.contains { $0.title == "X" } })
        #expect(contains.sql.contains(#"EXISTS (SELECT 1 FROM "HandBook" AS t1 WHERE t1."author" = t0."_object_id" AND (t1."title" = ?))"#))
        #expect(try sql(#Predicate<QAuthor> { $0.books.isEmpty }).sql.contains("NOT EXISTS (SELECT 1"))
        #expect(try sql(#Predicate<QAuthor> { $0.books.count > 2 }).sql.contains("(SELECT COUNT(*) FROM"))
    }

    @Test func objectIdentifierCanBeQueried() throws {
        let person = QPerson()
        person.email = "id@example.org"
        fixture.context.insert(person)
        try fixture.context.save()
        let id = person.objectID
        let found = try fixture.context.fetch(FetchDescriptor(predicate: #Predicate<QPerson> { $0.objectID == id }))
        #expect(found.map(\.objectID) == [id])
    }

    @Test func uniqueEmailLookupUsesAnIndex() throws {
        let query = try sql(#Predicate<QPerson> { $0.email == "x@example.org" })
        let plan = try fixture.context.connection.rows("EXPLAIN QUERY PLAN " + query.sql, query.arguments)
        let details = plan.compactMap { row -> String? in if case .text(let text) = row.last { return text } else { return nil } }
        #expect(details.contains { $0.contains("USING INDEX") || $0.contains("USING COVERING INDEX") }, "\(details)")
    }

    @Test func sortDescriptorsBecomeOrderByWithRowidLast() throws {
        let query = try sql(#Predicate<QPerson> { _ in true }, sortBy: [SortDescriptor(\.name), SortDescriptor(\.born, order: .reverse)])
        #expect(query.sql.hasSuffix(#"ORDER BY t0."name" ASC, t0."born" DESC, t0.rowid"#))
        let lexical = try sql(#Predicate<QPerson> { _ in true }, sortBy: [SortDescriptor(\.name, comparator: .lexical)])
        #expect(lexical.sql.contains("COLLATE LOCALSTORE_LEXICAL"))
    }
}

import Foundation
import LocalStore
@testable import LocalStoreCore
import TestSupport
import Testing

// Relationships that are their own inverse, one per shape and delete rule.
@Entity final class Neighbor {
    var name: String = ""
    @Relationship(inverse: "spouse", deleteRule: .nullify) var spouse: Neighbor?
    @Relationship(inverse: "twin", deleteRule: .cascade) var twin: Neighbor?
    @Relationship(inverse: "friends", deleteRule: .nullify) var friends: Set<Neighbor> = []
    @Relationship(inverse: "clones", deleteRule: .cascade) var clones: Set<Neighbor> = []
    @Relationship(inverse: "guarantors", deleteRule: .deny) var guarantors: Set<Neighbor> = []
}

@Entity final class OrderedSelfInverse {
    @Relationship(inverse: "peers", deleteRule: .nullify) var peers: [OrderedSelfInverse] = []
}

@Suite struct SelfInverseRelationshipTests {
    let file = TemporaryStoreFile()

    private func neighbors(_ names: String..., in context: ObjectContext) -> [Neighbor] {
        names.map { name in
            let neighbor = Neighbor()
            neighbor.name = name
            context.insert(neighbor)
            return neighbor
        }
    }

    private func reopened() throws -> ObjectContext {
        try ObjectStore(path: file.path, entities: [Neighbor.self]).makeContext()
    }

    @Test func toOneReadsBackOnBothSidesAfterReopening() throws {
        do {
            let context = try ObjectStore(path: file.path, entities: [Neighbor.self]).makeContext()
            let people = neighbors("a", "b", in: context)
            people[0].spouse = people[1]
            #expect(people[1].spouse === people[0])
            try context.save()
        }
        let context = try reopened()
        let a = try #require(try context.fetchAll(Neighbor.self).first { $0.name == "a" })
        #expect(a.spouse?.name == "b")
        #expect(a.spouse?.spouse === a)
        // Read from the other end first, in a context of its own.
        let other = try reopened()
        let b = try #require(try other.fetchAll(Neighbor.self).first { $0.name == "b" })
        #expect(b.spouse?.name == "a")
        #expect(b.spouse?.spouse === b)
        let columns = try SQLiteConnection(path: file.path).rows("SELECT name, spouse FROM Neighbor ORDER BY name")
        #expect(columns.map { $0[1] } == [.text(b.objectID.storageText), .text(a.objectID.storageText)])
    }

    @Test func settingAToOneTakesThePartnerFromItsPreviousPartner() throws {
        let store = try ObjectStore(path: file.path, entities: [Neighbor.self])
        let context = try store.makeContext()
        let people = neighbors("a", "b", "c", in: context)
        people[1].spouse = people[2]
        try context.save()
        people[0].spouse = people[1]
        try context.save()
        let fresh = try reopened()
        let byName = Dictionary(uniqueKeysWithValues: try fresh.fetchAll(Neighbor.self).map { ($0.name, $0) })
        #expect(byName["a"]?.spouse?.name == "b")
        #expect(byName["b"]?.spouse?.name == "a")
        #expect(byName["c"]?.spouse == nil)
    }

    @Test func toManyReadsBackOnBothSidesAfterReopening() throws {
        do {
            let context = try ObjectStore(path: file.path, entities: [Neighbor.self]).makeContext()
            let people = neighbors("a", "b", "c", in: context)
            people[0].addToFriends(people[1])
            people[2].addToFriends(people[0])
            try context.save()
            people[1].removeFromFriends(people[0])
            people[1].addToFriends(people[2])
            try context.save()
        }
        let context = try reopened()
        let byName = Dictionary(uniqueKeysWithValues: try context.fetchAll(Neighbor.self).map { ($0.name, $0) })
        #expect(Set(byName["a"]!.friends.map(\.name)) == ["c"])
        #expect(Set(byName["b"]!.friends.map(\.name)) == ["c"])
        #expect(Set(byName["c"]!.friends.map(\.name)) == ["a", "b"])
        // Each pair is stored in both directions, in one join table named after the relationship.
        let rows = try SQLiteConnection(path: file.path).rows("SELECT count(*) FROM Neighbor_friends")
        #expect(rows.first?.first == .integer(4))
    }

    @Test func nullifyClearsThePartnerAndTheFriends() throws {
        let store = try ObjectStore(path: file.path, entities: [Neighbor.self])
        let context = try store.makeContext()
        let people = neighbors("a", "b", "c", in: context)
        people[0].spouse = people[1]
        people[0].addToFriends(people[2])
        try context.save()
        context.delete(people[0])
        try context.save()
        let fresh = try reopened()
        let byName = Dictionary(uniqueKeysWithValues: try fresh.fetchAll(Neighbor.self).map { ($0.name, $0) })
        #expect(byName.keys.sorted() == ["b", "c"])
        #expect(byName["b"]?.spouse == nil)
        #expect(byName["c"]?.friends.isEmpty == true)
        #expect(try SQLiteConnection(path: file.path).rows("SELECT count(*) FROM Neighbor_friends").first?.first == .integer(0))
    }

    @Test func cascadeDeletesThroughBothShapesTransitively() throws {
        let store = try ObjectStore(path: file.path, entities: [Neighbor.self])
        let context = try store.makeContext()
        let people = neighbors("a", "b", "c", "d", "e", in: context)
        people[0].twin = people[1]
        people[1].addToClones(people[2])
        people[3].addToClones(people[2])
        people[4].addToFriends(people[3])
        try context.save()
        context.delete(people[0])
        try context.save()
        let fresh = try reopened()
        let remaining = try fresh.fetchAll(Neighbor.self)
        #expect(remaining.map(\.name) == ["e"])
        #expect(remaining.first?.friends.isEmpty == true)
    }

    @Test func denyRefusesTheDeleteFromEitherEnd() throws {
        let store = try ObjectStore(path: file.path, entities: [Neighbor.self])
        let context = try store.makeContext()
        let people = neighbors("a", "b", in: context)
        people[0].addToGuarantors(people[1])
        try context.save()
        for doomed in people {
            context.delete(doomed)
            let error = try #require(throws: StoreError.self) { try context.save() }
            #expect(error.code == .deleteDenied)
            #expect(error.relationship == "guarantors")
            #expect(error.objectID == doomed.objectID)
            context.rollback()
        }
        people[1].removeFromGuarantors(people[0])
        try context.save()
        context.delete(people[1])
        try context.save()
        #expect(try reopened().fetchAll(Neighbor.self).map(\.name) == ["a"])
    }

    @Test func anOrderedSelfInverseRelationshipIsRefusedNamingIt() throws {
        let error = try #require(throws: StoreError.self) { try ObjectStore(path: file.path, entities: [OrderedSelfInverse.self]) }
        #expect(error.code == .invalidSchema)
        #expect(error.relationship == "peers")
        #expect(error.message.contains("its own inverse"))
    }

    @Test func aPredicateThroughASelfInverseToManySeesBothDirections() throws {
        let store = try ObjectStore(path: file.path, entities: [Neighbor.self])
        let context = try store.makeContext()
        let people = neighbors("a", "b", "c", in: context)
        people[0].addToFriends(people[1])
        try context.save()
        let withFriends = try store.makeContext().fetch(FetchDescriptor<Neighbor>(predicate: #Predicate { !$0.friends.isEmpty }))
        #expect(Set(withFriends.map(\.name)) == ["a", "b"])
    }

    /// A store written when a self-inverse to-many named its join table without owning it (so
    /// the table was never created) opens, even with `.additiveOnly`, and then keeps its pairs.
    @Test func aStoreWhoseSelfInverseToManyHadNoJoinTableMigratesAdditively() throws {
        let current = try ObjectStore(path: file.path, entities: [Neighbor.self]).schemaDocument
        var previous = current
        for entity in previous.entities.indices {
            for index in previous.entities[entity].relationships.indices {
                guard case .joinTable(let table, _, _, _) = previous.entities[entity].relationships[index].storage else { continue }
                previous.entities[entity].relationships[index].storage = .joinTable(
                    table: table, ownerColumn: RelationshipStorage.memberSideColumn, memberColumn: RelationshipStorage.owningSideColumn, positionColumn: nil)
            }
        }
        previous.versionHash = SchemaDocument.hash(of: previous.entities)
        guard case .additive(let reasons) = current.compatibility(with: previous) else {
            Issue.record("not additive: \(current.compatibility(with: previous))")
            return
        }
        #expect(reasons.contains("relationship Neighbor.friends, its own inverse, is now stored in its join table in both directions"))

        let connection = try SQLiteConnection(path: file.path)
        for table in ["Neighbor_friends", "Neighbor_clones", "Neighbor_guarantors"] { try connection.run("DROP TABLE \(table)") }
        try connection.run("UPDATE _localstore_metadata SET value = ? WHERE key = 'schema'", [.text(String(decoding: try previous.jsonData(), as: UTF8.self))])
        _ = try ObjectStore(path: file.path, schema: current, policy: .additiveOnly)

        let context = try reopened()
        let people = neighbors("a", "b", in: context)
        people[0].addToFriends(people[1])
        try context.save()
        let fresh = try reopened()
        #expect(try fresh.fetchAll(Neighbor.self).map(\.friends.count) == [1, 1])
    }
}

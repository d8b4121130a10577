import SwiftSyntaxMacrosTestSupport
import XCTest

/// Expansions of `@Relationship`: to-one, `Set` and ordered accessors, helpers and schema entries.
final class RelationshipMacroTests: XCTestCase {
    func testToOneAccessorsLoadAndSetThroughTheGraph() {
        assertMacroExpansion(
            #"""
            final class Person {
                @Relationship(inverse: "people", deleteRule: .nullify) var place: Place?
            }
            """#,
            expandedSource: #"""
            final class Person {
                var place: Place? {
                    @storageRestrictions(initializes: _place)
                    init(initialValue) {
                        _place = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.place)
                        LocalStore._$willReadRelationship(self, "place")
                        return _place
                    }
                    set {
                        LocalStore._$setRelationship(self, "place", to: newValue)
                    }
                }

                private var _place: Place? = nil
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    func testSetRelationshipGetsModifyAndHelpers() {
        assertMacroExpansion(
            #"""
            @Entity final class Place {
                @Relationship(inverse: "place", deleteRule: .nullify) var people: Set<Person> = []
            }
            """#,
            expandedSource: #"""
            final class Place {
                var people: Set<Person> {
                    @storageRestrictions(initializes: _people)
                    init(initialValue) {
                        _people = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.people)
                        LocalStore._$willReadRelationship(self, "people")
                        return _people
                    }
                    set {
                        LocalStore._$setRelationship(self, "people", to: newValue)
                    }
                }

                private var _people: Set<Person> = []

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}

                func addToPeople(_ member: Person) {
                    LocalStore._$addToRelationship(self, "people", member)
                }

                func removeFromPeople(_ member: Person) {
                    LocalStore._$removeFromRelationship(self, "people", member)
                }
            }

            extension Place: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Place.self, name: "Place", properties: [
                    .relationship("people", keyPath: \Place.people, get: { $0._people }, modify: { $1(&$0._people) }, inverse: "place", deleteRule: .nullify),
                ])
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    func testOrderedRelationshipGetsInsertHelper() {
        assertMacroExpansion(
            #"""
            @Entity final class Author {
                var name: String = ""
                @Relationship(inverse: "author", deleteRule: .cascade) var books: [Book] = []
            }
            """#,
            expandedSource: #"""
            final class Author {
                var name: String {
                    @storageRestrictions(initializes: _name)
                    init(initialValue) {
                        _name = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.name)
                        return _name
                    }
                    set {
                        LocalStore._$withMutation(self, \.name) {
                            LocalStore._$willChangeAttribute(self, "name")
                            _name = newValue
                        }
                    }
                }

                private var _name: String = ""
                var books: [Book] {
                    @storageRestrictions(initializes: _books)
                    init(initialValue) {
                        _books = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.books)
                        LocalStore._$willReadRelationship(self, "books")
                        return _books
                    }
                    set {
                        LocalStore._$setRelationship(self, "books", to: newValue)
                    }
                }

                private var _books: [Book] = []

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}

                func addToBooks(_ member: Book) {
                    LocalStore._$addToRelationship(self, "books", member)
                }

                func removeFromBooks(_ member: Book) {
                    LocalStore._$removeFromRelationship(self, "books", member)
                }

                func insertIntoBooks(_ member: Book, at index: Int) {
                    LocalStore._$insertIntoRelationship(self, "books", member, at: index)
                }
            }

            extension Author: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Author.self, name: "Author", properties: [
                    .attribute("name", keyPath: \Author.name, get: { $0._name }, set: { $0._name = $1 }),
                    .relationship("books", keyPath: \Author.books, get: { $0._books }, modify: { $1(&$0._books) }, inverse: "author", deleteRule: .cascade),
                ])
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    func testRenamedEntityAndStorageNamesArePassedToTheSchema() {
        assertMacroExpansion(
            #"""
            @Entity(originalName: "Owner") final class Keeper {
                @Relationship(inverse: "pets", deleteRule: .nullify, persistentName: "home_id", originalName: "home") var house: House?
            }
            """#,
            expandedSource: #"""
            final class Keeper {
                var house: House? {
                    @storageRestrictions(initializes: _house)
                    init(initialValue) {
                        _house = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.house)
                        LocalStore._$willReadRelationship(self, "house")
                        return _house
                    }
                    set {
                        LocalStore._$setRelationship(self, "house", to: newValue)
                    }
                }

                private var _house: House? = nil

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Keeper: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Keeper.self, name: "Keeper", originalName: "Owner", properties: [
                    .relationship("house", keyPath: \Keeper.house, get: { $0._house }, set: { $0._house = $1 }, inverse: "pets", deleteRule: .nullify, persistentName: "home_id", originalName: "home"),
                ])
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    func testGenericSpellingsAndCountsArePassedThrough() {
        assertMacroExpansion(
            #"""
            @Entity final class Team {
                @Relationship(inverse: "team", deleteRule: .deny, minCount: 1, maxCount: 5) var members: Array<Player> = []
                @Relationship(inverse: "teams", deleteRule: .nullify) var coach: Optional<Coach>
            }
            """#,
            expandedSource: #"""
            final class Team {
                var members: Array<Player> {
                    @storageRestrictions(initializes: _members)
                    init(initialValue) {
                        _members = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.members)
                        LocalStore._$willReadRelationship(self, "members")
                        return _members
                    }
                    set {
                        LocalStore._$setRelationship(self, "members", to: newValue)
                    }
                }

                private var _members: Array<Player> = []
                var coach: Optional<Coach> {
                    @storageRestrictions(initializes: _coach)
                    init(initialValue) {
                        _coach = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.coach)
                        LocalStore._$willReadRelationship(self, "coach")
                        return _coach
                    }
                    set {
                        LocalStore._$setRelationship(self, "coach", to: newValue)
                    }
                }

                private var _coach: Optional<Coach> = nil

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}

                func addToMembers(_ member: Player) {
                    LocalStore._$addToRelationship(self, "members", member)
                }

                func removeFromMembers(_ member: Player) {
                    LocalStore._$removeFromRelationship(self, "members", member)
                }

                func insertIntoMembers(_ member: Player, at index: Int) {
                    LocalStore._$insertIntoRelationship(self, "members", member, at: index)
                }
            }

            extension Team: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Team.self, name: "Team", properties: [
                    .relationship("members", keyPath: \Team.members, get: { $0._members }, modify: { $1(&$0._members) }, inverse: "team", deleteRule: .deny, minCount: 1, maxCount: 5),
                    .relationship("coach", keyPath: \Team.coach, get: { $0._coach }, set: { $0._coach = $1 }, inverse: "teams", deleteRule: .nullify),
                ])
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }
}

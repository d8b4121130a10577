import Foundation
import LocalStore
import TestSupport
import Testing

/// The entities of the macro contract, declared with the real macros. Nested in an enum so
/// the extension role has to extend qualified names (`MacroFixture.Person`).
enum MacroFixture {
    enum Mood: String { case calm, busy }
    struct Prefs: Codable, Equatable { var theme = "dark" }

    @Composition struct GeoPoint: Equatable {
        var latitude: Double = 0
        var longitude: Double = 0
    }

    @Entity final class Place {
        var name: String = ""
        @Attribute(storage: .composition) var location: GeoPoint? = nil
        @Relationship(inverse: "place", deleteRule: .nullify) var people: Set<Person> = []
    }

    @Entity final class Person {
        @Attribute(.unique) var email: String = ""
        var name: String = ""
        var born: Date? = nil
        @Attribute(storage: .raw) var mood: Mood = .calm
        @Attribute(storage: .codable) var prefs: Prefs? = nil
        @Attribute(persistentName: "nick") var nickname: String = ""
        @Transient var cache: [String: Int] = [:]
        @Relationship(inverse: "people", deleteRule: .nullify) var place: Place?
    }

    @Entity final class Author {
        var name: String = ""
        @Relationship(inverse: "author", deleteRule: .cascade) var books: [Book] = []
    }

    @Entity final class Book {
        @Attribute(.unique, .indexed, originalName: "name") var title: String = ""
        @Relationship(inverse: "books", deleteRule: .nullify) var author: Author?

        init(title: String) {
            self.title = title
        }
    }

    /// Literal defaults without annotations, and the memberwise initializer.
    @Entity(generateInit: true) final class Shelf {
        var label = ""
        var capacity = 0
        var tilt = -0.5
        var isOpen = false
        var note: String? = nil
        @Transient var cache: [String: Int] = [:]
        @Relationship(inverse: "shelf", deleteRule: .nullify) var volumes: [Volume] = []
    }

    @Entity(generateInit: true) final class Volume {
        var title: String = "Untitled"
        @Relationship(inverse: "volumes", deleteRule: .nullify) var shelf: Shelf?
    }

    /// Public members are generated `public`, which a public class needs to conform.
    @Entity public final class Label {
        public var text: String = ""
    }
}

/// Compiles the real macro expansion against the runtime and checks what it produces.
@Suite struct MacroExpansionCompilesTests {
    typealias Person = MacroFixture.Person

    @Test func schemaListsStoredPropertiesInDeclarationOrder() {
        #expect(Person._$entity.name == "Person")
        #expect(Person._$entity.attributes.map(\.name) == ["email", "name", "born", "mood", "prefs", "nickname"])
        #expect(Person._$entity.relationships.map(\.name) == ["place"])
        #expect(MacroFixture.Place._$entity.relationships.map(\.name) == ["people"])
        #expect(MacroFixture.Label._$entity.attributes.map(\.name) == ["text"])
    }

    @Test func attributeArgumentsReachTheSchema() {
        let attributes = Person._$entity.attributes
        #expect(attributes.first { $0.name == "nickname" }?.columns.map(\.name) == ["nick"])
        #expect(attributes.first { $0.name == "email" }?.options == [.unique])
        #expect(attributes.first { $0.name == "mood" }?.storage == .raw)
        #expect(attributes.first { $0.name == "prefs" }?.storage == .codable)
        let title = MacroFixture.Book._$entity.attributes.first { $0.name == "title" }
        #expect(title?.options == [.unique, .indexed])
        #expect(title?.originalName == "name")
        let location = MacroFixture.Place._$entity.attributes.first { $0.name == "location" }
        #expect(location?.storage == .composition)
        #expect(location?.columns.map(\.name) == ["location_latitude", "location_longitude"])
    }

    @Test func settingToOneUpdatesTheInverseInMemory() {
        let author = MacroFixture.Author()
        let book = MacroFixture.Book(title: "Notes")
        book.author = author
        #expect(author.books == [book])
        let second = MacroFixture.Book(title: "More notes")
        author.insertIntoBooks(second, at: 0)
        #expect(author.books.map(\.title) == ["More notes", "Notes"])
        #expect(second.author === author)
        author.removeFromBooks(book)
        #expect(book.author == nil)
    }

    @Test func toManyHelpersKeepBothSides() {
        let place = MacroFixture.Place()
        let ada = Person()
        place.addToPeople(ada)
        #expect(ada.place === place)
        ada.place = nil
        #expect(place.people.isEmpty)
    }

    @Test func generatedAccessorsStoreValues() {
        let ada = Person()
        ada.email = "ada@example.com"
        ada.mood = .busy
        ada.cache["x"] = 1
        #expect(ada.email == "ada@example.com")
        #expect(ada.mood == .busy)
        #expect(ada.cache == ["x": 1])
        #expect(MacroFixture.GeoPoint._$compositionFields.map(\.name) == ["latitude", "longitude"])
    }

    @Test func literalDefaultsTakeTheLiteralsTypes() {
        let attributes = MacroFixture.Shelf._$entity.attributes
        #expect(attributes.map(\.name) == ["label", "capacity", "tilt", "isOpen", "note"])
        #expect(attributes.map(\.swiftType) == ["String", "Int", "Double", "Bool", "Optional<String>"])
    }

    @Test func memberwiseInitializerDefaultsEveryArgument() {
        let shelf = MacroFixture.Shelf()
        #expect(shelf.label == "" && shelf.capacity == 0 && shelf.tilt == -0.5 && !shelf.isOpen && shelf.note == nil)
        #expect(shelf.volumes.isEmpty)
        #expect(MacroFixture.Volume().title == "Untitled")
    }

    @Test func memberwiseInitializerSavesAndFetches() throws {
        let file = TemporaryStoreFile()
        let store = try ObjectStore(path: file.path, entities: [MacroFixture.Shelf.self, MacroFixture.Volume.self])
        let context = try store.makeContext()
        let first = MacroFixture.Volume(title: "First")
        let second = MacroFixture.Volume(title: "Second")
        let shelf = MacroFixture.Shelf(label: "Top", capacity: 3, tilt: 1.25, isOpen: true, volumes: [first, second])
        // The initializer assigns through the relationship setter, which keeps the inverse.
        #expect(first.shelf === shelf)
        context.insert(shelf)
        try context.save()

        let other = try store.makeContext()
        let fetched = try #require(try other.object(MacroFixture.Shelf.self, id: shelf.objectID))
        #expect(fetched !== shelf)
        #expect(fetched.label == "Top")
        #expect(fetched.capacity == 3)
        #expect(fetched.tilt == 1.25)
        #expect(fetched.isOpen)
        #expect(fetched.note == nil)
        #expect(fetched.volumes.map(\.title) == ["First", "Second"])
        #expect(fetched.volumes.first?.shelf === fetched)
    }

    @Test func roundTripsThroughTheStore() throws {
        let file = TemporaryStoreFile()
        let store = try ObjectStore(path: file.path, entities: [
            MacroFixture.Place.self, Person.self, MacroFixture.Author.self, MacroFixture.Book.self,
        ])
        let context = try store.makeContext()
        let place = MacroFixture.Place()
        place.name = "Paris"
        place.location = MacroFixture.GeoPoint(latitude: 48.85, longitude: 2.35)
        let ada = Person()
        ada.email = "ada@example.com"
        ada.nickname = "A"
        ada.prefs = MacroFixture.Prefs(theme: "light")
        ada.place = place
        context.insert(ada)
        try context.save()

        let other = try store.makeContext()
        let fetched = try #require(try other.object(Person.self, id: ada.objectID))
        #expect(fetched !== ada)
        #expect(fetched.nickname == "A")
        #expect(fetched.prefs == MacroFixture.Prefs(theme: "light"))
        #expect(fetched.place?.name == "Paris")
        #expect(fetched.place?.location == MacroFixture.GeoPoint(latitude: 48.85, longitude: 2.35))
        #expect(fetched.place?.people.count == 1)
    }
}

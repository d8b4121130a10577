import Foundation
import LocalStore

// The entities the store benchmark writes and reads, declared with the real macros so the
// benchmark measures the code apps get, accessors and all.

/// A mood stored with `.raw` storage: its `String` raw value in one column.
enum Mood: String, CaseIterable {
    case calm, busy, away
}

/// The Person-like entity: eight attributes of mixed types and one to-one.
@Entity final class Person {
    var name: String = ""
    var email: String = ""
    var age: Int = 0
    var score: Double? = nil
    var born: Date? = nil
    var isActive: Bool = false
    @Attribute(storage: .raw) var mood: Mood = .calm
    // Optional so that materializing an object does not generate a throw-away random UUID
    // for the default value before the stored one is set.
    var token: UUID? = nil
    @Relationship(inverse: "residents", deleteRule: .nullify) var place: Place?
}

/// What a ``Person`` points to. Its `residents` is stored as the `place` column of `Person`,
/// so it adds no column and no row per person.
@Entity final class Place {
    var name: String = ""
    @Relationship(inverse: "place", deleteRule: .nullify) var residents: Set<Person> = []
}

/// The owner of the large ordered to-many the traversal workload walks.
@Entity final class Author {
    var name: String = ""
    @Relationship(inverse: "author", deleteRule: .cascade) var books: [Book] = []
}

/// A member of ``Author/books``: stored with the author's id and its index in `books`.
@Entity final class Book {
    var title: String = ""
    var pages: Int = 0
    @Relationship(inverse: "books", deleteRule: .nullify) var author: Author?
}

/// Every entity of the benchmark store, in the order the store is opened with.
let benchEntities: [any PersistentEntity.Type] = [Person.self, Place.self, Author.self, Book.self]

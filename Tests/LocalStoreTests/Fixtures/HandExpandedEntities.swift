import Foundation
import LocalStore
import TestSupport

// The code `@Entity` generates, written out by hand, so runtime tests do not depend on the
// macro plugin. Kept in step with the expansion tests in LocalStoreMacrosTests.

enum HandMood: String, Codable { case calm, busy }
struct HandPrefs: Codable, Equatable { var theme = "dark" }

struct HandPoint: CompositionValue, Equatable {
    var latitude: Double = 0
    var longitude: Double = 0
    static let _$compositionFields: [CompositionField<HandPoint>] = [
        CompositionField("latitude", \HandPoint.latitude),
        CompositionField("longitude", \HandPoint.longitude),
    ]
}

final class HandPlace {
    let _$entityState = EntityState()
    init(_$materializing _: MaterializingToken) {}
    init() {}

    private var _name: String = ""
    var name: String {
        get { _name }
        set { _$willChangeAttribute(self, "name"); _name = newValue }
    }
    private var _location: HandPoint? = nil
    var location: HandPoint? {
        get { _location }
        set { _$willChangeAttribute(self, "location"); _location = newValue }
    }
    private var _people: Set<HandPerson> = []
    var people: Set<HandPerson> {
        get { _$willReadRelationship(self, "people"); return _people }
        set { _$setRelationship(self, "people", to: newValue) }
    }
    func addToPeople(_ member: HandPerson) { _$addToRelationship(self, "people", member) }
    func removeFromPeople(_ member: HandPerson) { _$removeFromRelationship(self, "people", member) }
}

extension HandPlace: PersistentEntity {
    static let _$entity = EntityDescription(HandPlace.self, name: "HandPlace", properties: [
        .attribute("name", keyPath: \HandPlace.name, get: { $0._name }, set: { $0._name = $1 }),
        .compositionAttribute("location", keyPath: \HandPlace.location, get: { $0._location }, set: { $0._location = $1 }),
        .relationship("people", keyPath: \HandPlace.people, get: { $0._people }, modify: { $1(&$0._people) }, inverse: "place", deleteRule: .nullify),
    ])
}

final class HandPerson {
    let _$entityState = EntityState()
    init(_$materializing _: MaterializingToken) {}
    init() {}

    private var _email: String = ""
    var email: String { get { _email } set { _$willChangeAttribute(self, "email"); _email = newValue } }
    private var _name: String = ""
    var name: String { get { _name } set { _$willChangeAttribute(self, "name"); _name = newValue } }
    private var _born: Date? = nil
    var born: Date? { get { _born } set { _$willChangeAttribute(self, "born"); _born = newValue } }
    private var _score: Double? = nil
    var score: Double? { get { _score } set { _$willChangeAttribute(self, "score"); _score = newValue } }
    private var _mood: HandMood = .calm
    var mood: HandMood { get { _mood } set { _$willChangeAttribute(self, "mood"); _mood = newValue } }
    private var _prefs: HandPrefs? = nil
    var prefs: HandPrefs? { get { _prefs } set { _$willChangeAttribute(self, "prefs"); _prefs = newValue } }
    private var _nickname: String = ""
    var nickname: String { get { _nickname } set { _$willChangeAttribute(self, "nickname"); _nickname = newValue } }
    var cache: [String: Int] = [:]
    private var _place: HandPlace? = nil
    var place: HandPlace? {
        get { _$willReadRelationship(self, "place"); return _place }
        set { _$setRelationship(self, "place", to: newValue) }
    }
}

extension HandPerson: PersistentEntity {
    static let _$entity = EntityDescription(HandPerson.self, name: "HandPerson", properties: [
        .attribute("email", keyPath: \HandPerson.email, get: { $0._email }, set: { $0._email = $1 }, options: [.unique]),
        .attribute("name", keyPath: \HandPerson.name, get: { $0._name }, set: { $0._name = $1 }),
        .attribute("born", keyPath: \HandPerson.born, get: { $0._born }, set: { $0._born = $1 }),
        .attribute("score", keyPath: \HandPerson.score, get: { $0._score }, set: { $0._score = $1 }),
        .rawAttribute("mood", keyPath: \HandPerson.mood, get: { $0._mood }, set: { $0._mood = $1 }),
        .codableAttribute("prefs", keyPath: \HandPerson.prefs, get: { $0._prefs }, set: { $0._prefs = $1 }),
        .attribute("nickname", keyPath: \HandPerson.nickname, get: { $0._nickname }, set: { $0._nickname = $1 }, persistentName: "nick"),
        .relationship("place", keyPath: \HandPerson.place, get: { $0._place }, set: { $0._place = $1 }, inverse: "people", deleteRule: .nullify),
    ])
}

final class HandAuthor {
    let _$entityState = EntityState()
    init(_$materializing _: MaterializingToken) {}
    init() {}
    private var _name: String = ""
    var name: String { get { _name } set { _$willChangeAttribute(self, "name"); _name = newValue } }
    private var _books: [HandBook] = []
    var books: [HandBook] {
        get { _$willReadRelationship(self, "books"); return _books }
        set { _$setRelationship(self, "books", to: newValue) }
    }
    func addToBooks(_ member: HandBook) { _$addToRelationship(self, "books", member) }
    func removeFromBooks(_ member: HandBook) { _$removeFromRelationship(self, "books", member) }
    func insertIntoBooks(_ member: HandBook, at index: Int) { _$insertIntoRelationship(self, "books", member, at: index) }
}

extension HandAuthor: PersistentEntity {
    static let _$entity = EntityDescription(HandAuthor.self, name: "HandAuthor", properties: [
        .attribute("name", keyPath: \HandAuthor.name, get: { $0._name }, set: { $0._name = $1 }),
        .relationship("books", keyPath: \HandAuthor.books, get: { $0._books }, modify: { $1(&$0._books) }, inverse: "author", deleteRule: .cascade),
    ])
}

final class HandBook {
    let _$entityState = EntityState()
    init(_$materializing _: MaterializingToken) {}
    init() {}
    private var _title: String = ""
    var title: String { get { _title } set { _$willChangeAttribute(self, "title"); _title = newValue } }
    private var _author: HandAuthor? = nil
    var author: HandAuthor? {
        get { _$willReadRelationship(self, "author"); return _author }
        set { _$setRelationship(self, "author", to: newValue) }
    }
}

extension HandBook: PersistentEntity {
    static let _$entity = EntityDescription(HandBook.self, name: "HandBook", properties: [
        .attribute("title", keyPath: \HandBook.title, get: { $0._title }, set: { $0._title = $1 }),
        .relationship("author", keyPath: \HandBook.author, get: { $0._author }, set: { $0._author = $1 }, inverse: "books", deleteRule: .nullify),
    ])
}

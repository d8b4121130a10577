import SwiftSyntaxMacrosTestSupport
import XCTest

/// Expansions of `@Entity`: generated members, helpers, access levels and the schema extension.
final class EntityMacroTests: XCTestCase {
    func testFullPersonExpansion() {
        assertMacroExpansion(
            #"""
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
            """#,
            expandedSource: #"""
            final class Person {
                var email: String {
                    @storageRestrictions(initializes: _email)
                    init(initialValue) {
                        _email = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.email)
                        return _email
                    }
                    set {
                        LocalStore._$withMutation(self, \.email) {
                            LocalStore._$willChangeAttribute(self, "email")
                            _email = newValue
                        }
                    }
                }

                private var _email: String = ""
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
                var born: Date? {
                    @storageRestrictions(initializes: _born)
                    init(initialValue) {
                        _born = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.born)
                        return _born
                    }
                    set {
                        LocalStore._$withMutation(self, \.born) {
                            LocalStore._$willChangeAttribute(self, "born")
                            _born = newValue
                        }
                    }
                }

                private var _born: Date? = nil
                var mood: Mood {
                    @storageRestrictions(initializes: _mood)
                    init(initialValue) {
                        _mood = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.mood)
                        return _mood
                    }
                    set {
                        LocalStore._$withMutation(self, \.mood) {
                            LocalStore._$willChangeAttribute(self, "mood")
                            _mood = newValue
                        }
                    }
                }

                private var _mood: Mood = .calm
                var prefs: Prefs? {
                    @storageRestrictions(initializes: _prefs)
                    init(initialValue) {
                        _prefs = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.prefs)
                        return _prefs
                    }
                    set {
                        LocalStore._$withMutation(self, \.prefs) {
                            LocalStore._$willChangeAttribute(self, "prefs")
                            _prefs = newValue
                        }
                    }
                }

                private var _prefs: Prefs? = nil
                var nickname: String {
                    @storageRestrictions(initializes: _nickname)
                    init(initialValue) {
                        _nickname = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.nickname)
                        return _nickname
                    }
                    set {
                        LocalStore._$withMutation(self, \.nickname) {
                            LocalStore._$willChangeAttribute(self, "nickname")
                            _nickname = newValue
                        }
                    }
                }

                private var _nickname: String = ""
                var cache: [String: Int] = [:]
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

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Person: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Person.self, name: "Person", properties: [
                    .attribute("email", keyPath: \Person.email, get: { $0._email }, set: { $0._email = $1 }, options: [.unique]),
                    .attribute("name", keyPath: \Person.name, get: { $0._name }, set: { $0._name = $1 }),
                    .attribute("born", keyPath: \Person.born, get: { $0._born }, set: { $0._born = $1 }),
                    .rawAttribute("mood", keyPath: \Person.mood, get: { $0._mood }, set: { $0._mood = $1 }),
                    .codableAttribute("prefs", keyPath: \Person.prefs, get: { $0._prefs }, set: { $0._prefs = $1 }),
                    .attribute("nickname", keyPath: \Person.nickname, get: { $0._nickname }, set: { $0._nickname = $1 }, persistentName: "nick"),
                    .relationship("place", keyPath: \Person.place, get: { $0._place }, set: { $0._place = $1 }, inverse: "people", deleteRule: .nullify),
                ])
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    func testPublicClassGetsPublicGeneratedMembers() {
        assertMacroExpansion(
            #"""
            @Entity public final class Tag {
                public var label: String = ""
                @Relationship(inverse: "tags", deleteRule: .nullify) public var items: Set<Item> = []
            }
            """#,
            expandedSource: #"""
            public final class Tag {
                public var label: String {
                    @storageRestrictions(initializes: _label)
                    init(initialValue) {
                        _label = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.label)
                        return _label
                    }
                    set {
                        LocalStore._$withMutation(self, \.label) {
                            LocalStore._$willChangeAttribute(self, "label")
                            _label = newValue
                        }
                    }
                }

                private var _label: String = ""
                public var items: Set<Item> {
                    @storageRestrictions(initializes: _items)
                    init(initialValue) {
                        _items = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.items)
                        LocalStore._$willReadRelationship(self, "items")
                        return _items
                    }
                    set {
                        LocalStore._$setRelationship(self, "items", to: newValue)
                    }
                }

                private var _items: Set<Item> = []

                public let _$entityState = LocalStore.EntityState()

                public init(_$materializing _: LocalStore.MaterializingToken) {}

                public init() {}

                public func addToItems(_ member: Item) {
                    LocalStore._$addToRelationship(self, "items", member)
                }

                public func removeFromItems(_ member: Item) {
                    LocalStore._$removeFromRelationship(self, "items", member)
                }
            }

            extension Tag: LocalStore.PersistentEntity {
                public static let _$entity = LocalStore.EntityDescription(Tag.self, name: "Tag", properties: [
                    .attribute("label", keyPath: \Tag.label, get: { $0._label }, set: { $0._label = $1 }),
                    .relationship("items", keyPath: \Tag.items, get: { $0._items }, modify: { $1(&$0._items) }, inverse: "tags", deleteRule: .nullify),
                ])
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    func testClassWithItsOwnInitializerGetsNoEmptyInit() {
        assertMacroExpansion(
            #"""
            @Entity final class Book {
                var title: String = ""

                init(title: String) {
                    self.title = title
                }
            }
            """#,
            expandedSource: #"""
            final class Book {
                var title: String {
                    @storageRestrictions(initializes: _title)
                    init(initialValue) {
                        _title = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.title)
                        return _title
                    }
                    set {
                        LocalStore._$withMutation(self, \.title) {
                            LocalStore._$willChangeAttribute(self, "title")
                            _title = newValue
                        }
                    }
                }

                private var _title: String = ""

                init(title: String) {
                    self.title = title
                }

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}
            }

            extension Book: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Book.self, name: "Book", properties: [
                    .attribute("title", keyPath: \Book.title, get: { $0._title }, set: { $0._title = $1 }),
                ])
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    func testNestedClassIsExtendedByQualifiedName() {
        assertMacroExpansion(
            #"""
            enum Fixtures {
                @Entity final class Item {
                    var name: String = ""
                }
            }
            """#,
            expandedSource: #"""
            enum Fixtures {
                final class Item {
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

                    let _$entityState = LocalStore.EntityState()

                    init(_$materializing _: LocalStore.MaterializingToken) {}

                    init() {}
                }
            }

            extension Fixtures.Item: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Fixtures.Item.self, name: "Item", properties: [
                    .attribute("name", keyPath: \Fixtures.Item.name, get: { $0._name }, set: { $0._name = $1 }),
                ])
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    func testStaticComputedAndStateMembersAreSkipped() {
        assertMacroExpansion(
            #"""
            @Entity final class Counter {
                static var shared: Int = 0
                var value: Int = 0
                var doubled: Int { value * 2 }
                var tripled: Int {
                    get { value * 3 }
                    set { value = newValue / 3 }
                }
            }
            """#,
            expandedSource: #"""
            final class Counter {
                static var shared: Int = 0
                var value: Int {
                    @storageRestrictions(initializes: _value)
                    init(initialValue) {
                        _value = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.value)
                        return _value
                    }
                    set {
                        LocalStore._$withMutation(self, \.value) {
                            LocalStore._$willChangeAttribute(self, "value")
                            _value = newValue
                        }
                    }
                }

                private var _value: Int = 0
                var doubled: Int { value * 2 }
                var tripled: Int {
                    get { value * 3 }
                    set { value = newValue / 3 }
                }

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Counter: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Counter.self, name: "Counter", properties: [
                    .attribute("value", keyPath: \Counter.value, get: { $0._value }, set: { $0._value = $1 }),
                ])
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    func testEmptyEntity() {
        assertMacroExpansion(
            #"""
            @Entity final class Marker {
            }
            """#,
            expandedSource: #"""
            final class Marker {

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Marker: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Marker.self, name: "Marker", properties: [])
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    /// `var name = ""`, `= 0`, `= -0.5` and `= false` take the literal's type, which the
    /// backing storage spells out.
    func testLiteralDefaultsNeedNoTypeAnnotation() {
        assertMacroExpansion(
            #"""
            @Entity final class Counter {
                var label = ""
                var count = -1
                var ratio = 0.5
                var done = false
            }
            """#,
            expandedSource: #"""
            final class Counter {
                var label {
                    @storageRestrictions(initializes: _label)
                    init(initialValue) {
                        _label = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.label)
                        return _label
                    }
                    set {
                        LocalStore._$withMutation(self, \.label) {
                            LocalStore._$willChangeAttribute(self, "label")
                            _label = newValue
                        }
                    }
                }

                private var _label: String = ""
                var count {
                    @storageRestrictions(initializes: _count)
                    init(initialValue) {
                        _count = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.count)
                        return _count
                    }
                    set {
                        LocalStore._$withMutation(self, \.count) {
                            LocalStore._$willChangeAttribute(self, "count")
                            _count = newValue
                        }
                    }
                }

                private var _count: Int = -1
                var ratio {
                    @storageRestrictions(initializes: _ratio)
                    init(initialValue) {
                        _ratio = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.ratio)
                        return _ratio
                    }
                    set {
                        LocalStore._$withMutation(self, \.ratio) {
                            LocalStore._$willChangeAttribute(self, "ratio")
                            _ratio = newValue
                        }
                    }
                }

                private var _ratio: Double = 0.5
                var done {
                    @storageRestrictions(initializes: _done)
                    init(initialValue) {
                        _done = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.done)
                        return _done
                    }
                    set {
                        LocalStore._$withMutation(self, \.done) {
                            LocalStore._$willChangeAttribute(self, "done")
                            _done = newValue
                        }
                    }
                }

                private var _done: Bool = false

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Counter: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Counter.self, name: "Counter", properties: [
                    .attribute("label", keyPath: \Counter.label, get: { $0._label }, set: { $0._label = $1 }),
                    .attribute("count", keyPath: \Counter.count, get: { $0._count }, set: { $0._count = $1 }),
                    .attribute("ratio", keyPath: \Counter.ratio, get: { $0._ratio }, set: { $0._ratio = $1 }),
                    .attribute("done", keyPath: \Counter.done, get: { $0._done }, set: { $0._done = $1 }),
                ])
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    /// `generateInit: true` takes every stored attribute and relationship in declaration order,
    /// with the property's default (or `nil`) as the default argument, leaves transient
    /// properties out, and replaces `init()`.
    func testGenerateInitTakesAttributesAndRelationshipsInOrder() {
        assertMacroExpansion(
            #"""
            @Entity(generateInit: true) public final class Book {
                public var title = ""
                @Transient var cache: [String: Int] = [:]
                public var subtitle: String?
                @Relationship(inverse: "books", deleteRule: .nullify) public var author: Author?
                @Attribute(.indexed) public var pages: Int = 1
            }
            """#,
            expandedSource: #"""
            public final class Book {
                public var title {
                    @storageRestrictions(initializes: _title)
                    init(initialValue) {
                        _title = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.title)
                        return _title
                    }
                    set {
                        LocalStore._$withMutation(self, \.title) {
                            LocalStore._$willChangeAttribute(self, "title")
                            _title = newValue
                        }
                    }
                }

                private var _title: String = ""
                var cache: [String: Int] = [:]
                public var subtitle: String? {
                    @storageRestrictions(initializes: _subtitle)
                    init(initialValue) {
                        _subtitle = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.subtitle)
                        return _subtitle
                    }
                    set {
                        LocalStore._$withMutation(self, \.subtitle) {
                            LocalStore._$willChangeAttribute(self, "subtitle")
                            _subtitle = newValue
                        }
                    }
                }

                private var _subtitle: String? = nil
                public var author: Author? {
                    @storageRestrictions(initializes: _author)
                    init(initialValue) {
                        _author = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.author)
                        LocalStore._$willReadRelationship(self, "author")
                        return _author
                    }
                    set {
                        LocalStore._$setRelationship(self, "author", to: newValue)
                    }
                }

                private var _author: Author? = nil
                public var pages: Int {
                    @storageRestrictions(initializes: _pages)
                    init(initialValue) {
                        _pages = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.pages)
                        return _pages
                    }
                    set {
                        LocalStore._$withMutation(self, \.pages) {
                            LocalStore._$willChangeAttribute(self, "pages")
                            _pages = newValue
                        }
                    }
                }

                private var _pages: Int = 1

                public let _$entityState = LocalStore.EntityState()

                public init(_$materializing _: LocalStore.MaterializingToken) {}

                public init(title: String = "", subtitle: String? = nil, author: Author? = nil, pages: Int = 1) {
                    self.title = title
                    self.subtitle = subtitle
                    self.author = author
                    self.pages = pages
                }
            }

            extension Book: LocalStore.PersistentEntity {
                public static let _$entity = LocalStore.EntityDescription(Book.self, name: "Book", properties: [
                    .attribute("title", keyPath: \Book.title, get: { $0._title }, set: { $0._title = $1 }),
                    .attribute("subtitle", keyPath: \Book.subtitle, get: { $0._subtitle }, set: { $0._subtitle = $1 }),
                    .relationship("author", keyPath: \Book.author, get: { $0._author }, set: { $0._author = $1 }, inverse: "books", deleteRule: .nullify),
                    .attribute("pages", keyPath: \Book.pages, get: { $0._pages }, set: { $0._pages = $1 }, options: [.indexed]),
                ])
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }
}

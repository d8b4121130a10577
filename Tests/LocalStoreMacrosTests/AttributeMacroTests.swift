import SwiftSyntaxMacrosTestSupport
import XCTest

/// Expansions of `@Attribute`, alone and as `@Entity` applies it: accessors, backing storage and schema arguments.
final class AttributeMacroTests: XCTestCase {
    func testPlainAttributeGetsTrackedAccessorsAndPrivateStorage() {
        assertMacroExpansion(
            #"""
            final class Person {
                @Attribute var email: String = ""
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
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    func testOptionalAttributeWithoutDefaultStartsAsNil() {
        assertMacroExpansion(
            #"""
            final class Person {
                @Attribute var born: Optional<Date>
            }
            """#,
            expandedSource: #"""
            final class Person {
                var born: Optional<Date> {
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

                private var _born: Optional<Date> = nil
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    func testEntityAddsAttributeToUnmarkedStoredProperties() {
        assertMacroExpansion(
            #"""
            @Entity final class Note {
                var text: String = ""
                var count: Int = 0
            }
            """#,
            expandedSource: #"""
            final class Note {
                var text: String {
                    @storageRestrictions(initializes: _text)
                    init(initialValue) {
                        _text = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.text)
                        return _text
                    }
                    set {
                        LocalStore._$withMutation(self, \.text) {
                            LocalStore._$willChangeAttribute(self, "text")
                            _text = newValue
                        }
                    }
                }

                private var _text: String = ""
                var count: Int {
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

                private var _count: Int = 0

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Note: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Note.self, name: "Note", properties: [
                    .attribute("text", keyPath: \Note.text, get: { $0._text }, set: { $0._text = $1 }),
                    .attribute("count", keyPath: \Note.count, get: { $0._count }, set: { $0._count = $1 }),
                ])
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    func testStorageSelectsTheSchemaBuilder() {
        assertMacroExpansion(
            #"""
            @Entity final class Person {
                @Attribute(storage: .raw) var mood: Mood = .calm
                @Attribute(storage: .codable) var prefs: Prefs? = nil
                @Attribute(storage: .composition) var location: GeoPoint? = nil
                @Attribute(storage: .default) var name: String = ""
            }
            """#,
            expandedSource: #"""
            final class Person {
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
                var location: GeoPoint? {
                    @storageRestrictions(initializes: _location)
                    init(initialValue) {
                        _location = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.location)
                        return _location
                    }
                    set {
                        LocalStore._$withMutation(self, \.location) {
                            LocalStore._$willChangeAttribute(self, "location")
                            _location = newValue
                        }
                    }
                }

                private var _location: GeoPoint? = nil
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

            extension Person: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Person.self, name: "Person", properties: [
                    .rawAttribute("mood", keyPath: \Person.mood, get: { $0._mood }, set: { $0._mood = $1 }),
                    .codableAttribute("prefs", keyPath: \Person.prefs, get: { $0._prefs }, set: { $0._prefs = $1 }),
                    .compositionAttribute("location", keyPath: \Person.location, get: { $0._location }, set: { $0._location = $1 }),
                    .attribute("name", keyPath: \Person.name, get: { $0._name }, set: { $0._name = $1 }),
                ])
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    func testOptionsArePassedAsWritten() {
        assertMacroExpansion(
            #"""
            @Entity final class Person {
                @Attribute(.unique, .indexed) var email: String = ""
                @Attribute(.indexed, storage: .raw) var mood: Mood = .calm
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

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Person: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Person.self, name: "Person", properties: [
                    .attribute("email", keyPath: \Person.email, get: { $0._email }, set: { $0._email = $1 }, options: [.unique, .indexed]),
                    .rawAttribute("mood", keyPath: \Person.mood, get: { $0._mood }, set: { $0._mood = $1 }, options: [.indexed]),
                ])
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    func testPersistentAndOriginalNames() {
        assertMacroExpansion(
            #"""
            @Entity final class Person {
                @Attribute(persistentName: "nick") var nickname: String = ""
                @Attribute(originalName: "surname") var familyName: String = ""
                @Attribute(.unique, persistentName: "mail", originalName: "emailAddress") var email: String = ""
            }
            """#,
            expandedSource: #"""
            final class Person {
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
                var familyName: String {
                    @storageRestrictions(initializes: _familyName)
                    init(initialValue) {
                        _familyName = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.familyName)
                        return _familyName
                    }
                    set {
                        LocalStore._$withMutation(self, \.familyName) {
                            LocalStore._$willChangeAttribute(self, "familyName")
                            _familyName = newValue
                        }
                    }
                }

                private var _familyName: String = ""
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

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Person: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Person.self, name: "Person", properties: [
                    .attribute("nickname", keyPath: \Person.nickname, get: { $0._nickname }, set: { $0._nickname = $1 }, persistentName: "nick"),
                    .attribute("familyName", keyPath: \Person.familyName, get: { $0._familyName }, set: { $0._familyName = $1 }, originalName: "surname"),
                    .attribute("email", keyPath: \Person.email, get: { $0._email }, set: { $0._email = $1 }, options: [.unique], persistentName: "mail", originalName: "emailAddress"),
                ])
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    func testDecodeFailurePolicyIsPassedToTheSchema() {
        assertMacroExpansion(
            #"""
            @Entity final class Page {
                @Attribute(storage: .codable, decodeFailure: .fallbackToDefaultValue) var layout: Layout = Layout()
                @Attribute(storage: .codable, persistentName: "draft_json", decodeFailure: .debugAssertNil) var draft: Layout? = nil
            }
            """#,
            expandedSource: #"""
            final class Page {
                \#(TestMacros.attributeMembers("layout", type: "Layout", initialValue: "Layout()"))
                \#(TestMacros.attributeMembers("draft", type: "Layout?", initialValue: "nil"))

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Page: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Page.self, name: "Page", properties: [
                    .codableAttribute("layout", keyPath: \Page.layout, get: { $0._layout }, set: { $0._layout = $1 }, decodeFailure: .fallbackToDefaultValue),
                    .codableAttribute("draft", keyPath: \Page.draft, get: { $0._draft }, set: { $0._draft = $1 }, persistentName: "draft_json", decodeFailure: .debugAssertNil),
                ])
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    func testModuleQualifiedAttributeIsRecognised() {
        assertMacroExpansion(
            #"""
            @Entity final class Person {
                @LocalStore.Attribute(.unique) var email: String = ""
            }
            """#,
            expandedSource: #"""
            final class Person {
                @LocalStore.Attribute(.unique) var email: String = ""

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Person: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Person.self, name: "Person", properties: [
                    .attribute("email", keyPath: \Person.email, get: { $0._email }, set: { $0._email = $1 }, options: [.unique]),
                ])
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }
}

import SwiftSyntaxMacrosTestSupport
import XCTest

/// Every error the macros report, where they report it, and what their fix-its produce.
final class DiagnosticsTests: XCTestCase {
    func testEntityOnStructOffersFinalClass() {
        assertMacroExpansion(
            #"""
            @Entity struct Person {
                var name: String = ""
            }
            """#,
            expandedSource: #"""
            struct Person {
                var name: String = ""
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Entity can only be applied to a class, not to a struct", line: 1, column: 9, fixIts: [FixItSpec(message: "Use 'final class'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            @Entity final class Person {
                var name: String = ""
            }
            """#
        )
    }

    func testDebugAssertNilOnANonOptionalOffersFallbackToDefaultValue() {
        assertMacroExpansion(
            #"""
            final class Page {
                @Attribute(storage: .codable, decodeFailure: .debugAssertNil) var layout: Layout = Layout()
                @Attribute(storage: .codable, decodeFailure: .debugAssertNil) var draft: Layout? = nil
            }
            """#,
            expandedSource: #"""
            final class Page {
                \#(TestMacros.attributeMembers("layout", type: "Layout", initialValue: "Layout()"))
                \#(TestMacros.attributeMembers("draft", type: "Layout?", initialValue: "nil"))
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Attribute(decodeFailure: .debugAssertNil) needs an optional property, and 'layout' cannot be nil; use .fallbackToDefaultValue",
                    line: 2, column: 50, fixIts: [FixItSpec(message: "Use '.fallbackToDefaultValue'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            final class Page {
                @Attribute(storage: .codable, decodeFailure: .fallbackToDefaultValue) var layout: Layout = Layout()
                @Attribute(storage: .codable, decodeFailure: .debugAssertNil) var draft: Layout? = nil
            }
            """#
        )
    }

    func testEntityOnEnum() {
        assertMacroExpansion(
            #"""
            @Entity enum Kind {
                case a
            }
            """#,
            expandedSource: #"""
            enum Kind {
                case a
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Entity can only be applied to a class, not to an enum", line: 1, column: 9),
            ],
            macroSpecs: TestMacros.specs
        )
    }

    func testEntityOnActor() {
        assertMacroExpansion(
            #"""
            @Entity actor Worker {
            }
            """#,
            expandedSource: #"""
            actor Worker {
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Entity can only be applied to a class, not to an actor", line: 1, column: 9),
            ],
            macroSpecs: TestMacros.specs
        )
    }

    func testEntityOnProtocol() {
        assertMacroExpansion(
            #"""
            @Entity protocol Named {
            }
            """#,
            expandedSource: #"""
            protocol Named {
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Entity can only be applied to a class, not to a protocol", line: 1, column: 9),
            ],
            macroSpecs: TestMacros.specs
        )
    }

    func testEntityOnNonFinalClassOffersFinal() {
        assertMacroExpansion(
            #"""
            @Entity class Person {
                var name: String = ""
            }
            """#,
            expandedSource: #"""
            class Person {
                var name: String = ""
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Entity requires a final class; declare 'Person' as 'final class' (entity inheritance is not supported)", line: 1, column: 15, fixIts: [FixItSpec(message: "Add 'final'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            @Entity final class Person {
                var name: String = ""
            }
            """#
        )
    }

    func testEntityOnNonFinalClassOnItsOwnLine() {
        assertMacroExpansion(
            #"""
            @Entity
            public class Person {
            }
            """#,
            expandedSource: #"""
            public class Person {
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Entity requires a final class; declare 'Person' as 'final class' (entity inheritance is not supported)", line: 2, column: 14, fixIts: [FixItSpec(message: "Add 'final'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            @Entity
            public final class Person {
            }
            """#
        )
    }

    /// Literal defaults stand for their type (see `EntityMacroTests`); any other
    /// initializer needs an annotation, and the fix-it inserts a placeholder for it.
    func testMissingTypeAnnotationOffersPlaceholder() {
        assertMacroExpansion(
            #"""
            @Entity final class Person {
                var born = Date()
                var mood = Mood.calm
            }
            """#,
            expandedSource: refusedEntityExpansion("Person", members: ["var born = Date()", "var mood = Mood.calm"]),
            diagnostics: [
                DiagnosticSpec(message: "@Entity requires an explicit type annotation on 'born'", line: 2, column: 9, fixIts: [FixItSpec(message: "Add a type annotation")]),
                DiagnosticSpec(message: "@Entity requires an explicit type annotation on 'mood'", line: 3, column: 9, fixIts: [FixItSpec(message: "Add a type annotation")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            @Entity final class Person {
                var born: <#Type#> = Date()
                var mood: <#Type#> = Mood.calm
            }
            """#
        )
    }

    func testMissingDefaultOffersObviousValues() {
        assertMacroExpansion(
            #"""
            @Entity final class Person {
                var name: String
                var age: Int
                var rating: Double
                var active: Bool
                var tags: [String]
                var counts: [String: Int]
                var mood: Mood
            }
            """#,
            expandedSource: #"""
            final class Person {
                var name: String
                var age: Int
                var rating: Double
                var active: Bool
                var tags: [String]
                var counts: [String: Int]
                var mood: Mood

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Person: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Person.self, name: "Person", properties: [])
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Entity requires a default value for non-optional property 'name'", line: 2, column: 9, fixIts: [FixItSpec(message: "Add default value '= \"\"'")]),
                DiagnosticSpec(message: "@Entity requires a default value for non-optional property 'age'", line: 3, column: 9, fixIts: [FixItSpec(message: "Add default value '= 0'")]),
                DiagnosticSpec(message: "@Entity requires a default value for non-optional property 'rating'", line: 4, column: 9, fixIts: [FixItSpec(message: "Add default value '= 0'")]),
                DiagnosticSpec(message: "@Entity requires a default value for non-optional property 'active'", line: 5, column: 9, fixIts: [FixItSpec(message: "Add default value '= false'")]),
                DiagnosticSpec(message: "@Entity requires a default value for non-optional property 'tags'", line: 6, column: 9, fixIts: [FixItSpec(message: "Add default value '= []'")]),
                DiagnosticSpec(message: "@Entity requires a default value for non-optional property 'counts'", line: 7, column: 9, fixIts: [FixItSpec(message: "Add default value '= [:]'")]),
                DiagnosticSpec(message: "@Entity requires a default value for non-optional property 'mood'", line: 8, column: 9),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            @Entity final class Person {
                var name: String = ""
                var age: Int = 0
                var rating: Double = 0
                var active: Bool = false
                var tags: [String] = []
                var counts: [String: Int] = [:]
                var mood: Mood
            }
            """#
        )
    }

    func testExplicitAttributeMissingDefault() {
        assertMacroExpansion(
            #"""
            @Entity final class Person {
                @Attribute(.unique) var email: String
            }
            """#,
            expandedSource: #"""
            final class Person {
                var email: String

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Person: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Person.self, name: "Person", properties: [])
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Attribute requires a default value for non-optional property 'email'", line: 2, column: 29, fixIts: [FixItSpec(message: "Add default value '= \"\"'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            @Entity final class Person {
                @Attribute(.unique) var email: String = ""
            }
            """#
        )
    }

    func testLetPropertyOffersVar() {
        assertMacroExpansion(
            #"""
            @Entity final class Person {
                let id: String = ""
            }
            """#,
            expandedSource: #"""
            final class Person {
                let id: String = ""

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Person: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Person.self, name: "Person", properties: [])
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Entity requires 'var' for stored property 'id'; 'let' properties cannot be loaded from the store", line: 2, column: 5, fixIts: [FixItSpec(message: "Replace 'let' with 'var'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            @Entity final class Person {
                var id: String = ""
            }
            """#
        )
    }

    func testExplicitAttributeOnLet() {
        assertMacroExpansion(
            #"""
            final class Person {
                @Attribute let id: String = ""
            }
            """#,
            expandedSource: #"""
            final class Person {
                let id: String = ""
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Attribute requires 'var' for stored property 'id'; 'let' properties cannot be loaded from the store", line: 2, column: 16, fixIts: [FixItSpec(message: "Replace 'let' with 'var'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            final class Person {
                @Attribute var id: String = ""
            }
            """#
        )
    }

    func testMultipleBindings() {
        assertMacroExpansion(
            #"""
            @Entity final class Point {
                var x: Int = 0, y: Int = 0
            }
            """#,
            expandedSource: #"""
            final class Point {
                var x: Int = 0, y: Int = 0

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Point: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Point.self, name: "Point", properties: [])
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Entity does not support declaring several properties in one 'var'; declare each on its own line", line: 2, column: 9),
            ],
            macroSpecs: TestMacros.specs
        )
    }

    func testPropertyObservers() {
        assertMacroExpansion(
            #"""
            @Entity final class Person {
                var name: String = "" {
                    didSet { print(name) }
                }
            }
            """#,
            expandedSource: #"""
            final class Person {
                var name: String = "" {
                    didSet { print(name) }
                }

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Person: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Person.self, name: "Person", properties: [])
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Entity does not support 'willSet'/'didSet' on stored property 'name'; use a computed property or mark it @Transient", line: 2, column: 5),
            ],
            macroSpecs: TestMacros.specs
        )
    }

    func testLazyProperty() {
        assertMacroExpansion(
            #"""
            @Entity final class Person {
                lazy var summary: String = ""
            }
            """#,
            expandedSource: #"""
            final class Person {
                lazy var summary: String = ""

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Person: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Person.self, name: "Person", properties: [])
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Entity does not support 'lazy' property 'summary' unless it is marked @Transient", line: 2, column: 5),
            ],
            macroSpecs: TestMacros.specs
        )
    }

    func testAttributeOnComputedProperty() {
        assertMacroExpansion(
            #"""
            final class Person {
                @Attribute var summary: String { "" }
            }
            """#,
            expandedSource: #"""
            final class Person {
                var summary: String { "" }
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Attribute can only be applied to a stored 'var' property", line: 2, column: 5),
            ],
            macroSpecs: TestMacros.specs
        )
    }

    func testConflictingMacros() {
        assertMacroExpansion(
            #"""
            final class Person {
                @Attribute @Transient var name: String = ""
            }
            """#,
            expandedSource: #"""
            final class Person {
                var name: String = ""
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Attribute, @Relationship and @Transient are mutually exclusive on property 'name'", line: 2, column: 5),
            ],
            macroSpecs: TestMacros.specs
        )
    }

    func testNonOptionalToOneOffersOptional() {
        assertMacroExpansion(
            #"""
            final class Person {
                @Relationship(inverse: "people", deleteRule: .nullify) var place: Place
            }
            """#,
            expandedSource: #"""
            final class Person {
                var place: Place
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Relationship to-one property 'place' must be optional", line: 2, column: 71, fixIts: [FixItSpec(message: "Make the type optional")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            final class Person {
                @Relationship(inverse: "people", deleteRule: .nullify) var place: Place?
            }
            """#
        )
    }

    func testOptionalSetOffersNonOptionalWithEmptyDefault() {
        assertMacroExpansion(
            #"""
            final class Place {
                @Relationship(inverse: "place", deleteRule: .nullify) var people: Set<Person>?
            }
            """#,
            expandedSource: #"""
            final class Place {
                var people: Set<Person>?
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Relationship to-many property 'people' must not be optional; an empty collection means no members", line: 2, column: 71, fixIts: [FixItSpec(message: "Remove '?'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            final class Place {
                @Relationship(inverse: "place", deleteRule: .nullify) var people: Set<Person> = []
            }
            """#
        )
    }

    func testOptionalArrayWithNilDefaultOffersEmptyArray() {
        assertMacroExpansion(
            #"""
            final class Author {
                @Relationship(inverse: "author", deleteRule: .cascade) var books: [Book]? = nil
            }
            """#,
            expandedSource: #"""
            final class Author {
                var books: [Book]? = nil
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Relationship to-many property 'books' must not be optional; an empty collection means no members", line: 2, column: 71, fixIts: [FixItSpec(message: "Remove '?'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            final class Author {
                @Relationship(inverse: "author", deleteRule: .cascade) var books: [Book] = []
            }
            """#
        )
    }

    func testMissingInverse() {
        assertMacroExpansion(
            #"""
            final class Person {
                @Relationship(deleteRule: .nullify) var place: Place?
            }
            """#,
            expandedSource: #"""
            final class Person {
                var place: Place?
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Relationship property 'place' must name its inverse with 'inverse:'", line: 2, column: 5),
            ],
            macroSpecs: TestMacros.specs
        )
    }

    func testMissingDeleteRuleOffersNullify() {
        assertMacroExpansion(
            #"""
            final class Person {
                @Relationship(inverse: "people") var place: Place?
            }
            """#,
            expandedSource: #"""
            final class Person {
                var place: Place?
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Relationship property 'place' must declare a 'deleteRule:'", line: 2, column: 5, fixIts: [FixItSpec(message: "Add 'deleteRule: .nullify'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            final class Person {
                @Relationship(inverse: "people", deleteRule: .nullify) var place: Place?
            }
            """#
        )
    }

    func testBareRelationshipMissingBoth() {
        assertMacroExpansion(
            #"""
            final class Person {
                @Relationship var place: Place?
            }
            """#,
            expandedSource: #"""
            final class Person {
                var place: Place?
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Relationship property 'place' must name its inverse with 'inverse:'", line: 2, column: 5),
                DiagnosticSpec(message: "@Relationship property 'place' must declare a 'deleteRule:'", line: 2, column: 5, fixIts: [FixItSpec(message: "Add 'deleteRule: .nullify'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            final class Person {
                @Relationship(deleteRule: .nullify) var place: Place?
            }
            """#
        )
    }

    func testNoActionDeleteRuleOffersNullify() {
        assertMacroExpansion(
            #"""
            final class Person {
                @Relationship(inverse: "people", deleteRule: .noAction) var place: Place?
            }
            """#,
            expandedSource: #"""
            final class Person {
                var place: Place?
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Relationship property 'place' cannot use deleteRule .noAction: it would leave dangling references in the store", line: 2, column: 50, fixIts: [FixItSpec(message: "Use '.nullify'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            final class Person {
                @Relationship(inverse: "people", deleteRule: .nullify) var place: Place?
            }
            """#
        )
    }

    func testToManyWithoutDefaultOffersEmptyCollection() {
        assertMacroExpansion(
            #"""
            final class Author {
                @Relationship(inverse: "author", deleteRule: .cascade) var books: [Book]
            }
            """#,
            expandedSource: #"""
            final class Author {
                var books: [Book]
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Relationship to-many property 'books' requires a default value", line: 2, column: 64, fixIts: [FixItSpec(message: "Add default value '= []'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            final class Author {
                @Relationship(inverse: "author", deleteRule: .cascade) var books: [Book] = []
            }
            """#
        )
    }

    func testRelationshipToDictionary() {
        assertMacroExpansion(
            #"""
            final class Author {
                @Relationship(inverse: "author", deleteRule: .cascade) var books: [String: Book] = [:]
            }
            """#,
            expandedSource: #"""
            final class Author {
                var books: [String: Book] = [:]
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Relationship property 'books' must have a type of the form 'T?', 'Set<T>' or '[T]'", line: 2, column: 71),
            ],
            macroSpecs: TestMacros.specs
        )
    }

    func testRelationshipWithoutType() {
        assertMacroExpansion(
            #"""
            final class Author {
                @Relationship(inverse: "author", deleteRule: .cascade) var books = [Book]()
            }
            """#,
            expandedSource: #"""
            final class Author {
                var books = [Book]()
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Relationship requires an explicit type annotation on 'books'", line: 2, column: 64, fixIts: [FixItSpec(message: "Add a type annotation")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            final class Author {
                @Relationship(inverse: "author", deleteRule: .cascade) var books: <#Type#> = [Book]()
            }
            """#
        )
    }

    func testTransientWithoutDefaultOffersValue() {
        assertMacroExpansion(
            #"""
            final class Person {
                @Transient var cache: [String: Int]
                @Transient var label: Label
            }
            """#,
            expandedSource: #"""
            final class Person {
                var cache: [String: Int]
                var label: Label
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Transient requires a default value for non-optional property 'cache'", line: 2, column: 20, fixIts: [FixItSpec(message: "Add default value '= [:]'")]),
                DiagnosticSpec(message: "@Transient requires a default value for non-optional property 'label'", line: 3, column: 20),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            final class Person {
                @Transient var cache: [String: Int] = [:]
                @Transient var label: Label
            }
            """#
        )
    }

    func testCompositionOnClassOffersStruct() {
        assertMacroExpansion(
            #"""
            @Composition class Point {
                var x: Double = 0
            }
            """#,
            expandedSource: #"""
            class Point {
                var x: Double = 0
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Composition can only be applied to a struct, not to a class", line: 1, column: 14, fixIts: [FixItSpec(message: "Use 'struct'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            @Composition struct Point {
                var x: Double = 0
            }
            """#
        )
    }

    func testCompositionOnEnum() {
        assertMacroExpansion(
            #"""
            @Composition enum Axis {
                case x
            }
            """#,
            expandedSource: #"""
            enum Axis {
                case x
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Composition can only be applied to a struct, not to an enum", line: 1, column: 14),
            ],
            macroSpecs: TestMacros.specs
        )
    }

    func testCompositionFieldWithoutDefaultOffersValue() {
        assertMacroExpansion(
            #"""
            @Composition struct Point {
                var x: Double
                var label: Label
            }
            """#,
            expandedSource: #"""
            struct Point {
                var x: Double
                var label: Label
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Composition requires a default value for non-optional property 'x'", line: 2, column: 9, fixIts: [FixItSpec(message: "Add default value '= 0'")]),
                DiagnosticSpec(message: "@Composition requires a default value for non-optional property 'label'", line: 3, column: 9),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            @Composition struct Point {
                var x: Double = 0
                var label: Label
            }
            """#
        )
    }

    func testCompositionLetField() {
        assertMacroExpansion(
            #"""
            @Composition struct Point {
                let x: Double = 0
            }
            """#,
            expandedSource: #"""
            struct Point {
                let x: Double = 0
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Composition requires 'var' for stored property 'x'; 'let' properties cannot be loaded from the store", line: 2, column: 5, fixIts: [FixItSpec(message: "Replace 'let' with 'var'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            @Composition struct Point {
                var x: Double = 0
            }
            """#
        )
    }

    func testInvalidPropertyLeavesTheRestOfTheEntityIntact() {
        assertMacroExpansion(
            #"""
            @Entity final class Person {
                var name: String = ""
                var age: Int
                @Relationship(inverse: "people", deleteRule: .noAction) var place: Place?
            }
            """#,
            expandedSource: #"""
            final class Person {
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
                var age: Int
                var place: Place?

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Person: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Person.self, name: "Person", properties: [
                    .attribute("name", keyPath: \Person.name, get: { $0._name }, set: { $0._name = $1 }),
                ])
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Relationship property 'place' cannot use deleteRule .noAction: it would leave dangling references in the store", line: 4, column: 50, fixIts: [FixItSpec(message: "Use '.nullify'")]),
                DiagnosticSpec(message: "@Entity requires a default value for non-optional property 'age'", line: 3, column: 9, fixIts: [FixItSpec(message: "Add default value '= 0'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            @Entity final class Person {
                var name: String = ""
                var age: Int = 0
                @Relationship(inverse: "people", deleteRule: .nullify) var place: Place?
            }
            """#
        )
    }

    // MARK: Types without a default storage

    /// A collection is never an `AttributeValue`, so an unmarked `[Tag]` is reported before the
    /// type checker would fail inside the schema; each fix-it marks the property differently.
    func testUnmarkedCollectionOffersRelationshipCodableOrTransient() {
        assertEachFixIt(
            #"""
            @Entity final class Note {
                var tags: [Tag] = []
            }
            """#,
            expandedSource: refusedEntityExpansion("Note", members: ["var tags: [Tag] = []"]),
            diagnostics: [
                DiagnosticSpec(message: "@Entity cannot store property 'tags' of collection type '[Tag]' as a column; mark it @Relationship if it holds entities, @Attribute(storage: .codable) to store it as JSON, or @Transient to leave it out of the store", line: 2, column: 15, fixIts: [
                    FixItSpec(message: "Add '@Relationship(inverse: <#name#>, deleteRule: .nullify)'"),
                    FixItSpec(message: "Add '@Attribute(storage: .codable)'"),
                    FixItSpec(message: "Add '@Transient'"),
                ]),
            ],
            fixedSources: [
                "Add '@Relationship(inverse: <#name#>, deleteRule: .nullify)'": #"""
                @Entity final class Note {
                    @Relationship(inverse: <#name#>, deleteRule: .nullify) var tags: [Tag] = []
                }
                """#,
                "Add '@Attribute(storage: .codable)'": #"""
                @Entity final class Note {
                    @Attribute(storage: .codable) var tags: [Tag] = []
                }
                """#,
                "Add '@Transient'": #"""
                @Entity final class Note {
                    @Transient var tags: [Tag] = []
                }
                """#,
            ]
        )
    }

    /// A written `@Attribute` without `storage:` on a collection is replaced by the fix-its.
    func testExplicitAttributeOnCollectionOffersReplacements() {
        assertEachFixIt(
            #"""
            final class Note {
                @Attribute(.indexed) var tags: Set<Tag> = []
            }
            """#,
            expandedSource: #"""
            final class Note {
                var tags: Set<Tag> = []
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Attribute cannot store property 'tags' of collection type 'Set<Tag>' as a column; mark it @Relationship if it holds entities, @Attribute(storage: .codable) to store it as JSON, or @Transient to leave it out of the store", line: 2, column: 36, fixIts: [
                    FixItSpec(message: "Add '@Relationship(inverse: <#name#>, deleteRule: .nullify)'"),
                    FixItSpec(message: "Add '@Attribute(storage: .codable)'"),
                    FixItSpec(message: "Add '@Transient'"),
                ]),
            ],
            fixedSources: [
                "Add '@Relationship(inverse: <#name#>, deleteRule: .nullify)'": #"""
                final class Note {
                    @Relationship(inverse: <#name#>, deleteRule: .nullify) var tags: Set<Tag> = []
                }
                """#,
                "Add '@Transient'": #"""
                final class Note {
                    @Transient var tags: Set<Tag> = []
                }
                """#,
            ]
        )
    }

    /// A dictionary cannot be a relationship, so only `.codable` and `@Transient` are offered;
    /// an optional collection is reported like the collection. Other unknown types are left to
    /// the type checker: any type may conform to `AttributeValue`, and for a type that is an
    /// entity the runtime's unavailable `attribute` overloads name `@Relationship`.
    func testDictionaryAndOptionalCollectionOfferCodableOrTransient() {
        assertEachFixIt(
            #"""
            @Entity final class Note {
                var counts: [String: Int] = [:]
                var names: [String]? = nil
            }
            """#,
            expandedSource: refusedEntityExpansion("Note", members: ["var counts: [String: Int] = [:]", "var names: [String]? = nil"]),
            diagnostics: [
                DiagnosticSpec(message: "@Entity cannot store property 'counts' of collection type '[String: Int]' as a column; mark it @Relationship if it holds entities, @Attribute(storage: .codable) to store it as JSON, or @Transient to leave it out of the store", line: 2, column: 17, fixIts: [
                    FixItSpec(message: "Add '@Attribute(storage: .codable)'"),
                    FixItSpec(message: "Add '@Transient'"),
                ]),
                DiagnosticSpec(message: "@Entity cannot store property 'names' of collection type '[String]?' as a column; mark it @Relationship if it holds entities, @Attribute(storage: .codable) to store it as JSON, or @Transient to leave it out of the store", line: 3, column: 16, fixIts: [
                    FixItSpec(message: "Add '@Relationship(inverse: <#name#>, deleteRule: .nullify)'"),
                    FixItSpec(message: "Add '@Attribute(storage: .codable)'"),
                    FixItSpec(message: "Add '@Transient'"),
                ]),
            ],
            fixedSources: [
                "Add '@Attribute(storage: .codable)'": #"""
                @Entity final class Note {
                    @Attribute(storage: .codable) var counts: [String: Int] = [:]
                    @Attribute(storage: .codable) var names: [String]? = nil
                }
                """#,
            ]
        )
    }

    // MARK: Superclasses

    /// The first inherited type is a superclass unless it is a known protocol or named like one
    /// (`…able`, `…ible`, `…Protocol`, …); the error is reported there, before any member is
    /// generated, so no "requires an 'override' keyword" follows.
    func testSuperclassIsReportedAtTheInheritanceClause() {
        assertMacroExpansion(
            #"""
            @Entity final class Note: Base {
            }
            """#,
            expandedSource: #"""
            final class Note: Base {
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Entity classes cannot inherit from a superclass; 'Note' inherits from 'Base'. If 'Base' is a protocol, declare the conformance in an extension of 'Note'", line: 1, column: 27, fixIts: [FixItSpec(message: "Remove superclass 'Base'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            @Entity final class Note {
            }
            """#
        )
    }

    func testSuperclassBeforeProtocolsKeepsTheProtocols() {
        assertMacroExpansion(
            #"""
            @Entity final class Note: Foundation.NSObject, Identifiable {
            }
            """#,
            expandedSource: #"""
            final class Note: Foundation.NSObject, Identifiable {
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Entity classes cannot inherit from a superclass; 'Note' inherits from 'Foundation.NSObject'. If 'Foundation.NSObject' is a protocol, declare the conformance in an extension of 'Note'", line: 1, column: 27, fixIts: [FixItSpec(message: "Remove superclass 'Foundation.NSObject'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            @Entity final class Note: Identifiable {
            }
            """#
        )
    }

    /// Protocols the macro recognises stay allowed in any order; `Named`, a protocol it cannot
    /// recognise from its spelling, counts as a superclass when listed first (the documented
    /// choice: conform to it in an extension).
    func testRecognisedProtocolsAreAllowed() {
        assertMacroExpansion(
            #"""
            @Entity final class Note: Identifiable, Hashable, @unchecked Sendable, CustomStringConvertible, Named {
                var description: String { "" }
            }
            """#,
            expandedSource: #"""
            final class Note: Identifiable, Hashable, @unchecked Sendable, CustomStringConvertible, Named {
                var description: String { "" }

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Note: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Note.self, name: "Note", properties: [])
            }
            """#,
            macroSpecs: TestMacros.specs
        )
        assertMacroExpansion(
            #"""
            @Entity final class Note: Named {
            }
            """#,
            expandedSource: #"""
            final class Note: Named {
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Entity classes cannot inherit from a superclass; 'Note' inherits from 'Named'. If 'Named' is a protocol, declare the conformance in an extension of 'Note'", line: 1, column: 27, fixIts: [FixItSpec(message: "Remove superclass 'Named'")]),
            ],
            macroSpecs: TestMacros.specs
        )
    }

    // MARK: Deprecated spellings

    /// `storageMethod:`, `@Ignore` and `minimumModelCount:`/`maximumModelCount:` warn with a
    /// rename, and expand exactly like the spelling the fix-its produce.
    func testDeprecatedSpellingsWarnAndExpandLikeTheirReplacements() {
        let renamed = #"""
            @Entity final class Person {
                @Attribute(storage: .raw) var mood: Mood = .calm
                @Transient var cache: [String: Int] = [:]
                @Relationship(inverse: "friends", deleteRule: .nullify, minCount: 1, maxCount: 2) var friends: Set<Person> = []
            }
            """#
        let expanded = #"""
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
                var cache: [String: Int] = [:]
                var friends: Set<Person> {
                    @storageRestrictions(initializes: _friends)
                    init(initialValue) {
                        _friends = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.friends)
                        LocalStore._$willReadRelationship(self, "friends")
                        return _friends
                    }
                    set {
                        LocalStore._$setRelationship(self, "friends", to: newValue)
                    }
                }

                private var _friends: Set<Person> = []

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}

                func addToFriends(_ member: Person) {
                    LocalStore._$addToRelationship(self, "friends", member)
                }

                func removeFromFriends(_ member: Person) {
                    LocalStore._$removeFromRelationship(self, "friends", member)
                }
            }

            extension Person: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Person.self, name: "Person", properties: [
                    .rawAttribute("mood", keyPath: \Person.mood, get: { $0._mood }, set: { $0._mood = $1 }),
                    .relationship("friends", keyPath: \Person.friends, get: { $0._friends }, modify: { $1(&$0._friends) }, inverse: "friends", deleteRule: .nullify, minCount: 1, maxCount: 2),
                ])
            }
            """#
        assertMacroExpansion(
            #"""
            @Entity final class Person {
                @Attribute(storageMethod: .raw) var mood: Mood = .calm
                @Ignore var cache: [String: Int] = [:]
                @Relationship(inverse: "friends", deleteRule: .nullify, minimumModelCount: 1, maximumModelCount: 2) var friends: Set<Person> = []
            }
            """#,
            expandedSource: expanded,
            diagnostics: [
                DiagnosticSpec(message: "@Attribute: 'storageMethod:' is deprecated; use 'storage:'", line: 2, column: 16, severity: .warning, fixIts: [FixItSpec(message: "Use 'storage:'")]),
                DiagnosticSpec(message: "@Transient: '@Ignore' is deprecated; use '@Transient'", line: 3, column: 5, severity: .warning, fixIts: [FixItSpec(message: "Use '@Transient'")]),
                DiagnosticSpec(message: "@Relationship: 'minimumModelCount:' is deprecated; use 'minCount:'", line: 4, column: 61, severity: .warning, fixIts: [FixItSpec(message: "Use 'minCount:'")]),
                DiagnosticSpec(message: "@Relationship: 'maximumModelCount:' is deprecated; use 'maxCount:'", line: 4, column: 83, severity: .warning, fixIts: [FixItSpec(message: "Use 'maxCount:'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: renamed
        )
        assertMacroExpansion(renamed, expandedSource: expanded, macroSpecs: TestMacros.specs)
    }

    /// The expansion of an `@Entity` class none of whose `members` became attributes: the
    /// members as written, the generated state and initializers, and an empty schema.
    private func refusedEntityExpansion(_ name: String, members: [String]) -> String {
        """
        final class \(name) {
        \(members.map { "    \($0)\n" }.joined())
            let _$entityState = LocalStore.EntityState()

            init(_$materializing _: LocalStore.MaterializingToken) {}

            init() {}
        }

        extension \(name): LocalStore.PersistentEntity {
            static let _$entity = LocalStore.EntityDescription(\(name).self, name: "\(name)", properties: [])
        }
        """
    }

    /// Runs `assertMacroExpansion` once per entry of `fixedSources`, applying only that fix-it.
    private func assertEachFixIt(
        _ source: String, expandedSource: String, diagnostics: [DiagnosticSpec], fixedSources: [String: String],
        file: StaticString = #filePath, line: UInt = #line
    ) {
        for (fixIt, fixedSource) in fixedSources.sorted(by: { $0.key < $1.key }) {
            assertMacroExpansion(source, expandedSource: expandedSource, diagnostics: diagnostics,
                                 macroSpecs: TestMacros.specs, applyFixIts: [fixIt], fixedSource: fixedSource,
                                 file: file, line: line)
        }
    }
}

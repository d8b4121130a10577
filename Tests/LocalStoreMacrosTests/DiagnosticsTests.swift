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

    func testMissingTypeAnnotationOffersLiteralTypes() {
        assertMacroExpansion(
            #"""
            @Entity final class Person {
                var name = "Ada"
                var age = 36
                var height = 1.7
                var active = true
                var delta = -2
                var born = Date()
            }
            """#,
            expandedSource: #"""
            final class Person {
                var name = "Ada"
                var age = 36
                var height = 1.7
                var active = true
                var delta = -2
                var born = Date()

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Person: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Person.self, name: "Person", properties: [])
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@Entity requires an explicit type annotation on 'name'", line: 2, column: 9, fixIts: [FixItSpec(message: "Add type annotation ': String'")]),
                DiagnosticSpec(message: "@Entity requires an explicit type annotation on 'age'", line: 3, column: 9, fixIts: [FixItSpec(message: "Add type annotation ': Int'")]),
                DiagnosticSpec(message: "@Entity requires an explicit type annotation on 'height'", line: 4, column: 9, fixIts: [FixItSpec(message: "Add type annotation ': Double'")]),
                DiagnosticSpec(message: "@Entity requires an explicit type annotation on 'active'", line: 5, column: 9, fixIts: [FixItSpec(message: "Add type annotation ': Bool'")]),
                DiagnosticSpec(message: "@Entity requires an explicit type annotation on 'delta'", line: 6, column: 9, fixIts: [FixItSpec(message: "Add type annotation ': Int'")]),
                DiagnosticSpec(message: "@Entity requires an explicit type annotation on 'born'", line: 7, column: 9),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            @Entity final class Person {
                var name: String = "Ada"
                var age: Int = 36
                var height: Double = 1.7
                var active: Bool = true
                var delta: Int = -2
                var born = Date()
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
                DiagnosticSpec(message: "@Relationship requires an explicit type annotation on 'books'", line: 2, column: 64),
            ],
            macroSpecs: TestMacros.specs
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
                        _name
                    }
                    set {
                        LocalStore._$willChangeAttribute(self, "name")
                        _name = newValue
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
}

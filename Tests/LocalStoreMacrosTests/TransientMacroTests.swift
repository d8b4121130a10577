import SwiftSyntaxMacrosTestSupport
import XCTest

/// `@Transient` generates nothing and keeps the property out of the schema.
final class TransientMacroTests: XCTestCase {
    func testTransientPropertyIsLeftAloneAndOutOfTheSchema() {
        assertMacroExpansion(
            #"""
            @Entity final class Person {
                var name: String = ""
                @Transient var cache: [String: Int] = [:]
                @Transient var scratch: String?
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
                var cache: [String: Int] = [:]
                var scratch: String?

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
            macroSpecs: TestMacros.specs
        )
    }

    func testTransientOnItsOwnGeneratesNothing() {
        assertMacroExpansion(
            #"""
            final class Person {
                @Transient var cache: [String: Int] = [:]
            }
            """#,
            expandedSource: #"""
            final class Person {
                var cache: [String: Int] = [:]
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }
}

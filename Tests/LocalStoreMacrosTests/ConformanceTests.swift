import SwiftSyntaxMacrosTestSupport
import XCTest

/// What the extension roles do when the compiler asks for no conformance, as it does when the
/// type already declares it (and as the plain `macros:` dictionary registers them).
final class ConformanceTests: XCTestCase {
    func testEntityThatAlreadyConformsStillGetsItsSchema() {
        assertMacroExpansion(
            #"""
            @Entity final class Tag: PersistentEntity {
                @Attribute(.indexed) var label: String = ""
            }
            """#,
            expandedSource: #"""
            final class Tag: PersistentEntity {
                var label: String {
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

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Tag {
                static let _$entity = LocalStore.EntityDescription(Tag.self, name: "Tag", properties: [
                    .attribute("label", keyPath: \Tag.label, get: { $0._label }, set: { $0._label = $1 }, options: [.indexed]),
                ])
            }
            """#,
            macros: TestMacros.types
        )
    }

    func testCompositionThatAlreadyConformsStillGetsItsFields() {
        assertMacroExpansion(
            #"""
            @Composition struct Size: CompositionValue {
                var width: Int = 0
            }
            """#,
            expandedSource: #"""
            struct Size: CompositionValue {
                var width: Int = 0
            }

            extension Size {
                static let _$compositionFields: [LocalStore.CompositionField<Size>] = [
                    LocalStore.CompositionField("width", \Size.width),
                ]
            }
            """#,
            macros: TestMacros.types
        )
    }
}

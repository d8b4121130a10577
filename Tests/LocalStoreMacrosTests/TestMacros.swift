import LocalStoreMacros
import SwiftSyntax
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros

/// The macros under test, registered as the compiler would: `@Entity` and `@Composition`
/// with the conformances their declarations list, so the extension role sees them requested.
enum TestMacros {
    static var specs: [String: MacroSpec] {
        [
            "Entity": MacroSpec(type: EntityMacro.self, conformances: [TypeSyntax("PersistentEntity")]),
            "Attribute": MacroSpec(type: AttributeMacro.self),
            "Relationship": MacroSpec(type: RelationshipMacro.self),
            "Transient": MacroSpec(type: TransientMacro.self),
            "Ignore": MacroSpec(type: TransientMacro.self),
            "Composition": MacroSpec(type: CompositionMacro.self, conformances: [TypeSyntax("CompositionValue")]),
            "Unique": MacroSpec(type: UniqueMacro.self),
        ]
    }

    /// The same macros as a plain `macros:` dictionary: no conformance is requested, as when
    /// the type already declares it.
    static var types: [String: Macro.Type] {
        [
            "Entity": EntityMacro.self,
            "Attribute": AttributeMacro.self,
            "Relationship": RelationshipMacro.self,
            "Transient": TransientMacro.self,
            "Ignore": TransientMacro.self,
            "Composition": CompositionMacro.self,
            "Unique": UniqueMacro.self,
        ]
    }

    /// What `@Attribute` makes of `var <name>: <type> = <initialValue>` in a class body: the
    /// computed property and its backing storage, indented as members. Its first line carries no
    /// indentation, so it goes where the member would start.
    static func attributeMembers(_ name: String, type: String, initialValue: String) -> String {
        let text = """
        var \(name): \(type) {
            @storageRestrictions(initializes: _\(name))
            init(initialValue) {
                _\(name) = initialValue
            }
            get {
                LocalStore._$access(self, \\.\(name))
                return _\(name)
            }
            set {
                LocalStore._$withMutation(self, \\.\(name)) {
                    LocalStore._$willChangeAttribute(self, "\(name)")
                    _\(name) = newValue
                }
            }
        }

        private var _\(name): \(type) = \(initialValue)
        """
        return text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            .map { index, line in index == 0 || line.isEmpty ? String(line) : "    " + line }
            .joined(separator: "\n")
    }
}

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
        ]
    }
}

import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin that provides LocalStore's macros.
@main
struct LocalStoreMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        EntityMacro.self,
        AttributeMacro.self,
        RelationshipMacro.self,
        TransientMacro.self,
        CompositionMacro.self,
        UniqueMacro.self,
    ]
}

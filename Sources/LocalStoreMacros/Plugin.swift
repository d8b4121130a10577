import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct LocalStoreMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = []
}

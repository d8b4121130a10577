import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Composition`: makes a struct storable inline, one column per stored field.
///
/// The extension role adds the `CompositionValue` conformance and the field table in
/// declaration order. Every field must be a `var` (values are rebuilt field by field when
/// read) with a default value, since `CompositionValue` requires `init()`.
public struct CompositionMacro: ExtensionMacro {
    /// The expansion is written already formatted, one field per line.
    public static var formatMode: FormatMode { .disabled }

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let structDecl = declaration.as(StructDeclSyntax.self) else {
            reportNotStruct(declaration, context: context)
            return []
        }
        let typeName = type.trimmedDescription
        var fields: [String] = []
        var isValid = true
        for member in structDecl.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self), !variable.isStatic, !variable.isComputed else {
                continue
            }
            guard let property = PropertyAnalysis.storedVar(variable, macro: "Composition", context: context),
                  PropertyAnalysis.checkDefaultValue(property, macro: "Composition", context: context) else {
                isValid = false
                continue
            }
            if property.type == nil && property.initializer == nil {
                context.report(.missingTypeAnnotation(macro: "@Composition", name: property.name), at: property.binding)
                isValid = false
                continue
            }
            fields.append("LocalStore.CompositionField(\(literalText(property.name)), \\\(typeName).\(property.name))")
        }
        guard isValid else { return [] }
        let conformance = protocols.isEmpty ? "" : ": LocalStore.CompositionValue"
        let access = EntityMacro.accessPrefix(of: structDecl)
        let list = fields.isEmpty ? "[]" : "[\n" + fields.map { "        \($0),\n" }.joined() + "    ]"
        let decl: DeclSyntax = """
            extension \(raw: typeName)\(raw: conformance) {
                \(raw: access)static let _$compositionFields: [LocalStore.CompositionField<\(raw: typeName)>] = \(raw: list)
            }
            """
        return decl.as(ExtensionDeclSyntax.self).map { [$0] } ?? []
    }

    private static func literalText(_ name: String) -> String {
        StringLiteralExprSyntax(content: name).description
    }

    private static func reportNotStruct(_ declaration: some DeclGroupSyntax, context: some MacroExpansionContext) {
        let (kind, keyword) = declaration.kindAndKeyword
        guard let keyword else { return context.report(.compositionNotStruct(kind: kind), at: declaration) }
        // A class becomes a struct by its keyword alone; the other kinds need more than a keyword.
        let fixIts: [FixIt] = kind == "class" ? [.replace(.useStruct, keyword, with: keyword.with(\.tokenKind, .keyword(.struct)))] : []
        context.report(.compositionNotStruct(kind: kind), at: keyword, fixIts: fixIts)
    }
}

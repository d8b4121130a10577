import SwiftSyntax
import SwiftSyntaxMacros

/// `@Transient`: marks a property of an `@Entity` class that the store ignores.
///
/// It also implements `@Ignore`, the deprecated spelling, which it reports with a rename.
///
/// It generates nothing: `@Entity` leaves such properties out of the schema and does not add
/// `@Attribute` to them. Because materialized objects are created with every property at its
/// default, a non-optional transient property must still have a default value.
public struct TransientMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        if node.simpleName == MacroName.ignore {
            let name = node.attributeName
            let transient = TypeSyntax(IdentifierTypeSyntax(name: .identifier(MacroName.transient)))
                .with(\.leadingTrivia, name.leadingTrivia).with(\.trailingTrivia, name.trailingTrivia)
            context.report(.deprecatedSpelling(macro: "@Transient", old: "@Ignore", new: "@Transient"), at: node,
                           fixIts: [.replace(.rename("@Transient"), name, with: transient)])
        }
        guard let property = PropertyAnalysis.storedVar(
            declaration, macro: MacroName.transient, lenient: true, context: context) else { return [] }
        if property.type != nil {
            _ = PropertyAnalysis.checkDefaultValue(property, macro: MacroName.transient, context: context)
        } else if property.initializer == nil {
            context.report(.missingDefaultValue(macro: "@\(MacroName.transient)", name: property.name), at: property.binding)
        }
        return []
    }
}

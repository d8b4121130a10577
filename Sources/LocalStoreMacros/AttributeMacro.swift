import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Attribute`: turns a stored property of an `@Entity` class into a tracked attribute.
///
/// The peer role adds the backing storage `_name`; the accessor role makes the property
/// computed over it, reporting every change to the object's context. The schema entry is
/// written by `@Entity`'s extension role, which reads this attribute's arguments.
public struct AttributeMacro: AccessorMacro, PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let property = validProperty(declaration, context: nil) else { return [] }
        let name = property.name
        return [
            PropertyAnalysis.initAccessor(for: property),
            "get { _\(raw: name) }",
            """
            set {
                LocalStore._$willChangeAttribute(self, \(literal: name))
                _\(raw: name) = newValue
            }
            """,
        ]
    }

    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let property = validProperty(declaration, context: context), let type = property.type else { return [] }
        return [PropertyAnalysis.backingStorage(for: property, type: type)]
    }

    /// The property if it can be an attribute; reports why not when `context` is given.
    ///
    /// `macro` is the macro the messages name: `@Entity` reports the problems of properties
    /// that have no `@Attribute` written, and then does not add one to them.
    static func validProperty(
        _ declaration: some DeclSyntaxProtocol, macro: String = MacroName.attribute, context: (any MacroExpansionContext)?
    ) -> StoredProperty? {
        guard let property = PropertyAnalysis.storedVar(declaration, macro: macro, context: context) else {
            return nil
        }
        if property.decl.hasModifier(.lazy) {
            context?.report(.lazyProperty(name: property.name), at: property.decl)
            return nil
        }
        guard PropertyAnalysis.checkTypeAnnotation(property, macro: macro, context: context),
              PropertyAnalysis.checkDefaultValue(property, macro: macro, context: context) else {
            return nil
        }
        return property
    }
}

/// The arguments of one `@Attribute(...)`, as the schema entry needs them.
struct AttributeArguments {
    /// The unlabelled option expressions, e.g. `.unique`.
    var options: [ExprSyntax] = []
    /// The storage case name: `default`, `raw`, `codable` or `composition`.
    var storage = "default"
    var persistentName: ExprSyntax?
    var originalName: ExprSyntax?

    init(_ attribute: AttributeSyntax?) {
        guard let attribute else { return }
        for argument in attribute.argumentList {
            switch argument.label?.text {
            case nil: options.append(argument.expression.trimmed)
            case "storage":
                storage = argument.expression.as(MemberAccessExprSyntax.self)?.declName.baseName.text ?? "default"
            case "persistentName": persistentName = argument.expression.trimmed
            case "originalName": originalName = argument.expression.trimmed
            default: break
            }
        }
    }

    /// The `PropertyDescription` builder for the storage.
    var builder: String {
        switch storage {
        case "raw": return "rawAttribute"
        case "codable": return "codableAttribute"
        case "composition": return "compositionAttribute"
        default: return "attribute"
        }
    }

    /// The trailing arguments of the builder call, each starting with `, `.
    var trailingArguments: String {
        var text = ""
        if !options.isEmpty {
            text += ", options: [\(options.map(\.trimmedDescription).joined(separator: ", "))]"
        }
        if let persistentName { text += ", persistentName: \(persistentName.trimmedDescription)" }
        if let originalName { text += ", originalName: \(originalName.trimmedDescription)" }
        return text
    }
}

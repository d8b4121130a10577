import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Attribute`: turns a stored property of an `@Entity` class into a tracked attribute.
///
/// The peer role adds the backing storage `_name`; the accessor role makes the property
/// computed over it, reporting every change to the object's context, and every read and change
/// to Swift Observation. The schema entry is written by `@Entity`'s extension role, which reads
/// this attribute's arguments.
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
            """
            get {
                LocalStore._$access(self, \\.\(raw: name))
                return _\(raw: name)
            }
            """,
            """
            set {
                LocalStore._$withMutation(self, \\.\(raw: name)) {
                    LocalStore._$willChangeAttribute(self, \(literal: name))
                    _\(raw: name) = newValue
                }
            }
            """,
        ]
    }

    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        reportDeprecatedStorageLabel(in: node, context: context)
        guard let property = validProperty(declaration, context: context), let type = property.resolvedType else { return [] }
        reportNilPolicyOnNonOptional(in: node, property: property, context: context)
        MergePolicyCheck.report(in: node, property: property, type: type, context: context)
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
        guard PropertyAnalysis.checkTypeAnnotation(property, macro: macro, acceptsLiteral: true, context: context),
              PropertyAnalysis.checkDefaultValue(property, macro: macro, context: context),
              checkDefaultStorage(property, macro: macro, context: context) else {
            return nil
        }
        return property
    }

    /// Reports a collection-typed property that would be stored with the default storage.
    ///
    /// No array, set or dictionary is an `AttributeValue`, so such a property can only be a
    /// relationship, use `.codable` storage, or stay out of the store; without this check the
    /// type checker would report a generic-constraint failure inside the generated schema.
    /// Other types are left to the type checker, since any type may conform to `AttributeValue`.
    private static func checkDefaultStorage(
        _ property: StoredProperty, macro: String, context: (any MacroExpansionContext)?
    ) -> Bool {
        let attribute = property.decl.attribute(named: MacroName.attribute)
        guard AttributeArguments(attribute).storage == "default", let type = property.type else { return true }
        var shape = TypeShape(type)
        if case .optional(let wrapped) = shape { shape = TypeShape(wrapped) }
        let isRelationshipShaped: Bool
        switch shape {
        case .array, .set: isRelationshipShaped = true
        case .dictionary: isRelationshipShaped = false
        case .optional, .other: return true
        }
        guard let context else { return false }
        var markers: [(LocalStoreFixIt, AttributeSyntax)] = []
        if isRelationshipShaped {
            markers.append((.addRelationship, "@Relationship(inverse: <#name#>, deleteRule: .nullify)"))
        }
        markers.append((.addCodableStorage, "@Attribute(storage: .codable)"))
        markers.append((.addTransient, "@Transient"))
        let fixIts = markers.map { message, marker in
            FixIt.replace(message, property.decl, with: marking(property.decl, with: marker, replacing: attribute))
        }
        context.report(.noDefaultStorage(macro: "@\(macro)", name: property.name, type: type.trimmedDescription),
                       at: type, fixIts: fixIts)
        return false
    }

    /// `declaration` with `marker` in place of `existing`, or in front of its attributes.
    private static func marking(
        _ declaration: VariableDeclSyntax, with marker: AttributeSyntax, replacing existing: AttributeSyntax?
    ) -> VariableDeclSyntax {
        var attributes = declaration.attributes
        if let existing, let index = attributes.firstIndex(where: { $0.as(AttributeSyntax.self) == existing }) {
            attributes[index] = .attribute(marker.with(\.leadingTrivia, existing.leadingTrivia)
                .with(\.trailingTrivia, existing.trailingTrivia))
            return declaration.with(\.attributes, attributes)
        }
        let leadingTrivia = declaration.leadingTrivia
        attributes.insert(.attribute(marker.with(\.trailingTrivia, .space)), at: attributes.startIndex)
        return declaration.with(\.leadingTrivia, []).with(\.attributes, attributes).with(\.leadingTrivia, leadingTrivia)
    }

    /// Reports `decodeFailure: .debugAssertNil` on a property that cannot be `nil`, and offers
    /// `.fallbackToDefaultValue`, what such a property gets instead.
    private static func reportNilPolicyOnNonOptional(in node: AttributeSyntax, property: StoredProperty, context: some MacroExpansionContext) {
        guard let argument = node.argumentList.first(where: { $0.label?.text == "decodeFailure" }),
              let policy = argument.expression.as(MemberAccessExprSyntax.self), policy.declName.baseName.text == "debugAssertNil" else { return }
        if let type = property.type, TypeShape(type).isOptional { return }
        let replacement = policy.with(\.declName, policy.declName.with(\.baseName, .identifier("fallbackToDefaultValue")))
        context.report(.nilPolicyOnNonOptional(name: property.name), at: policy,
                       fixIts: [.replace(.rename(".fallbackToDefaultValue"), policy, with: replacement)])
    }

    /// Warns about `@Attribute(storageMethod:)`, the deprecated spelling of `storage:`, and
    /// offers the rename; `AttributeArguments` reads both labels, so the code is the same.
    private static func reportDeprecatedStorageLabel(in node: AttributeSyntax, context: some MacroExpansionContext) {
        guard let argument = node.argumentList.first(where: { $0.label?.text == "storageMethod" }),
              let label = argument.label else { return }
        context.report(.deprecatedSpelling(macro: "@Attribute", old: "storageMethod:", new: "storage:"), at: label,
                       fixIts: [.replace(.rename("storage:"), label, with: label.with(\.tokenKind, .identifier("storage")))])
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
    var decodeFailure: ExprSyntax?
    /// The `merge:` policy expression, e.g. `.counter` or `.custom(TagSet.self)`.
    var merge: ExprSyntax?

    init(_ attribute: AttributeSyntax?) {
        guard let attribute else { return }
        for argument in attribute.argumentList {
            switch argument.label?.text {
            case nil: options.append(argument.expression.trimmed)
            case "storage", "storageMethod":
                storage = argument.expression.as(MemberAccessExprSyntax.self)?.declName.baseName.text ?? "default"
            case "persistentName": persistentName = argument.expression.trimmed
            case "originalName": originalName = argument.expression.trimmed
            case "decodeFailure": decodeFailure = argument.expression.trimmed
            case "merge": merge = argument.expression.trimmed
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
        if let decodeFailure { text += ", decodeFailure: \(decodeFailure.trimmedDescription)" }
        if let merge { text += ", merge: \(merge.trimmedDescription)" }
        return text
    }
}

import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Relationship`: turns a stored property of an `@Entity` class into a relationship.
///
/// The type decides the kind: `T?` is to-one, `Set<T>` to-many and `[T]` ordered to-many.
/// The getter registers the read with Swift Observation and first loads the members if they are
/// still in the store; the setter goes through the object graph, which keeps the inverse on the
/// other side up to date and tells the observers of both sides.
public struct RelationshipMacro: AccessorMacro, PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let (property, _) = validRelationship(declaration, attribute: node, context: nil) else { return [] }
        let name = property.name
        return [
            PropertyAnalysis.initAccessor(for: property),
            """
            get {
                LocalStore._$access(self, \\.\(raw: name))
                LocalStore._$willReadRelationship(self, \(literal: name))
                return _\(raw: name)
            }
            """,
            """
            set {
                LocalStore._$setRelationship(self, \(literal: name), to: newValue)
            }
            """,
        ]
    }

    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        reportDeprecatedLabels(in: node, context: context)
        guard let (property, _) = validRelationship(declaration, attribute: node, context: context),
              let type = property.type else { return [] }
        return [PropertyAnalysis.backingStorage(for: property, type: type)]
    }

    /// The property and its kind if it is a valid relationship; reports every problem when
    /// `context` is given.
    static func validRelationship(
        _ declaration: some DeclSyntaxProtocol, attribute: AttributeSyntax, context: (any MacroExpansionContext)?
    ) -> (StoredProperty, RelationshipKind)? {
        guard let property = PropertyAnalysis.storedVar(declaration, macro: MacroName.relationship, context: context) else {
            return nil
        }
        guard PropertyAnalysis.checkTypeAnnotation(property, macro: MacroName.relationship, context: context),
              let type = property.type else { return nil }
        let kind = checkType(property, type: type, context: context)
        let argumentsAreValid = checkArguments(property, attribute: attribute, context: context)
        guard let kind, argumentsAreValid else { return nil }
        return (property, kind)
    }

    /// The relationship kind of the property's type, or `nil` after reporting a wrong shape.
    private static func checkType(
        _ property: StoredProperty, type: TypeSyntax, context: (any MacroExpansionContext)?
    ) -> RelationshipKind? {
        let name = property.name
        switch TypeShape(type) {
        case .optional(let wrapped):
            switch TypeShape(wrapped) {
            case .set, .array:
                // `Set<T>?`: drop the `?`, and give the collection its empty default.
                let value = property.initializer?.value
                let keptDefault = value.flatMap { $0.is(NilLiteralExprSyntax.self) ? nil : $0.trimmedDescription }
                let fixed = PropertyAnalysis.withInitializer(property.binding, keptDefault ?? "[]", type: wrapped)
                context?.report(.optionalToMany(name: name), at: type,
                                fixIts: [.replace(.removeOptional, property.binding, with: fixed)])
                return nil
            default:
                return .toOne(target: wrapped.trimmed)
            }
        case .set(let element), .array(let element):
            if property.initializer == nil {
                context?.report(.toManyMissingDefault(name: name), at: property.binding,
                                fixIts: [.replace(.addDefault("[]"), property.binding,
                                                  with: PropertyAnalysis.withInitializer(property.binding, "[]"))])
                return nil
            }
            if case .set = TypeShape(type) { return .toMany(target: element.trimmed) }
            return .ordered(target: element.trimmed)
        case .other:
            let optional = OptionalTypeSyntax(wrappedType: type.trimmed)
                .with(\.leadingTrivia, type.leadingTrivia).with(\.trailingTrivia, type.trailingTrivia)
            context?.report(.toOneNotOptional(name: name), at: type,
                            fixIts: [.replace(.makeOptional, type, with: optional)])
            return nil
        case .dictionary:
            context?.report(.unsupportedRelationshipType(name: name), at: type)
            return nil
        }
    }

    /// Whether `inverse:` and `deleteRule:` are present and supported; reports what is not.
    private static func checkArguments(
        _ property: StoredProperty, attribute: AttributeSyntax, context: (any MacroExpansionContext)?
    ) -> Bool {
        let arguments = RelationshipArguments(attribute)
        var isValid = true
        if arguments.inverse == nil {
            context?.report(.missingInverse(name: property.name), at: attribute)
            isValid = false
        }
        if let rule = arguments.deleteRule {
            if rule.as(MemberAccessExprSyntax.self)?.declName.baseName.text == "noAction" {
                let nullify: ExprSyntax = ".nullify"
                context?.report(.noActionDeleteRule(name: property.name), at: rule,
                                fixIts: [.replace(.useNullify, rule, with: nullify.with(\.leadingTrivia, rule.leadingTrivia)
                                    .with(\.trailingTrivia, rule.trailingTrivia))])
                isValid = false
            }
        } else {
            context?.report(.missingDeleteRule(name: property.name), at: attribute,
                            fixIts: [.replace(.addNullifyRule, attribute, with: addingNullifyRule(to: attribute))])
            isValid = false
        }
        return isValid
    }

    /// Warns about `minimumModelCount:`/`maximumModelCount:`, the deprecated spellings of
    /// `minCount:`/`maxCount:`, and offers the rename; `RelationshipArguments` reads both.
    private static func reportDeprecatedLabels(in node: AttributeSyntax, context: some MacroExpansionContext) {
        for argument in node.argumentList {
            guard let label = argument.label, let new = RelationshipArguments.renamedLabels[label.text] else { continue }
            context.report(.deprecatedSpelling(macro: "@Relationship", old: "\(label.text):", new: "\(new):"), at: label,
                           fixIts: [.replace(.rename("\(new):"), label, with: label.with(\.tokenKind, .identifier(new)))])
        }
    }

    /// `attribute` with `deleteRule: .nullify` appended to its arguments.
    private static func addingNullifyRule(to attribute: AttributeSyntax) -> AttributeSyntax {
        var list = attribute.argumentList
        if let last = list.last {
            list = list.with(\.[list.index(before: list.endIndex)], last.with(\.trailingComma, .commaToken(trailingTrivia: .space)))
        }
        list.append(LabeledExprSyntax(label: "deleteRule", expression: ExprSyntax(".nullify")))
        return attribute
            .with(\.leftParen, .leftParenToken())
            .with(\.arguments, .argumentList(list))
            .with(\.rightParen, .rightParenToken(trailingTrivia: attribute.trailingTrivia))
            .with(\.attributeName, attribute.attributeName.with(\.trailingTrivia, []))
    }
}

/// What a relationship's type makes it, with the entity type it points to.
enum RelationshipKind {
    case toOne(target: TypeSyntax)
    case toMany(target: TypeSyntax)
    case ordered(target: TypeSyntax)
}

/// The arguments of one `@Relationship(...)`.
struct RelationshipArguments {
    var inverse: ExprSyntax?
    var deleteRule: ExprSyntax?
    var minCount: ExprSyntax?
    var maxCount: ExprSyntax?
    var persistentName: ExprSyntax?
    var originalName: ExprSyntax?

    /// The deprecated argument labels, with the labels that replace them.
    static let renamedLabels = ["minimumModelCount": "minCount", "maximumModelCount": "maxCount"]

    init(_ attribute: AttributeSyntax?) {
        guard let attribute else { return }
        // An explicit `nil` means the same as leaving the argument out.
        for argument in attribute.argumentList where !argument.expression.is(NilLiteralExprSyntax.self) {
            let label = argument.label.map { Self.renamedLabels[$0.text] ?? $0.text }
            switch label {
            case "inverse": inverse = argument.expression
            case "deleteRule": deleteRule = argument.expression
            case "minCount": minCount = argument.expression
            case "maxCount": maxCount = argument.expression
            case "persistentName": persistentName = argument.expression
            case "originalName": originalName = argument.expression
            default: break
            }
        }
    }

    /// The trailing arguments of the `.relationship(...)` builder call, each starting with `, `.
    var trailingArguments: String {
        var text = ""
        if let inverse { text += ", inverse: \(inverse.trimmedDescription)" }
        if let deleteRule { text += ", deleteRule: \(deleteRule.trimmedDescription)" }
        if let minCount { text += ", minCount: \(minCount.trimmedDescription)" }
        if let maxCount { text += ", maxCount: \(maxCount.trimmedDescription)" }
        if let persistentName { text += ", persistentName: \(persistentName.trimmedDescription)" }
        if let originalName { text += ", originalName: \(originalName.trimmedDescription)" }
        return text
    }
}

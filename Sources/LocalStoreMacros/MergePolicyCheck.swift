import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// Checks `@Attribute(merge:)` against the property's type, as far as syntax shows it.
///
/// A macro sees no types, so the checks go by the names written: `.counter` needs one of the
/// integer types, `.max` and `.min` refuse types whose stored form does not order like their
/// values (`Bool`, `Data`, `Decimal` as text, `URL`, `.codable` JSON), and `.custom(T.self)` must
/// name the property's own type (its conformance to `MergeableValue` is left to the type checker,
/// which reports it on the generated schema entry).
enum MergePolicyCheck {
    static let integerTypes: Set<String> = ["Int", "Int64", "Int32", "Int16", "Int8", "Swift.Int", "Swift.Int64", "Swift.Int32", "Swift.Int16"]
    static let unorderedTypes: Set<String> = ["Bool", "Data", "Decimal", "URL", "Foundation.Data", "Foundation.Decimal", "Foundation.URL"]

    static func report(in node: AttributeSyntax, property: StoredProperty, type: TypeSyntax, context: some MacroExpansionContext) {
        guard let argument = node.argumentList.first(where: { $0.label?.text == "merge" }) else { return }
        let expression = argument.expression
        let typeName = type.trimmedDescription
        let storage = AttributeArguments(node).storage
        let removal = [FixIt.replace(.removeMergePolicy, node, with: removingMerge(from: node))]
        if let member = expression.as(MemberAccessExprSyntax.self) {
            let policy = member.declName.baseName.text
            switch policy {
            case "counter" where !integerTypes.contains(typeName) || storage != "default":
                var fixIts = removal
                if let written = property.type, storage == "default" {
                    let asInt = TypeSyntax(IdentifierTypeSyntax(name: .identifier("Int")))
                        .with(\.leadingTrivia, written.leadingTrivia).with(\.trailingTrivia, written.trailingTrivia)
                    fixIts.insert(.replace(.rename("Int"), written, with: asInt), at: 0)
                }
                context.report(.mergePolicyNeedsType(policy: policy, name: property.name, type: typeName,
                                                     requirement: "a non-optional integer type (Int, Int64, Int32, Int16, Int8) with default storage"),
                               at: expression, fixIts: fixIts)
            case "max", "min":
                var base = typeName
                if base.hasSuffix("?") { base.removeLast() }
                guard unorderedTypes.contains(base) || storage == "codable" else { return }
                context.report(.mergePolicyNeedsType(policy: policy, name: property.name, type: typeName,
                                                     requirement: "a type whose stored values order like its values (numbers, strings, dates)"),
                               at: expression, fixIts: removal)
            default:
                return
            }
            return
        }
        guard let call = expression.as(FunctionCallExprSyntax.self),
              call.calledExpression.as(MemberAccessExprSyntax.self)?.declName.baseName.text == "custom",
              let metatype = call.arguments.first?.expression.as(MemberAccessExprSyntax.self),
              metatype.declName.baseName.text == "self", let base = metatype.base else { return }
        let mergeType = base.trimmedDescription
        var declared = typeName
        if declared.hasSuffix("?") { declared.removeLast() }
        guard mergeType != declared else { return }
        let replacement = metatype.with(\.base, ExprSyntax(DeclReferenceExprSyntax(baseName: .identifier(declared))))
        context.report(.customMergeTypeMismatch(name: property.name, type: typeName, mergeType: mergeType), at: expression,
                       fixIts: [.replace(.rename(".custom(\(declared).self)"), metatype, with: replacement)])
    }

    /// `node` without its `merge:` argument.
    private static func removingMerge(from node: AttributeSyntax) -> AttributeSyntax {
        var kept = Array(node.argumentList.filter { $0.label?.text != "merge" })
        if let last = kept.indices.last { kept[last] = kept[last].with(\.trailingComma, nil) }
        return node.with(\.arguments, .argumentList(LabeledExprListSyntax(kept)))
    }
}

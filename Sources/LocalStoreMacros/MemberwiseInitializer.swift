import SwiftSyntax
import SwiftSyntaxMacros

/// The memberwise initializer `@Entity(generateInit: true)` adds.
///
/// It takes every stored attribute and relationship in declaration order, each defaulting to
/// the property's default value (`nil` for an optional without one), so `Person()` still
/// works; `@Transient` properties and properties the macros reported are left out. The body
/// assigns through the generated accessors, as a hand-written initializer would, so setting a
/// relationship also updates its inverse.
enum MemberwiseInitializer {
    /// One parameter of the initializer.
    struct Parameter {
        let name: String
        let type: TypeSyntax
        let defaultValue: String
    }

    /// Whether the attribute is `@Entity(generateInit: true)`.
    static func isRequested(by node: AttributeSyntax) -> Bool {
        node.argumentList.contains { argument in
            argument.label?.text == "generateInit"
                && argument.expression.as(BooleanLiteralExprSyntax.self)?.literal.tokenKind == .keyword(.true)
        }
    }

    /// The initializer for `classDecl`, or `nil` when it has no stored property to take.
    static func declaration(for classDecl: ClassDeclSyntax, access: String) -> DeclSyntax? {
        let parameters = self.parameters(of: classDecl)
        guard !parameters.isEmpty else { return nil }
        let list = parameters.map { "\($0.name): \($0.type.trimmedDescription) = \($0.defaultValue)" }
        let assignments = parameters.map { "    self.\($0.name) = \($0.name)\n" }.joined()
        let header = "\(access)init(\(list.joined(separator: ", ")))"
        return "\(raw: header) {\n\(raw: assignments)}"
    }

    /// The stored attributes and relationships of the class, in declaration order.
    static func parameters(of classDecl: ClassDeclSyntax) -> [Parameter] {
        classDecl.memberBlock.members.compactMap { member -> Parameter? in
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { return nil }
            let property: StoredProperty?
            let type: TypeSyntax?
            switch variable.explicitRole {
            case .transient:
                return nil
            case .relationship:
                guard let attribute = variable.attribute(named: MacroName.relationship) else { return nil }
                property = RelationshipMacro.validRelationship(variable, attribute: attribute, context: nil)?.0
                type = property?.type
            case .attribute, nil:
                guard variable.explicitRole != nil || EntityMacro.isImplicitAttribute(variable) else { return nil }
                property = AttributeMacro.validProperty(variable, context: nil)
                type = property?.resolvedType
            }
            guard let property, let type else { return nil }
            // Every valid property has a default value except optionals, which default to `nil`.
            let defaultValue = property.initializer?.value.trimmedDescription ?? "nil"
            return Parameter(name: property.name, type: type, defaultValue: defaultValue)
        }
    }
}

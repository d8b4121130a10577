import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Entity`: makes a final class a persistent entity.
///
/// - The member-attribute role adds `@Attribute` to every stored `var` that has no
///   `@Attribute`, `@Relationship` or `@Transient`.
/// - The member role adds the per-object state, the materializing initializer, an empty
///   `init()` when the class declares none, and the `addTo…`/`removeFrom…`/`insertInto…`
///   helpers of to-many relationships.
/// - The extension role adds the `PersistentEntity` conformance and the schema `_$entity`.
///
/// Problems with the class itself are reported once, by the member role; the other roles then
/// generate nothing so that no follow-up errors bury the real one. Problems with a property are
/// reported by the property's own macro, and the schema leaves that property out.
public struct EntityMacro: MemberMacro, MemberAttributeMacro, ExtensionMacro {
    /// The expansions are written already formatted: automatic formatting would spread each
    /// one-line `get:`/`set:` closure of the schema over three lines.
    public static var formatMode: FormatMode { .disabled }

    // MARK: Member attributes

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard validClass(declaration, context: nil) != nil,
              let variable = member.as(VariableDeclSyntax.self),
              variable.explicitRole == nil, isImplicitAttribute(variable),
              AttributeMacro.validProperty(variable, context: nil) != nil else { return [] }
        return ["@Attribute"]
    }

    /// Whether `variable` is a plain stored `var` that becomes an attribute without being marked.
    static func isImplicitAttribute(_ variable: VariableDeclSyntax) -> Bool {
        !variable.isStatic && !variable.isLet && !variable.isComputed && !variable.hasObservers
            && !variable.hasModifier(.lazy) && variable.bindings.count == 1
            && variable.storedProperty?.name != "_$entityState"
    }

    // MARK: Members

    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let classDecl = validClass(declaration, context: context) else { return [] }
        reportUnmarkedProblems(in: classDecl, context: context)
        UniqueMacro.checkKeys(in: classDecl, attributes: attributeNames(of: classDecl),
                              relationships: Set(relationships(of: classDecl).map(\.0.name)), context: context)
        let access = accessPrefix(of: classDecl)
        var members: [DeclSyntax] = [
            "\(raw: access)let _$entityState = LocalStore.EntityState()",
            "\(raw: access)init(_$materializing _: LocalStore.MaterializingToken) {}",
        ]
        // The memberwise initializer, whose parameters all have defaults, also serves as `init()`.
        let memberwiseInit = MemberwiseInitializer.isRequested(by: node)
            ? MemberwiseInitializer.declaration(for: classDecl, access: access) : nil
        let declaresInit = classDecl.memberBlock.members.contains { $0.decl.is(InitializerDeclSyntax.self) }
        if let memberwiseInit {
            members.append(memberwiseInit)
        } else if !declaresInit {
            members.append("\(raw: access)init() {}")
        }
        for (property, kind) in relationships(of: classDecl) {
            let name = property.name
            let suffix = name.capitalizedFirst
            switch kind {
            case .toOne:
                continue
            case .toMany(let target), .ordered(let target):
                members.append("""
                    \(raw: access)func addTo\(raw: suffix)(_ member: \(target)) {
                        LocalStore._$addToRelationship(self, \(literal: name), member)
                    }
                    """)
                members.append("""
                    \(raw: access)func removeFrom\(raw: suffix)(_ member: \(target)) {
                        LocalStore._$removeFromRelationship(self, \(literal: name), member)
                    }
                    """)
                if case .ordered = kind {
                    members.append("""
                        \(raw: access)func insertInto\(raw: suffix)(_ member: \(target), at index: Int) {
                            LocalStore._$insertIntoRelationship(self, \(literal: name), member, at: index)
                        }
                        """)
                }
            }
        }
        return members
    }

    /// Reports the problems of stored properties without `@Attribute`/`@Relationship`/`@Transient`:
    /// `let`, several bindings, observers, `lazy`, a missing type or default value.
    private static func reportUnmarkedProblems(in classDecl: ClassDeclSyntax, context: some MacroExpansionContext) {
        for member in classDecl.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self), variable.explicitRole == nil,
                  !variable.isStatic, !variable.isComputed else { continue }
            if variable.bindings.count > 1 {
                context.report(.multipleBindings(macro: "@Entity"), at: variable.bindings)
            } else if variable.isLet {
                let specifier = variable.bindingSpecifier
                context.report(.letProperty(macro: "@Entity", name: variable.firstName), at: specifier,
                               fixIts: [.replace(.useVar, specifier, with: specifier.with(\.tokenKind, .keyword(.var)))])
            } else if variable.hasObservers {
                context.report(.propertyObservers(name: variable.firstName), at: variable)
            } else if variable.hasModifier(.lazy) {
                context.report(.lazyProperty(name: variable.firstName), at: variable)
            } else if variable.storedProperty?.name != "_$entityState" {
                // Missing type or default: reported here, on the declaration as written,
                // because such a property gets no `@Attribute` to report it.
                _ = AttributeMacro.validProperty(variable, macro: "Entity", context: context)
            }
        }
    }

    // MARK: Extension

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let classDecl = validClass(declaration, context: nil) else { return [] }
        let typeName = type.trimmedDescription
        var entries: [String] = []
        for member in classDecl.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            if let entry = schemaEntry(for: variable, typeName: typeName) { entries.append(entry) }
        }
        // The compiler passes no protocols when the class already conforms; the schema is still needed.
        let uniqueness = UniqueMacro.schemaArgument(for: classDecl, typeName: typeName, attributes: attributeNames(of: classDecl))
        let conformance = protocols.isEmpty ? "" : ": LocalStore.PersistentEntity"
        let list = entries.isEmpty ? "[]" : "[\n" + entries.map { "        \($0),\n" }.joined() + "    ]"
        let decl: DeclSyntax = """
            extension \(raw: typeName)\(raw: conformance) {
                \(raw: accessPrefix(of: classDecl))static let _$entity = LocalStore.EntityDescription(\(raw: typeName).self, name: \(literal: classDecl.name.text), \(raw: originalNameArgument(of: node))\(raw: uniqueness)properties: \(raw: list))
            }
            """
        return decl.as(ExtensionDeclSyntax.self).map { [$0] } ?? []
    }

    /// `originalName: <expression>, ` when `@Entity(originalName:)` gives one (not `nil`), else nothing.
    private static func originalNameArgument(of node: AttributeSyntax) -> String {
        guard let argument = node.argumentList.first(where: { $0.label?.text == "originalName" }),
              !argument.expression.is(NilLiteralExprSyntax.self) else { return "" }
        return "originalName: \(argument.expression.trimmedDescription), "
    }

    /// The `PropertyDescription` expression for one member, or `nil` if it is not stored or not valid.
    private static func schemaEntry(for variable: VariableDeclSyntax, typeName: String) -> String? {
        switch variable.explicitRole {
        case .transient:
            return nil
        case .relationship:
            guard let attribute = variable.attribute(named: MacroName.relationship),
                  let (property, kind) = RelationshipMacro.validRelationship(variable, attribute: attribute, context: nil)
            else { return nil }
            let name = property.name
            let access: String
            if case .toOne = kind {
                access = "set: { $0._\(name) = $1 }"
            } else {
                access = "modify: { $1(&$0._\(name)) }"
            }
            return ".relationship(\"\(name)\", keyPath: \\\(typeName).\(name), get: { $0._\(name) }, \(access)"
                + RelationshipArguments(attribute).trailingArguments + ")"
        case .attribute, nil:
            if variable.explicitRole == nil && !isImplicitAttribute(variable) { return nil }
            guard let property = AttributeMacro.validProperty(variable, context: nil) else { return nil }
            let arguments = AttributeArguments(variable.attribute(named: MacroName.attribute))
            let name = property.name
            return ".\(arguments.builder)(\"\(name)\", keyPath: \\\(typeName).\(name), get: { $0._\(name) }, set: { $0._\(name) = $1 }"
                + arguments.trailingArguments + ")"
        }
    }

    // MARK: Shared

    /// The class if `@Entity` can apply to it; reports why not when `context` is given.
    private static func validClass(_ declaration: some DeclGroupSyntax, context: (any MacroExpansionContext)?) -> ClassDeclSyntax? {
        guard let classDecl = declaration.as(ClassDeclSyntax.self) else {
            reportNotClass(declaration, context: context)
            return nil
        }
        guard classDecl.modifiers.contains(where: { $0.name.tokenKind == .keyword(.final) }) else {
            let keyword = classDecl.classKeyword
            context?.report(.entityNotFinal(name: classDecl.name.text), at: classDecl.name,
                            fixIts: [.replace(.insertFinal, keyword, with: keyword.replacedText("final class"))])
            return nil
        }
        guard EntityInheritance.checkNoSuperclass(classDecl, context: context) else { return nil }
        return classDecl
    }

    private static func reportNotClass(_ declaration: some DeclGroupSyntax, context: (any MacroExpansionContext)?) {
        guard let context else { return }
        let (kind, keyword) = declaration.kindAndKeyword
        guard let keyword else { return context.report(.entityNotClass(kind: kind), at: declaration) }
        // A struct becomes a final class by its keyword alone; the other kinds need more than a keyword.
        let fixIts: [FixIt] = kind == "struct" ? [.replace(.useFinalClass, keyword, with: keyword.replacedText("final class"))] : []
        context.report(.entityNotClass(kind: kind), at: keyword, fixIts: fixIts)
    }

    /// The names of the class's valid stored attributes (what `#Unique` keys may name).
    private static func attributeNames(of classDecl: ClassDeclSyntax) -> Set<String> {
        Set(classDecl.memberBlock.members.compactMap { member -> String? in
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { return nil }
            switch variable.explicitRole {
            case .attribute: break
            case nil: guard isImplicitAttribute(variable) else { return nil }
            case .relationship, .transient: return nil
            }
            return AttributeMacro.validProperty(variable, context: nil)?.name
        })
    }

    /// The valid relationships of the class, in declaration order.
    private static func relationships(of classDecl: ClassDeclSyntax) -> [(StoredProperty, RelationshipKind)] {
        classDecl.memberBlock.members.compactMap { member in
            guard let variable = member.decl.as(VariableDeclSyntax.self),
                  let attribute = variable.attribute(named: MacroName.relationship) else { return nil }
            return RelationshipMacro.validRelationship(variable, attribute: attribute, context: nil)
        }
    }

    /// `public ` for public and open classes, `package ` for package ones: generated members
    /// that satisfy `PersistentEntity` must be as visible as the class.
    static func accessPrefix(of decl: some DeclGroupSyntax) -> String {
        for modifier in decl.modifiers {
            switch modifier.name.tokenKind {
            case .keyword(.public), .keyword(.open): return "public "
            case .keyword(.package): return "package "
            default: continue
            }
        }
        return ""
    }
}

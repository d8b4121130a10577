import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `#Unique<Player>([\.first, \.last], [\.email])`: composite uniqueness keys of an `@Entity`.
///
/// Written inside the entity's body, as in SwiftData. It expands to
/// `static let _$uniquenessConstraints: [[String]]`, the keys' property names, which the schema
/// `@Entity` generates passes to `EntityDescription(uniquenessConstraints:)`.
///
/// The compiler checks that each key path exists (the macro's parameters are key paths of the
/// entity); this macro checks the shape of the keys, and `@Entity`, which sees the properties,
/// checks that each names a stored attribute rather than a relationship or a transient property.
public struct UniqueMacro: DeclarationMacro {
    /// The static member the expansion declares and `@Entity`'s schema reads.
    static let memberName = "_$uniquenessConstraints"

    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard context.lexicalContext.first?.is(ClassDeclSyntax.self) == true else {
            context.diagnose(Diagnostic(node: Syntax(node), message: UniqueDiagnostic.outsideEntity))
            return []
        }
        guard let keys = keys(of: node, context: context) else { return [] }
        let literal = "[" + keys.map { key in "[" + key.map { "\"\($0.name)\"" }.joined(separator: ", ") + "]" }.joined(separator: ", ") + "]"
        return ["static let \(raw: memberName): [[String]] = \(raw: literal)"]
    }

    /// One property named by a key path of a key, with the element that names it.
    struct KeyMember {
        let name: String
        let element: ArrayElementSyntax
    }

    /// The keys of a `#Unique` expansion, or `nil` after reporting why they cannot be read when
    /// `context` is given.
    static func keys(of node: some FreestandingMacroExpansionSyntax, context: (any MacroExpansionContext)?) -> [[KeyMember]]? {
        guard !node.arguments.isEmpty else {
            context?.diagnose(Diagnostic(node: Syntax(node), message: UniqueDiagnostic.noKeys))
            return nil
        }
        var keys: [[KeyMember]] = []
        var valid = true
        for argument in node.arguments {
            guard let array = argument.expression.as(ArrayExprSyntax.self) else {
                context?.diagnose(Diagnostic(node: Syntax(argument.expression), message: UniqueDiagnostic.keyNotArray))
                valid = false
                continue
            }
            guard !array.elements.isEmpty else {
                context?.diagnose(Diagnostic(node: Syntax(array), message: UniqueDiagnostic.emptyKey))
                valid = false
                continue
            }
            var key: [KeyMember] = []
            for element in array.elements {
                guard let name = propertyName(of: element.expression, context: context) else {
                    valid = false
                    continue
                }
                if key.contains(where: { $0.name == name }) {
                    context?.diagnose(Diagnostic(
                        node: Syntax(element), message: UniqueDiagnostic.repeatedProperty(name: name),
                        fixIts: [removal(of: element, from: array)]))
                    valid = false
                    continue
                }
                key.append(KeyMember(name: name, element: element))
            }
            keys.append(key)
        }
        return valid ? keys : nil
    }

    /// The property of a key path `\.name` or `\Entity.name`; reports other expressions.
    private static func propertyName(of expression: ExprSyntax, context: (any MacroExpansionContext)?) -> String? {
        guard let keyPath = expression.as(KeyPathExprSyntax.self) else {
            context?.diagnose(Diagnostic(node: Syntax(expression), message: UniqueDiagnostic.notKeyPath))
            return nil
        }
        let components = keyPath.components
        guard components.count == 1, let first = components.first,
              let property = first.component.as(KeyPathPropertyComponentSyntax.self),
              property.genericArgumentClause == nil else {
            var fixIts: [FixIt] = []
            if let first = components.first, first.component.is(KeyPathPropertyComponentSyntax.self), components.count > 1 {
                let shortened = keyPath.with(\.components, KeyPathComponentListSyntax([first]))
                fixIts.append(FixIt(message: LocalStoreFixIt(message: "Use '\(shortened.trimmedDescription)'", id: "keepFirstComponent"),
                                    changes: [.replace(oldNode: Syntax(keyPath), newNode: Syntax(shortened))]))
            }
            context?.diagnose(Diagnostic(node: Syntax(keyPath), message: UniqueDiagnostic.notSingleProperty(keyPath.trimmedDescription), fixIts: fixIts))
            return nil
        }
        return property.declName.baseName.text
    }

    /// A fix-it that removes `element` from the key `array`, keeping the commas right.
    static func removal(of element: ArrayElementSyntax, from array: ArrayExprSyntax) -> FixIt {
        var elements = Array(array.elements.filter { $0.id != element.id })
        if let last = elements.indices.last { elements[last] = elements[last].with(\.trailingComma, nil) }
        let shortened = array.with(\.elements, ArrayElementListSyntax(elements))
        return FixIt(message: LocalStoreFixIt(message: "Remove '\(element.expression.trimmedDescription)' from the key", id: "removeFromKey"),
                     changes: [.replace(oldNode: Syntax(array), newNode: Syntax(shortened))])
    }

    // MARK: Checks made by @Entity

    /// The `#Unique` declarations in an entity's body.
    static func declarations(in classDecl: ClassDeclSyntax) -> [MacroExpansionDeclSyntax] {
        classDecl.memberBlock.members.compactMap { member in
            guard let expansion = member.decl.as(MacroExpansionDeclSyntax.self), expansion.macroName.text == "Unique" else { return nil }
            return expansion
        }
    }

    /// Reports, for `@Entity`, key paths that do not name a stored attribute of the class, and a
    /// second `#Unique` (all keys go in one, as in SwiftData).
    ///
    /// - Parameters:
    ///   - attributes: The names of the class's stored attributes.
    ///   - relationships: The names of its relationships.
    static func checkKeys(in classDecl: ClassDeclSyntax, attributes: Set<String>, relationships: Set<String>, context: some MacroExpansionContext) {
        let declarations = declarations(in: classDecl)
        for extra in declarations.dropFirst() {
            context.diagnose(Diagnostic(node: Syntax(extra), message: UniqueDiagnostic.repeatedMacro))
        }
        guard let declaration = declarations.first, let keys = keys(of: declaration, context: nil) else { return }
        for key in keys {
            for member in key where !attributes.contains(member.name) {
                let message: UniqueDiagnostic = relationships.contains(member.name)
                    ? .relationshipInKey(name: member.name) : .notAnAttribute(name: member.name, entity: classDecl.name.text)
                let fixIts = key.count > 1 ? member.element.parent?.parent?.as(ArrayExprSyntax.self).map { [removal(of: member.element, from: $0)] } ?? [] : []
                context.diagnose(Diagnostic(node: Syntax(member.element.expression), message: message, fixIts: fixIts))
            }
        }
    }

    /// The `uniquenessConstraints:` argument of the schema when the class declares a valid
    /// `#Unique` (one whose keys name only `attributes`); otherwise nothing, so that a reported
    /// problem is not followed by a missing-member error.
    static func schemaArgument(for classDecl: ClassDeclSyntax, typeName: String, attributes: Set<String>) -> String {
        guard let declaration = declarations(in: classDecl).first, let keys = keys(of: declaration, context: nil),
              keys.allSatisfy({ $0.allSatisfy { attributes.contains($0.name) } }) else { return "" }
        return "uniquenessConstraints: \(typeName).\(memberName), "
    }
}

/// The diagnostics of `#Unique`; each names the macro.
enum UniqueDiagnostic: DiagnosticMessage {
    case outsideEntity
    case noKeys
    case keyNotArray
    case emptyKey
    case notKeyPath
    case notSingleProperty(String)
    case repeatedProperty(name: String)
    case repeatedMacro
    case relationshipInKey(name: String)
    case notAnAttribute(name: String, entity: String)

    var message: String {
        switch self {
        case .outsideEntity:
            return "#Unique must be written inside the body of an @Entity class"
        case .noKeys:
            return "#Unique needs at least one key, e.g. #Unique<Player>([\\.first, \\.last])"
        case .keyNotArray:
            return "#Unique takes each key as an array literal of key paths, e.g. [\\.first, \\.last]"
        case .emptyKey:
            return "#Unique key is empty; list the properties whose values together must be unique"
        case .notKeyPath:
            return "#Unique keys must list key paths such as \\.email"
        case .notSingleProperty(let keyPath):
            return "#Unique key path '\(keyPath)' must name one stored property of the entity itself"
        case .repeatedProperty(let name):
            return "#Unique key lists '\(name)' twice"
        case .repeatedMacro:
            return "#Unique may appear once per entity; list every key in it: #Unique<T>([...], [...])"
        case .relationshipInKey(let name):
            return "#Unique cannot use relationship '\(name)'; keys are made of stored attributes"
        case .notAnAttribute(let name, let entity):
            return "#Unique names '\(name)', which is not a stored attribute of \(entity) (transient, computed or static)"
        }
    }

    var severity: DiagnosticSeverity { .error }

    var diagnosticID: MessageID {
        // The case name without its values: stable across message wording.
        MessageID(domain: "LocalStoreMacros", id: "unique." + String(describing: self).prefix { $0 != "(" })
    }
}

import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// Every diagnostic the LocalStore macros report.
///
/// Each message names the macro that reports it, so a user who sees it in a build log
/// knows which attribute to look at. Problems are errors, because a declaration the macros
/// cannot understand would only fail later with a worse message; the one warning is for a
/// deprecated spelling, which generates the same code as its replacement.
enum LocalStoreDiagnostic: DiagnosticMessage {
    case entityNotClass(kind: String)
    case entityNotFinal(name: String)
    case entitySuperclass(name: String, superclass: String)
    case noDefaultStorage(macro: String, name: String, type: String)
    case deprecatedSpelling(macro: String, old: String, new: String)
    case notStoredProperty(macro: String)
    case multipleBindings(macro: String)
    case letProperty(macro: String, name: String)
    case missingTypeAnnotation(macro: String, name: String)
    case missingDefaultValue(macro: String, name: String)
    case propertyObservers(name: String)
    case lazyProperty(name: String)
    case toOneNotOptional(name: String)
    case optionalToMany(name: String)
    case unsupportedRelationshipType(name: String)
    case missingInverse(name: String)
    case missingDeleteRule(name: String)
    case noActionDeleteRule(name: String)
    case toManyMissingDefault(name: String)
    case conflictingMacros(name: String)
    case compositionNotStruct(kind: String)
    case nilPolicyOnNonOptional(name: String)
    case mergePolicyNeedsType(policy: String, name: String, type: String, requirement: String)
    case customMergeTypeMismatch(name: String, type: String, mergeType: String)

    var message: String {
        switch self {
        case .entityNotClass(let kind):
            return "@Entity can only be applied to a class, not to \(article(kind)) \(kind)"
        case .entityNotFinal(let name):
            return "@Entity requires a final class; declare '\(name)' as 'final class' (entity inheritance is not supported)"
        case .entitySuperclass(let name, let superclass):
            return "@Entity classes cannot inherit from a superclass; '\(name)' inherits from '\(superclass)'."
                + " If '\(superclass)' is a protocol, declare the conformance in an extension of '\(name)'"
        case .noDefaultStorage(let macro, let name, let type):
            return "\(macro) cannot store property '\(name)' of collection type '\(type)' as a column;"
                + " mark it @Relationship if it holds entities, @Attribute(storage: .codable) to store it as JSON,"
                + " or @Transient to leave it out of the store"
        case .deprecatedSpelling(let macro, let old, let new):
            return "\(macro): '\(old)' is deprecated; use '\(new)'"
        case .notStoredProperty(let macro):
            return "\(macro) can only be applied to a stored 'var' property"
        case .multipleBindings(let macro):
            return "\(macro) does not support declaring several properties in one 'var'; declare each on its own line"
        case .letProperty(let macro, let name):
            return "\(macro) requires 'var' for stored property '\(name)'; 'let' properties cannot be loaded from the store"
        case .missingTypeAnnotation(let macro, let name):
            return "\(macro) requires an explicit type annotation on '\(name)'"
        case .missingDefaultValue(let macro, let name):
            return "\(macro) requires a default value for non-optional property '\(name)'"
        case .propertyObservers(let name):
            return "@Entity does not support 'willSet'/'didSet' on stored property '\(name)'; use a computed property or mark it @Transient"
        case .lazyProperty(let name):
            return "@Entity does not support 'lazy' property '\(name)' unless it is marked @Transient"
        case .toOneNotOptional(let name):
            return "@Relationship to-one property '\(name)' must be optional"
        case .optionalToMany(let name):
            return "@Relationship to-many property '\(name)' must not be optional; an empty collection means no members"
        case .unsupportedRelationshipType(let name):
            return "@Relationship property '\(name)' must have a type of the form 'T?', 'Set<T>' or '[T]'"
        case .missingInverse(let name):
            return "@Relationship property '\(name)' must name its inverse with 'inverse:'"
        case .missingDeleteRule(let name):
            return "@Relationship property '\(name)' must declare a 'deleteRule:'"
        case .noActionDeleteRule(let name):
            return "@Relationship property '\(name)' cannot use deleteRule .noAction: it would leave dangling references in the store"
        case .toManyMissingDefault(let name):
            return "@Relationship to-many property '\(name)' requires a default value"
        case .conflictingMacros(let name):
            return "@Attribute, @Relationship and @Transient are mutually exclusive on property '\(name)'"
        case .compositionNotStruct(let kind):
            return "@Composition can only be applied to a struct, not to \(article(kind)) \(kind)"
        case .nilPolicyOnNonOptional(let name):
            return "@Attribute(decodeFailure: .debugAssertNil) needs an optional property, and '\(name)' cannot be nil; use .fallbackToDefaultValue"
        case .mergePolicyNeedsType(let policy, let name, let type, let requirement):
            return "@Attribute(merge: .\(policy)) needs \(requirement); '\(name)' is '\(type)'"
        case .customMergeTypeMismatch(let name, let type, let mergeType):
            return "@Attribute(merge: .custom(\(mergeType).self)) must name the property's own type; '\(name)' is '\(type)'"
        }
    }

    private func article(_ kind: String) -> String {
        kind.first.map { "aeiou".contains($0) } == true ? "an" : "a"
    }

    var severity: DiagnosticSeverity {
        if case .deprecatedSpelling = self { return .warning }
        return .error
    }

    var diagnosticID: MessageID {
        let id: String
        switch self {
        case .entityNotClass: id = "entityNotClass"
        case .entityNotFinal: id = "entityNotFinal"
        case .entitySuperclass: id = "entitySuperclass"
        case .noDefaultStorage: id = "noDefaultStorage"
        case .deprecatedSpelling: id = "deprecatedSpelling"
        case .notStoredProperty: id = "notStoredProperty"
        case .multipleBindings: id = "multipleBindings"
        case .letProperty: id = "letProperty"
        case .missingTypeAnnotation: id = "missingTypeAnnotation"
        case .missingDefaultValue: id = "missingDefaultValue"
        case .propertyObservers: id = "propertyObservers"
        case .lazyProperty: id = "lazyProperty"
        case .toOneNotOptional: id = "toOneNotOptional"
        case .optionalToMany: id = "optionalToMany"
        case .unsupportedRelationshipType: id = "unsupportedRelationshipType"
        case .missingInverse: id = "missingInverse"
        case .missingDeleteRule: id = "missingDeleteRule"
        case .noActionDeleteRule: id = "noActionDeleteRule"
        case .toManyMissingDefault: id = "toManyMissingDefault"
        case .conflictingMacros: id = "conflictingMacros"
        case .compositionNotStruct: id = "compositionNotStruct"
        case .nilPolicyOnNonOptional: id = "nilPolicyOnNonOptional"
        case .mergePolicyNeedsType: id = "mergePolicyNeedsType"
        case .customMergeTypeMismatch: id = "customMergeTypeMismatch"
        }
        return MessageID(domain: "LocalStoreMacros", id: id)
    }
}

/// The fix-its the LocalStore macros offer alongside their errors.
struct LocalStoreFixIt: FixItMessage {
    let message: String
    let id: String

    var fixItID: MessageID { MessageID(domain: "LocalStoreMacros", id: id) }

    static let useFinalClass = LocalStoreFixIt(message: "Use 'final class'", id: "useFinalClass")
    static let insertFinal = LocalStoreFixIt(message: "Add 'final'", id: "insertFinal")
    static let useVar = LocalStoreFixIt(message: "Replace 'let' with 'var'", id: "useVar")
    static let useStruct = LocalStoreFixIt(message: "Use 'struct'", id: "useStruct")
    static let makeOptional = LocalStoreFixIt(message: "Make the type optional", id: "makeOptional")
    static let removeOptional = LocalStoreFixIt(message: "Remove '?'", id: "removeOptional")
    static let addNullifyRule = LocalStoreFixIt(message: "Add 'deleteRule: .nullify'", id: "addNullifyRule")
    static let useNullify = LocalStoreFixIt(message: "Use '.nullify'", id: "useNullify")

    static let addRelationship = LocalStoreFixIt(
        message: "Add '@Relationship(inverse: <#name#>, deleteRule: .nullify)'", id: "addRelationship")
    static let addCodableStorage = LocalStoreFixIt(message: "Add '@Attribute(storage: .codable)'", id: "addCodableStorage")
    static let addTransient = LocalStoreFixIt(message: "Add '@Transient'", id: "addTransient")
    static let removeMergePolicy = LocalStoreFixIt(message: "Remove the merge policy", id: "removeMergePolicy")
    static let addTypePlaceholder = LocalStoreFixIt(message: "Add a type annotation", id: "addTypePlaceholder")

    static func removeSuperclass(_ name: String) -> LocalStoreFixIt {
        LocalStoreFixIt(message: "Remove superclass '\(name)'", id: "removeSuperclass")
    }

    static func rename(_ new: String) -> LocalStoreFixIt {
        LocalStoreFixIt(message: "Use '\(new)'", id: "rename")
    }

    static func addType(_ type: String) -> LocalStoreFixIt {
        LocalStoreFixIt(message: "Add type annotation ': \(type)'", id: "addType")
    }

    static func addDefault(_ value: String) -> LocalStoreFixIt {
        LocalStoreFixIt(message: "Add default value '= \(value)'", id: "addDefault")
    }
}

extension MacroExpansionContext {
    /// Reports `message` at `node`, with the given single-change fix-its.
    func report(_ message: LocalStoreDiagnostic, at node: some SyntaxProtocol, fixIts: [FixIt] = []) {
        diagnose(Diagnostic(node: Syntax(node), message: message, fixIts: fixIts))
    }
}

extension DeclGroupSyntax {
    /// What kind of declaration this is (`class`, `struct`, `enum`, `actor`, `protocol` or
    /// `extension`) and the keyword that says so (none for an extension: the whole declaration
    /// is where a diagnostic about its kind points).
    var kindAndKeyword: (kind: String, keyword: TokenSyntax?) {
        if let declaration = self.as(ClassDeclSyntax.self) { return ("class", declaration.classKeyword) }
        if let declaration = self.as(StructDeclSyntax.self) { return ("struct", declaration.structKeyword) }
        if let declaration = self.as(EnumDeclSyntax.self) { return ("enum", declaration.enumKeyword) }
        if let declaration = self.as(ActorDeclSyntax.self) { return ("actor", declaration.actorKeyword) }
        if let declaration = self.as(ProtocolDeclSyntax.self) { return ("protocol", declaration.protocolKeyword) }
        return ("extension", nil)
    }
}

extension FixIt {
    /// A fix-it that replaces `old` with `new`.
    static func replace(_ message: LocalStoreFixIt, _ old: some SyntaxProtocol, with new: some SyntaxProtocol) -> FixIt {
        FixIt(message: message, changes: [.replace(oldNode: Syntax(old), newNode: Syntax(new))])
    }
}

extension TokenSyntax {
    /// A token that prints as `text` in place of this one, keeping its trivia.
    ///
    /// Used for fix-its that turn one keyword into two (`class` into `final class`), which a
    /// single keyword token cannot express.
    func replacedText(_ text: String) -> TokenSyntax {
        TokenSyntax(.identifier(text), leadingTrivia: leadingTrivia, trailingTrivia: trailingTrivia, presence: .present)
    }
}

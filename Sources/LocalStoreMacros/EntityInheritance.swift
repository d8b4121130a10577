import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// The check that an `@Entity` class has no superclass.
///
/// The generated members (`_$entityState`, `init(_$materializing:)`, `init()`) and the
/// `PersistentEntity` conformance would collide with a superclass's, and the store has no
/// notion of entity inheritance. Syntax alone cannot tell a class from a protocol, so the
/// check relies on Swift's rule that a superclass must come first in the inheritance clause,
/// and takes the first inherited type to be a superclass unless it is a protocol the macro
/// recognises: one of the standard library's, Foundation's or LocalStore's, or a name spelled
/// like a protocol (`…able`, `…ible`, `…Protocol`, `…Convertible`, `…Representable`, …).
/// A class that lists a protocol of its own first declares that conformance in an extension
/// instead, as the message says.
enum EntityInheritance {
    /// Protocols often listed first on a model class whose names do not end like a protocol.
    static let knownProtocols: Set<String> = [
        "AnyObject", "Error", "Sendable", "SendableMetatype", "PersistentEntity", "Observable", "ObservableObject",
        "Sequence", "Collection", "CustomReflectable", "CustomPlaygroundDisplayConvertible",
    ]

    /// Name endings of protocols, from the standard library's naming conventions.
    static let protocolSuffixes = ["able", "ible", "Protocol", "Convertible", "Representable", "Providing", "Delegate"]

    /// The first inherited type when it names a superclass; reports it when `context` is given.
    static func checkNoSuperclass(_ classDecl: ClassDeclSyntax, context: (any MacroExpansionContext)?) -> Bool {
        guard let clause = classDecl.inheritanceClause, let first = clause.inheritedTypes.first,
              let name = className(first.type) else { return true }
        context?.report(.entitySuperclass(name: classDecl.name.text, superclass: name), at: first.type,
                        fixIts: [removingFirstInheritedType(of: classDecl, clause: clause, name: name)])
        return false
    }

    /// The spelled name of `type` if it may be a class, `nil` if it is surely a protocol.
    private static func className(_ type: TypeSyntax) -> String? {
        let name: String
        if let identifier = type.as(IdentifierTypeSyntax.self) {
            name = identifier.name.text
        } else if let member = type.as(MemberTypeSyntax.self) {
            name = member.name.text
        } else {
            // `A & B`, `@unchecked Sendable`, `~Copyable`, `any P`: never a superclass.
            return nil
        }
        if knownProtocols.contains(name) || protocolSuffixes.contains(where: name.hasSuffix) { return nil }
        return type.trimmedDescription
    }

    /// The fix-it that drops the superclass: the whole clause when it is the only entry.
    private static func removingFirstInheritedType(
        of classDecl: ClassDeclSyntax, clause: InheritanceClauseSyntax, name: String
    ) -> FixIt {
        let rest = clause.inheritedTypes.dropFirst()
        guard let next = rest.first else {
            let fixed = classDecl.with(\.inheritanceClause, nil)
                .with(\.name, classDecl.name.with(\.trailingTrivia, clause.trailingTrivia))
            return .replace(.removeSuperclass(name), classDecl, with: fixed)
        }
        var types = InheritedTypeListSyntax(Array(rest))
        types[types.startIndex] = next.with(\.leadingTrivia, clause.inheritedTypes.first?.leadingTrivia ?? [])
        return .replace(.removeSuperclass(name), clause, with: clause.with(\.inheritedTypes, types))
    }
}

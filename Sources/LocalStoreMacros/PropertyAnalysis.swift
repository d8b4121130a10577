import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// The syntactic shape of a property type, which decides what kind of relationship it is.
///
/// The macros see only syntax, so `Optional<T>` and `T?` are recognised by spelling, and so
/// are `Set<T>`, `[T]` and `Array<T>`. A type alias hides the shape.
enum TypeShape {
    /// `T?`, `T!` or `Optional<T>`: to-one.
    case optional(wrapped: TypeSyntax)
    /// `Set<T>`: unordered to-many.
    case set(element: TypeSyntax)
    /// `[T]` or `Array<T>`: ordered to-many.
    case array(element: TypeSyntax)
    /// `[K: V]` or `Dictionary<K, V>`.
    case dictionary
    /// Anything else.
    case other

    init(_ type: TypeSyntax) {
        if let optional = type.as(OptionalTypeSyntax.self) {
            self = .optional(wrapped: optional.wrappedType)
        } else if let implicit = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            self = .optional(wrapped: implicit.wrappedType)
        } else if let array = type.as(ArrayTypeSyntax.self) {
            self = .array(element: array.element)
        } else if type.is(DictionaryTypeSyntax.self) {
            self = .dictionary
        } else if let (name, arguments) = Self.genericName(type) {
            switch (name, arguments.count) {
            case ("Optional", 1): self = .optional(wrapped: arguments[0])
            case ("Set", 1): self = .set(element: arguments[0])
            case ("Array", 1): self = .array(element: arguments[0])
            case ("Dictionary", 2): self = .dictionary
            default: self = .other
            }
        } else {
            self = .other
        }
    }

    /// The base name and generic arguments of `Name<Args>` or `Swift.Name<Args>`.
    private static func genericName(_ type: TypeSyntax) -> (String, [TypeSyntax])? {
        let name: String
        let clause: GenericArgumentClauseSyntax?
        if let identifier = type.as(IdentifierTypeSyntax.self) {
            (name, clause) = (identifier.name.text, identifier.genericArgumentClause)
        } else if let member = type.as(MemberTypeSyntax.self), member.baseType.trimmedDescription == "Swift" {
            (name, clause) = (member.name.text, member.genericArgumentClause)
        } else {
            return nil
        }
        guard let clause else { return nil }
        let arguments = clause.arguments.compactMap { TypeSyntax($0.argument.trimmed) }
        return (name, arguments)
    }

    var isOptional: Bool {
        if case .optional = self { return true }
        return false
    }
}

/// What kind of stored property a declaration in an `@Entity` class is.
enum PropertyRole {
    case attribute
    case relationship
    case transient
}

/// One analysed stored property: a single-binding `var` with a plain name.
struct StoredProperty {
    let decl: VariableDeclSyntax
    let binding: PatternBindingSyntax
    let name: String
    let type: TypeSyntax?
    let initializer: InitializerClauseSyntax?

    /// The type with its trivia stripped, if written.
    var trimmedType: TypeSyntax? { type?.trimmed }

    /// The type of the literal default value of an unannotated property: `String` for `= ""`.
    var literalType: TypeSyntax? {
        guard type == nil, let value = initializer?.value, let name = PropertyAnalysis.literalType(of: value) else {
            return nil
        }
        return TypeSyntax(IdentifierTypeSyntax(name: .identifier(name)))
    }

    /// The written type, or the type of the literal default when none is written.
    var resolvedType: TypeSyntax? { type?.trimmed ?? literalType }
}

/// The names of the macros that mark a property's role.
enum MacroName {
    static let attribute = "Attribute"
    static let relationship = "Relationship"
    static let transient = "Transient"
    /// The deprecated spelling of `@Transient`, accepted so that existing models keep compiling.
    static let ignore = "Ignore"
    static let roles = [attribute, relationship, transient]

    /// The macro `name` stands for: `Transient` for the deprecated `Ignore`, otherwise `name`.
    static func canonical(_ name: String) -> String {
        name == ignore ? transient : name
    }
}

extension AttributeSyntax {
    /// The macro's name without a module qualifier: `Attribute` for `@LocalStore.Attribute(...)`.
    var simpleName: String {
        if let member = attributeName.as(MemberTypeSyntax.self) { return member.name.text }
        return attributeName.trimmedDescription
    }

    /// The labelled arguments of the attribute, in order.
    var argumentList: LabeledExprListSyntax {
        if case .argumentList(let list) = arguments { return list }
        return []
    }
}

extension VariableDeclSyntax {
    /// The attribute named `name` (ignoring a module qualifier), if the declaration has one.
    func attribute(named name: String) -> AttributeSyntax? {
        for element in attributes {
            if case .attribute(let attribute) = element, MacroName.canonical(attribute.simpleName) == name {
                return attribute
            }
        }
        return nil
    }

    /// The role the property's attributes give it; `nil` when it has none of them.
    var explicitRole: PropertyRole? {
        if attribute(named: MacroName.relationship) != nil { return .relationship }
        if attribute(named: MacroName.transient) != nil { return .transient }
        if attribute(named: MacroName.attribute) != nil { return .attribute }
        return nil
    }

    /// How many of @Attribute, @Relationship and @Transient the declaration carries.
    var roleAttributeCount: Int {
        MacroName.roles.filter { attribute(named: $0) != nil }.count
    }

    func hasModifier(_ keyword: Keyword) -> Bool {
        modifiers.contains { $0.name.tokenKind == .keyword(keyword) }
    }

    var isStatic: Bool { hasModifier(.static) || hasModifier(.class) }
    var isLet: Bool { bindingSpecifier.tokenKind == .keyword(.let) }

    /// Whether any binding has `get`/`set` accessors or a getter body (a computed property).
    var isComputed: Bool {
        bindings.contains { binding in
            guard let block = binding.accessorBlock else { return false }
            switch block.accessors {
            case .getter: return true
            case .accessors(let accessors):
                return accessors.contains { accessor in
                    switch accessor.accessorSpecifier.tokenKind {
                    case .keyword(.willSet), .keyword(.didSet): return false
                    default: return true
                    }
                }
            }
        }
    }

    /// Whether any binding has `willSet`/`didSet` observers.
    var hasObservers: Bool {
        bindings.contains { $0.accessorBlock != nil } && !isComputed
    }

    /// The name of the first binding, for messages.
    var firstName: String {
        bindings.first?.pattern.as(IdentifierPatternSyntax.self)?.identifier.text ?? "property"
    }

    /// The single stored property this declares, without checking anything else.
    var storedProperty: StoredProperty? {
        guard bindings.count == 1, let binding = bindings.first,
              let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else { return nil }
        return StoredProperty(decl: self, binding: binding, name: identifier.identifier.text,
                              type: binding.typeAnnotation?.type, initializer: binding.initializer)
    }
}

/// Shared checks of the property macros.
enum PropertyAnalysis {
    /// Checks that `declaration` is a single stored `var` with a name, and returns it.
    /// `lenient` (for `@Transient`) also accepts `let` and property observers.
    ///
    /// Reports what is wrong when `context` is given; the macros' second role passes `nil`
    /// so that every problem is reported once.
    static func storedVar(
        _ declaration: some DeclSyntaxProtocol, macro: String, lenient: Bool = false,
        context: (any MacroExpansionContext)?
    ) -> StoredProperty? {
        guard let variable = declaration.as(VariableDeclSyntax.self), !variable.isStatic else {
            context?.report(.notStoredProperty(macro: "@\(macro)"), at: declaration)
            return nil
        }
        if variable.bindings.count > 1 {
            context?.report(.multipleBindings(macro: "@\(macro)"), at: variable.bindings)
            return nil
        }
        if variable.roleAttributeCount > 1 {
            // Each of the conflicting macros gets here; only the first one written reports it.
            let first = variable.attributes.lazy.compactMap { $0.as(AttributeSyntax.self).map { MacroName.canonical($0.simpleName) } }
                .first { MacroName.roles.contains($0) }
            if first == macro {
                context?.report(.conflictingMacros(name: variable.firstName), at: variable.attributes)
            }
            return nil
        }
        guard let property = variable.storedProperty, !variable.isComputed, lenient || !variable.hasObservers else {
            context?.report(.notStoredProperty(macro: "@\(macro)"), at: declaration)
            return nil
        }
        if variable.isLet && !lenient {
            context?.report(.letProperty(macro: "@\(macro)", name: property.name), at: variable.bindingSpecifier,
                            fixIts: [.replace(.useVar, variable.bindingSpecifier,
                                              with: variable.bindingSpecifier.with(\.tokenKind, .keyword(.var)))])
            return nil
        }
        return property
    }

    /// Reports a missing type annotation, offering the type of a literal initializer or a
    /// placeholder to fill in.
    ///
    /// With `acceptsLiteral` (attributes), a literal default such as `= ""`, `= 0`, `= -1.5` or
    /// `= false` stands for its type, as it does for any Swift property: the type is spelled
    /// out in the generated storage, so nothing needs reporting.
    static func checkTypeAnnotation(
        _ property: StoredProperty, macro: String, acceptsLiteral: Bool = false, context: (any MacroExpansionContext)?
    ) -> Bool {
        guard property.type == nil else { return true }
        if acceptsLiteral && property.literalType != nil { return true }
        let typeName = property.literalType.map { $0.trimmedDescription }
        let fixed = property.binding
            .with(\.pattern, property.binding.pattern.trimmed)
            .with(\.typeAnnotation, TypeAnnotationSyntax(
                colon: .colonToken(trailingTrivia: .space),
                type: TypeSyntax(IdentifierTypeSyntax(name: .identifier(typeName ?? "<#Type#>"), trailingTrivia: .space))))
        let fixIt = FixIt.replace(typeName.map { .addType($0) } ?? .addTypePlaceholder, property.binding, with: fixed)
        context?.report(.missingTypeAnnotation(macro: "@\(macro)", name: property.name), at: property.binding.pattern,
                        fixIts: [fixIt])
        return false
    }

    /// Reports a non-optional property without a default value, offering an obvious default.
    static func checkDefaultValue(_ property: StoredProperty, macro: String, context: (any MacroExpansionContext)?) -> Bool {
        guard property.initializer == nil, let type = property.type, !TypeShape(type).isOptional else { return true }
        var fixIts: [FixIt] = []
        if let value = obviousDefault(for: type) {
            fixIts.append(.replace(.addDefault(value), property.binding, with: withInitializer(property.binding, value)))
        }
        context?.report(.missingDefaultValue(macro: "@\(macro)", name: property.name), at: property.binding, fixIts: fixIts)
        return false
    }

    /// `binding` with `= value` appended (and an explicit type annotation kept as written).
    static func withInitializer(_ binding: PatternBindingSyntax, _ value: String, type: TypeSyntax? = nil) -> PatternBindingSyntax {
        var fixed = binding.trimmed
        if let type, let annotation = fixed.typeAnnotation {
            fixed.typeAnnotation = annotation.with(\.type, type.trimmed)
        }
        if let annotation = fixed.typeAnnotation {
            fixed.typeAnnotation = annotation.with(\.trailingTrivia, .space)
        }
        fixed.initializer = InitializerClauseSyntax(
            equal: .equalToken(trailingTrivia: .space), value: ExprSyntax(stringLiteral: value))
        return fixed
            .with(\.leadingTrivia, binding.leadingTrivia)
            .with(\.trailingTrivia, binding.trailingTrivia)
    }

    /// The type of a literal the user could have written without annotation.
    static func literalType(of expression: ExprSyntax) -> String? {
        if expression.is(StringLiteralExprSyntax.self) { return "String" }
        if expression.is(IntegerLiteralExprSyntax.self) { return "Int" }
        if expression.is(FloatLiteralExprSyntax.self) { return "Double" }
        if expression.is(BooleanLiteralExprSyntax.self) { return "Bool" }
        if let prefix = expression.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-" {
            return literalType(of: prefix.expression).flatMap { $0 == "Int" || $0 == "Double" ? $0 : nil }
        }
        return nil
    }

    /// A default value for types where one is obvious.
    static func obviousDefault(for type: TypeSyntax) -> String? {
        switch TypeShape(type) {
        case .array, .set: return "[]"
        case .dictionary: return "[:]"
        case .optional: return "nil"
        case .other: break
        }
        let spelled = type.trimmedDescription
        let name = spelled.hasPrefix("Swift.") ? String(spelled.dropFirst(6)) : spelled
        switch name {
        case "String": return "\"\""
        case "Bool": return "false"
        case "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64",
             "Double", "Float", "Float16", "CGFloat", "Decimal":
            return "0"
        default: return nil
        }
    }

    /// The peer that stores the value: `private var _name: Type = initializer`.
    static func backingStorage(for property: StoredProperty, type: TypeSyntax) -> DeclSyntax {
        let initializer: String
        if let value = property.initializer?.value {
            initializer = " = \(value.trimmedDescription)"
        } else if TypeShape(type).isOptional {
            initializer = " = nil"
        } else {
            initializer = ""
        }
        return "private var _\(raw: property.name): \(type.trimmed)\(raw: initializer)"
    }

    /// The `init` accessor that lets initializers assign the property before `self` is available.
    static func initAccessor(for property: StoredProperty) -> AccessorDeclSyntax {
        """
        @storageRestrictions(initializes: _\(raw: property.name))
        init(initialValue) {
            _\(raw: property.name) = initialValue
        }
        """
    }
}

extension String {
    /// The string with its first character upper-cased: `people` -> `People`.
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}

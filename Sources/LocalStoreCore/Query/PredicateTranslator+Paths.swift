import Foundation
import SQLiteDatabase

// Leaves and paths: the input variable, captured values, `nil`, key paths, `?.` and `!`.

extension PredicateExpressions.Variable: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        try translator.term(for: key)
    }
}

extension PredicateExpressions.Value: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        isNil(value) ? .null : .constant(value)
    }
}

extension PredicateExpressions.NilLiteral: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm { .null }
}

/// The collection properties `PredicateExpressions.KeyPath` recognises, independent of its generic parameters.
enum CollectionProperty {
    case count, isEmpty
}

extension PredicateExpressions.KeyPath: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        let property: CollectionProperty?
        switch kind {
        case .collectionCount?: property = .count
        case .collectionIsEmpty?: property = .isEmpty
        default: property = nil
        }
        return try translator.member(keyPath, property: property, of: translator.translate(root), expression: self)
    }
}

extension PredicateTranslator {
    /// The term for `base[keyPath: keyPath]`.
    func member(_ keyPath: AnyKeyPath, property: CollectionProperty?, of base: QueryTerm, expression: Any) throws -> QueryTerm {
        switch base {
        case .object(let object):
            return try member(keyPath, of: object)
        case .composition(let composition):
            guard let field = composition.attribute.compositionFields.first(where: { $0.keyPath == keyPath }) else {
                throw StoreError(.unsupportedQuery, "\(keyPath) is not a stored field of the composition \(composition.object.mapping.name).\(composition.attribute.name)",
                                 entity: root.name, attribute: composition.attribute.name)
            }
            return .value(ValueTerm(
                sql: SQLExpression(column(field.column.name, of: composition.object)),
                nullable: composition.nullable || field.column.isNullable,
                codec: .of(field, attribute: composition.attribute, entity: composition.object.mapping.name), isColumn: true))
        case .members(let members):
            guard let property else {
                throw StoreError(.unsupportedQuery, "\(keyPath) of the to-many relationship \(members.owner.mapping.name).\(members.relationship.description.name) cannot be translated; only count, isEmpty, contains(where:), allSatisfy and filter can",
                                 entity: root.name, relationship: members.relationship.description.name)
            }
            return try aggregate(property, of: members)
        case .value(let value):
            guard let property, value.codec.type == .string, value.codec.storage == .default else {
                throw StoreError(.unsupportedQuery, "\(keyPath) of \(value.codec.label) cannot be translated to SQL (of values, only String's count and isEmpty can; compare .raw enums by value, not rawValue)",
                                 entity: root.name)
            }
            switch property {
            case .isEmpty:
                return .value(ValueTerm(sql: value.sql.wrapped("(", " = '')"), nullable: value.nullable, codec: .generic(.bool, label: "isEmpty")))
            case .count:
                return .value(ValueTerm(sql: value.sql.wrapped("length(", ")"), nullable: value.nullable, codec: .generic(.int, label: "count")))
            }
        case .constant(let constant):
            // A path on a captured value is evaluated now, like Foundation would.
            guard let result = constant[keyPath: keyPath] else {
                throw unsupported(expression, "\(keyPath) does not apply to the captured \(type(of: constant))")
            }
            return isNil(result) ? .null : .constant(result)
        case .null:
            return .null
        case .range:
            throw unsupported(expression, "key paths on ranges are not supported")
        }
    }

    private func member(_ keyPath: AnyKeyPath, of object: ObjectTerm) throws -> QueryTerm {
        let entity = object.mapping.description
        if let attribute = entity.attribute(for: keyPath) {
            if attribute.storage == .composition {
                return .composition(CompositionTerm(object: object, attribute: attribute, nullable: object.nullable || attribute.isOptional))
            }
            let stored = attribute.columns[0]
            return .value(ValueTerm(
                sql: SQLExpression(column(stored.name, of: object)), nullable: object.nullable || stored.isNullable,
                codec: .of(attribute, entity: entity.name), isColumn: true))
        }
        if let relationship = object.mapping.relationships.first(where: { $0.description.keyPath == keyPath }) {
            guard let target = schema.entity(named: relationship.targetEntityName) else {
                throw StoreError(.unsupportedQuery, "\(entity.name).\(relationship.description.name) points to \(relationship.targetEntityName), which is not in the store",
                                 entity: entity.name, relationship: relationship.description.name)
            }
            if case .foreignKey(let column, _) = relationship.storage {
                return .object(ObjectTerm(mapping: target, scope: object.scope,
                                          source: .toOne(owner: object, relationship: relationship, column: column), nullable: true))
            }
            return .members(MembersTerm(owner: object, relationship: relationship, target: target))
        }
        if keyPath == objectIDKeyPath(entity.entityType) {
            return .value(ValueTerm(sql: SQLExpression(identity(of: object)), nullable: object.nullable,
                                    codec: .identifier(entity.name), isColumn: true))
        }
        throw StoreError(
            .unsupportedQuery,
            "\(keyPath) is not a stored attribute or relationship of \(entity.name); computed and transient properties have no column to query",
            entity: entity.name)
    }

    private func objectIDKeyPath(_ type: any PersistentEntity.Type) -> AnyKeyPath {
        func make<Entity: PersistentEntity>(_: Entity.Type) -> AnyKeyPath { \Entity.objectID }
        return make(type)
    }
}

extension PredicateExpressions.OptionalFlatMap: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        let base = try translator.translate(wrapped)
        let unwrapped: QueryTerm
        switch base {
        case .null:
            return .null
        case .constant(let constant):
            guard let value = (constant as? any OptionalValue)?.wrappedValue else { return .null }
            unwrapped = .constant(value)
        case .object(var object):
            object.nullable = false
            unwrapped = .object(object)
        case .composition(var composition):
            composition.nullable = false
            unwrapped = .composition(composition)
        case .value(var value):
            value.nullable = false
            unwrapped = .value(value)
        case .members, .range:
            throw translator.unsupported(self, "only optional attributes, compositions and to-one relationships can be unwrapped")
        }
        let result = try translator.with(variable.key, boundTo: unwrapped) { try translator.translate(transform) }
        return try translator.guardNil(of: base, unwrapped: unwrapped, result: result)
    }
}

extension PredicateTranslator {
    /// The result of `base.flatMap { result }`: `nil` when `base` is `nil`.
    func guardNil(of base: QueryTerm, unwrapped: QueryTerm, result: QueryTerm) throws -> QueryTerm {
        if case .constant = base { return result }
        switch result {
        case .null:
            return .null
        case .object(var object):
            // Reached through the unwrapped row: its foreign key is NULL when that row is missing.
            object.nullable = true
            return .object(object)
        case .composition(var composition):
            composition.nullable = true
            return .composition(composition)
        case .members:
            return result
        case .value(var value):
            // A column of the unwrapped row is already NULL when the row (or composition) is missing.
            if value.isColumn, let prefix = rowPrefix(of: unwrapped), value.sql.sql.hasPrefix(prefix) {
                value.nullable = true
                return .value(value)
            }
            let isNil = try isNilCondition(base)
            value.sql = SQLExpression.joined([isNil, value.sql], separator: " THEN NULL ELSE ").wrapped("(CASE WHEN ", " END)")
            value.nullable = true
            value.isColumn = false
            return .value(value)
        case .constant, .range:
            let value = try scalar(result, like: nil, in: "an optional's flatMap")
            return try guardNil(of: base, unwrapped: unwrapped, result: .value(value))
        }
    }

    private func rowPrefix(of term: QueryTerm) -> String? {
        switch term {
        case .object(let object): return alias(of: object) + "."
        case .composition(let composition): return alias(of: composition.object) + "."
        default: return nil
        }
    }
}

extension PredicateExpressions.ForcedUnwrap: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        // Where Swift's evaluate would throw on nil, SQL sees NULL and the row does not match.
        switch try translator.translate(inner) {
        case .object(var object):
            object.nullable = false
            return .object(object)
        case .composition(var composition):
            composition.nullable = false
            return .composition(composition)
        case .value(var value):
            value.nullable = false
            return .value(value)
        case .constant(let constant):
            guard let value = (constant as? any OptionalValue)?.wrappedValue else { return .null }
            return .constant(value)
        case let other:
            return other
        }
    }
}

import Foundation
import SQLiteDatabase

// To-many relationships: quantifiers become correlated subqueries on the members' table
// (or the join table of a many-to-many), so nothing is loaded into memory to test them.
// To-one paths are LEFT JOINs, added by `PredicateTranslator.alias(of:)`.

extension PredicateExpressions.SequenceContainsWhere: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        let members = try translator.members(translator.translate(sequence), for: self)
        return try translator.exists(members) { member in
            try translator.with(variable.key, boundTo: .object(member)) {
                try translator.condition(translator.translate(test), in: "contains(where:)")
            }
        }
    }
}

extension PredicateExpressions.SequenceAllSatisfy: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        let members = try translator.members(translator.translate(sequence), for: self)
        // Every member passes when no member fails.
        let failing = try translator.exists(members) { member in
            try translator.with(variable.key, boundTo: .object(member)) {
                try translator.condition(translator.translate(test), in: "allSatisfy").wrapped("(NOT ", ")")
            }
        }
        let sql = try translator.condition(failing, in: "allSatisfy").wrapped("(NOT ", ")")
        return .value(ValueTerm(sql: sql, nullable: false, codec: .generic(.bool, label: "allSatisfy")))
    }
}

extension PredicateExpressions.Filter: SQLTranslatable {
    func translate(in translator: PredicateTranslator) throws -> QueryTerm {
        var members = try translator.members(translator.translate(sequence), for: self)
        members.filters.append((variable: variable.key, test: filter))
        return .members(members)
    }
}

extension PredicateTranslator {
    func members(_ term: QueryTerm, for expression: Any) throws -> MembersTerm {
        guard case .members(let members) = term else {
            throw unsupported(expression, "it is supported on to-many relationships only")
        }
        return members
    }

    /// `EXISTS (SELECT 1 FROM members WHERE … AND condition(member))`.
    func exists(_ members: MembersTerm, where condition: ((ObjectTerm) throws -> SQLExpression)? = nil) throws -> QueryTerm {
        let query = try subquery(members, select: "1", where: condition)
        return .value(ValueTerm(sql: query.wrapped("EXISTS ", ""), nullable: false, codec: .generic(.bool, label: "contains")))
    }

    /// `isEmpty` and `count` of a to-many relationship.
    func aggregate(_ property: CollectionProperty, of members: MembersTerm) throws -> QueryTerm {
        switch property {
        case .isEmpty:
            let query = try subquery(members, select: "1", where: nil)
            return .value(ValueTerm(sql: query.wrapped("(NOT EXISTS ", ")"), nullable: false, codec: .generic(.bool, label: "isEmpty")))
        case .count:
            let query = try subquery(members, select: "COUNT(*)", where: nil)
            return .value(ValueTerm(sql: query, nullable: false, codec: .generic(.int, label: "count")))
        }
    }

    /// `(SELECT select FROM <members of the owner> WHERE <filters> AND condition)`, with its own
    /// FROM clause so to-one paths of the members join inside the subquery.
    private func subquery(_ members: MembersTerm, select: String, where condition: ((ObjectTerm) throws -> SQLExpression)?) throws -> SQLExpression {
        let ownerID = identity(of: members.owner)
        let scope = QueryScope()
        let memberAlias = makeAlias()
        let member = ObjectTerm(mapping: members.target, scope: scope, source: .alias(memberAlias), nullable: false)
        let from: String
        var conditions: [SQLExpression]
        switch members.relationship.storage {
        case .inverseForeignKey(let table, let column, _):
            from = "\(quotedName(table)) AS \(memberAlias)"
            conditions = [SQLExpression("\(memberAlias).\(quotedName(column)) = \(ownerID)")]
        case .joinTable(let table, let ownerColumn, let memberColumn, _):
            let link = makeAlias()
            from = "\(quotedName(table)) AS \(link) JOIN \(quotedName(members.target.table)) AS \(memberAlias) ON \(memberAlias).\(EntityTable.quotedIdentifierColumn) = \(link).\(quotedName(memberColumn))"
            conditions = [SQLExpression("\(link).\(quotedName(ownerColumn)) = \(ownerID)")]
        case .foreignKey:
            throw StoreError(.unsupportedQuery, "\(members.owner.mapping.name).\(members.relationship.description.name) is a to-one relationship",
                             entity: root.name, relationship: members.relationship.description.name)
        }
        for filter in members.filters {
            conditions.append(try with(filter.variable, boundTo: .object(member)) {
                try self.condition(translate(filter.test), in: "filter")
            })
        }
        if let condition { conditions.append(try condition(member)) }
        // The member's joins are known only now that every condition has been translated.
        return SQLExpression.joined(conditions, separator: " AND ")
            .wrapped("(SELECT \(select) FROM \(from)\(scope.joinClause) WHERE ", ")")
    }
}

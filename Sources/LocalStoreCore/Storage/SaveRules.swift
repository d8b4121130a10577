import Codecs
import Foundation
import SQLiteDatabase

/// The rules a save enforces on relationships, stated on the schema alone: `minCount`/`maxCount`
/// and the `.cascade`/`.deny` delete rules. Uniqueness (`.unique`, `#Unique`) is
/// ``UniqueKey/checkNoOtherObject(entity:table:objectID:values:connection:)``.
///
/// An ``ObjectContext`` save and an edit made without the app's Swift types (the `sync` CLI's
/// record editor) both go through these functions, so they refuse the same changes with the
/// same ``StoreError`` codes and messages. Callers supply what they know best: a context reads
/// its object graph, which includes unsaved changes; the record editor reads the stored rows
/// through ``EntityTable``.
package enum SaveRules {
    // MARK: Counts

    /// Throws ``StoreError/Code/countViolation`` when `count`, the number of members
    /// `relationship` of `objectID` has after the save, is below `minCount` or above `maxCount`.
    package static func checkCount(
        _ count: Int, entity: String, relationship: String, minCount: Int?, maxCount: Int?, of objectID: UUID
    ) throws(StoreError) {
        let problem: String
        if let minCount, count < minCount {
            problem = "has \(count) member(s), fewer than its minCount \(minCount)"
        } else if let maxCount, count > maxCount {
            problem = "has \(count) member(s), more than its maxCount \(maxCount)"
        } else {
            return
        }
        throw StoreError(.countViolation, "\(entity).\(relationship) of \(objectID.uuidString) \(problem)",
                         entity: entity, relationship: relationship, objectID: objectID)
    }

    // MARK: Delete rules

    /// One relationship of an object about to be deleted, as the delete rules see it.
    package struct DeletedRelationship<Node> {
        /// The relationship's name.
        package var name: String
        /// Its delete rule.
        package var rule: DeleteRule
        /// Reads its members; called only for `.cascade` and `.deny` relationships.
        package var members: () throws -> [Node]

        /// A relationship named `name` with delete rule `rule`, whose members `members` reads.
        package init(name: String, rule: DeleteRule, members: @escaping () throws -> [Node]) {
            self.name = name
            self.rule = rule
            self.members = members
        }
    }

    /// What deleting some objects deletes.
    package struct DeletePlan<Node: Hashable> {
        /// The deleted objects: the ones asked for, then what `.cascade` rules reach, in the
        /// order they were reached.
        package var deleted: [Node]
        /// For each deleted object, the object asked for whose deletion it follows from.
        package var roots: [Node: Node]
    }

    /// Follows `.cascade` rules from `requested` transitively, then refuses the whole delete with
    /// ``StoreError/Code/deleteDenied`` when a `.deny` relationship of any deleted object still
    /// holds an object that is not deleted too.
    ///
    /// - Parameters:
    ///   - relationships: the relationships of an object, with their rules and members.
    ///   - identity: the entity name and identifier of an object, for the error.
    package static func planDeletes<Node: Hashable>(
        _ requested: [Node],
        relationships: (Node) throws -> [DeletedRelationship<Node>],
        identity: (Node) -> (entity: String, id: UUID)
    ) throws -> DeletePlan<Node> {
        var deleted: [Node] = []
        var roots: [Node: Node] = [:]
        for node in requested where roots[node] == nil {
            roots[node] = node
            deleted.append(node)
        }
        var position = 0
        while position < deleted.count {
            let node = deleted[position]
            position += 1
            for relationship in try relationships(node) where relationship.rule == .cascade {
                for member in try relationship.members() where roots[member] == nil {
                    roots[member] = roots[node]
                    deleted.append(member)
                }
            }
        }
        for node in deleted {
            for relationship in try relationships(node) where relationship.rule == .deny {
                let survivors = try relationship.members().filter { roots[$0] == nil }
                // The example is the survivor with the smallest identifier, so the message does not
                // depend on the order a caller reads members in.
                guard let example = survivors.map(identity).min(by: { $0.id.precedesInStorageOrder($1.id) }) else { continue }
                let (entity, id) = identity(node)
                throw StoreError(
                    .deleteDenied,
                    "cannot delete \(entity) \(id.uuidString): its relationship '\(relationship.name)' (delete rule deny) still holds \(survivors.count) object(s), e.g. \(example.entity) \(example.id.uuidString)",
                    entity: entity, relationship: relationship.name, objectID: id)
            }
        }
        return DeletePlan(deleted: deleted, roots: roots)
    }
}

import Foundation

/// An object as merging names it.
struct ObjectKey: Hashable, Comparable, Sendable {
    var entity: String
    var id: UUID

    static func < (lhs: ObjectKey, rhs: ObjectKey) -> Bool {
        lhs.entity != rhs.entity ? lhs.entity < rhs.entity : lhs.id.precedesInStorageOrder(rhs.id)
    }

    // The identifier alone: it is random, so objects of different entities rarely share one, and
    // hashing the entity name too cost as much again on every lookup of a merge. Equality still
    // compares both.
    func hash(into hasher: inout Hasher) {
        hasher.combine(id)
    }
}

import Foundation

/// A delete root: the change set that deleted, and the object the deletion started at.
/// Cascaded deletes share their root; voiding a root voids them all.
struct DeleteRoot: Hashable, Comparable, Sendable {
    var dot: Dot
    var root: UUID

    static func < (lhs: DeleteRoot, rhs: DeleteRoot) -> Bool {
        lhs.dot != rhs.dot ? lhs.dot < rhs.dot : lhs.root.precedesInStorageOrder(rhs.root)
    }
}

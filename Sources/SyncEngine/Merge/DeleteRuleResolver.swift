/// The delete rules for one delete root (CONTRACT.md §3.6): what the root deletes by cascade,
/// whether a deny rule voids it, and which references it drops, decided from the objects it
/// deletes explicitly, what its change set had seen and the edges around them. It writes nothing
/// and reads the graph only through ``Graph``: ``MergeEngine`` gives it the edges in force
/// (`MergeEngine+Edges.swift`), records the outcome and judges every touched root again until
/// nothing changes (`MergeEngine+Deletes.swift`).
///
/// The rules, for the references the deleter had not seen (every reference, for an object the
/// cascade deletes):
/// - **cascade** deletes the object at the other end too, with the same root;
/// - **deny** voids the whole root once any such reference was added, even if it was removed
///   since: the void depends only on which change sets exist, so it never comes undone when more
///   arrive;
/// - **nullify** (and no action) drops the reference: it no longer shows, as an edge to a deleted
///   object never does, and the drop is journaled. It is judged against the whole cascade, so the
///   order the edges are walked in cannot matter.
///
/// An object the deleter had seen deleted explicitly, by a delete still in force, is out of the
/// graph the root is judged on: the root neither cascades into it, nor is refused by its
/// references, nor drops them. The deleter knew it gone, so nothing it refers to was overlooked;
/// and a compacted store forgets such an object with its edges once its delete is settled, so
/// judging the root as if it were there would make the outcome depend on whether a store
/// compacted. It returns only if that delete is voided, which re-judges its neighbours' roots.
struct DeleteRuleResolver {
    /// The graph around the deleted objects, as the rules read it.
    protocol Graph {
        /// The relationships of `entity`, or none if the schema does not have it.
        func relationships(of entity: String) -> [SyncSchema.Relationship]
        /// The objects at the other end of `object`'s live edges through `relationship`, with the
        /// stamp of each edge's addition.
        func incidentEdges(of object: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> [(other: ObjectKey, added: Stamp)]
        /// The same, for every edge ever added, removed since or not.
        func everyEdge(of object: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> [(other: ObjectKey, added: Stamp)]
        /// The roots of the deletes in force (not void) that delete `object` explicitly.
        func explicitDeletesInForce(of object: ObjectKey) throws -> [DeleteRoot]
    }

    /// A reference from a deleted object through one of its relationships.
    struct Reference {
        /// The deleted object.
        var object: ObjectKey
        /// Its relationship, whose delete rule judges the reference.
        var relationship: SyncSchema.Relationship
        /// The object at the other end.
        var other: ObjectKey
        /// The stamp of the change set that added the edge.
        var added: Stamp
    }

    /// What the rules make of the root.
    struct Outcome {
        /// The objects the root deletes by cascade, assuming it stands.
        var implicit: Set<ObjectKey> = []
        /// The reference whose deny rule voids the root, if one does.
        var denial: Reference?
        /// The references a standing root drops (nullify, no action), to objects it does not
        /// delete, in the order the cascade met them. Empty when the root is void.
        var dropped: [Reference] = []
    }

    /// The root judged.
    var root: DeleteRoot
    /// The objects the root's change set deleted explicitly.
    var explicit: Set<ObjectKey>
    /// What the root's change set had seen.
    var deleterVector: VersionVector

    /// Whether the deleter had seen a delete other than the root's, still in force, delete `object` explicitly.
    private func isKnownGone(_ object: ObjectKey, on graph: some Graph) throws -> Bool {
        try graph.explicitDeletesInForce(of: object).contains { $0 != root && deleterVector.covers($0.dot) }
    }

    /// Judges the root on `graph`.
    func judge(on graph: some Graph) throws -> Outcome {
        var outcome = Outcome()
        var deleted = explicit
        var queue = explicit.sorted()
        var judged: [Reference] = []
        var index = 0
        while index < queue.count {
            let object = queue[index]
            index += 1
            for relationship in graph.relationships(of: object.entity) {
                for (other, added) in try graph.incidentEdges(of: object, relationship).sorted(by: { $0.other < $1.other }) {
                    if explicit.contains(object) && deleterVector.covers(added.dot) { continue }
                    if try isKnownGone(other, on: graph) { continue }
                    judged.append(Reference(object: object, relationship: relationship, other: other, added: added))
                    if relationship.deleteRule == .cascade && deleted.insert(other).inserted {
                        outcome.implicit.insert(other)
                        queue.append(other)
                    }
                }
            }
        }
        for object in deleted.sorted() {
            for relationship in graph.relationships(of: object.entity) where relationship.deleteRule == .deny {
                // Objects deleted by cascade were never judged by the deleter: their current references count too.
                let current = explicit.contains(object) ? [] : Set(try graph.incidentEdges(of: object, relationship).map(\.added))
                for (other, added) in try graph.everyEdge(of: object, relationship) where !deleted.contains(other) {
                    if deleterVector.covers(added.dot) && !current.contains(added) { continue }
                    if try isKnownGone(other, on: graph) { continue }
                    outcome.denial = Reference(object: object, relationship: relationship, other: other, added: added)
                    return outcome
                }
            }
        }
        outcome.dropped = judged.filter { reference in
            guard !deleted.contains(reference.other) else { return false }
            switch reference.relationship.deleteRule {
            case .nullify, .noAction: return true
            case .deny, .cascade: return false
            }
        }
        return outcome
    }
}

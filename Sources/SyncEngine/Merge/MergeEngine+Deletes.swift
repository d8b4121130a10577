import Codecs
import Foundation
import LocalStoreCore

extension MergeEngine {
    /// Applies the delete rules to references added concurrently with a delete, for every delete
    /// root the batch touched, until nothing changes:
    ///
    /// - an edge to a deleted object that the deleter had not seen is dropped (**nullify**: it
    ///   simply no longer shows, as an edge to a deleted object never does),
    /// - or deletes the object at its other end too, with the same root (**cascade**),
    /// - or voids the whole root: every delete it caused is undone (**deny**).
    ///
    /// Voiding only ever grows the set of voided roots, and each root's cascade is computed from
    /// the edges alone, so the result does not depend on the order change sets arrived in.
    func resolveDeletes() throws {
        guard !toMaterialize.touchedRoots.isEmpty else { return }
        let voidedBefore = mirror.voided
        // Judge every touched root afresh: a void decided while some change set was still missing
        // (say, the delete of the object whose reference voided it) may no longer hold. Starting
        // from no voids and only ever adding them reaches the least fixed point, which is unique.
        var reconsidered: Set<DeleteRoot> = []
        var changed = true
        var rounds = 0
        while changed {
            changed = false
            rounds += 1
            guard rounds <= 64 + 2 * toMaterialize.touchedRoots.count else {
                throw SyncError(.notSyncable, "delete rules did not settle after \(rounds) rounds")
            }
            for root in toMaterialize.touchedRoots.sorted() where reconsidered.insert(root).inserted {
                changed = true
                if mirror.voided.contains(root) { try setVoided(root, false) }
            }
            for root in toMaterialize.touchedRoots.sorted() where reconsidered.contains(root) && !mirror.voided.contains(root) {
                let outcome = try cascade(of: root)
                if let denial = outcome.denial {
                    // A void root keeps its cascade records (they delete nothing while it is void),
                    // so a later change around those objects still leads back to it.
                    try setVoided(root, true)
                    _ = try replaceImplicitDeletes(of: root, with: outcome.implicit)
                    if !voidedBefore.contains(root) { try journalVoided(root, deniedBy: denial) }
                    changed = true
                } else if try replaceImplicitDeletes(of: root, with: outcome.implicit) {
                    changed = true
                }
            }
        }
    }

    /// What `root` deletes, assuming it stands, and whether a deny rule refuses it, by
    /// ``DeleteRuleResolver``; journals the references a standing root drops.
    private func cascade(of root: DeleteRoot) throws -> DeleteRuleResolver.Outcome {
        let resolver = DeleteRuleResolver(root: root, explicit: Set(try DeleteTable.objects(deletedBy: root, .explicit, on: connection)),
                                          deleterVector: try vector(of: root.dot))
        let outcome = try resolver.judge(on: self)
        for reference in outcome.dropped where try isAlive(reference.other, ignoring: root) {
            try journalDroppedReference(from: reference.other, to: reference.object, relationship: reference.relationship, added: reference.added, root: root)
        }
        return outcome
    }

    /// Makes the cascade deletes recorded for `root` exactly `implicit`; returns whether anything changed.
    private func replaceImplicitDeletes(of root: DeleteRoot, with implicit: Set<ObjectKey>) throws -> Bool {
        let stored = Set(try DeleteTable.objects(deletedBy: root, .implicit, on: connection))
        guard stored != implicit else { return false }
        for object in stored.subtracting(implicit).sorted() {
            try DeleteTable.removeImplicit(object, root: root, on: connection)
            try markChanged(object)
        }
        for object in implicit.subtracting(stored).sorted() {
            objects[object]?.mayBeDeleted = true
            try DeleteTable.insert(object, root: root, implicit: true, on: connection)
            try markChanged(object)
            guard !mirror.voided.contains(root) else { continue }
            try journal(
                .cascadedDelete, entity: object.entity, object: object.id, property: nil, winner: side(nil, Stamp(hlc: try hlc(of: root.dot), replica: root.dot.replica, seq: root.dot.seq)),
                loser: side(nil, try info(object)?.creation ?? Stamp(hlc: HLC(rawValue: 0), replica: root.dot.replica, seq: 0)),
                cause: root.dot, detail: "\(object.entity) \(object.id) referred to an object deleted concurrently (delete rule cascade) and was deleted too")
        }
        return true
    }

    /// Voids (or reinstates) every delete of `root` and the unlinks it made; what they touch is rewritten.
    private func setVoided(_ root: DeleteRoot, _ isVoid: Bool) throws {
        if isVoid {
            mirror.voided.insert(root)
        } else {
            mirror.voided.remove(root)
        }
        try VoidedDeleteTable.setVoided(root, isVoid, on: connection)
        for object in try DeleteTable.objects(deletedBy: root, .any, on: connection) {
            try markChanged(object)
        }
        for edge in try EdgeTable.edges(removedBy: root, on: connection) {
            guard let relationship = schema.entity(edge.source.entity)?.relationship(edge.relationship) else { continue }
            try markChanged(edge.source)
            try markChanged(ObjectKey(entity: relationship.target, id: edge.target))
        }
    }

    private func journalVoided(_ root: DeleteRoot, deniedBy denial: DeleteRuleResolver.Reference) throws {
        let rootEntity = try DeleteTable.rootEntity(of: root, on: connection) ?? ""
        let reason = "\(denial.object.entity).\(denial.relationship.name) (delete rule deny) gained \(denial.other.entity) \(denial.other.id) concurrently"
        try journal(
            .voidedDelete, entity: rootEntity, object: root.root, property: denial.relationship.name, winner: nil,
            loser: side(nil, Stamp(hlc: try hlc(of: root.dot), replica: root.dot.replica, seq: root.dot.seq)),
            cause: root.dot, detail: "the delete of \(rootEntity) \(root.root) is void: \(reason)")
    }

    private func journalDroppedReference(from other: ObjectKey, to deleted: ObjectKey, relationship: SyncSchema.Relationship, added: Stamp, root: DeleteRoot) throws {
        let property = relationship.inverse
        let loserValue = "\"\(deleted.id.storageText)\""
        let loser = side(loserValue, added)
        let seen = try journalEntries(causedBy: root.dot).contains {
            $0.kind == .referenceDropped && $0.entity == other.entity && $0.objectID == other.id && $0.property == property
                && $0.loser == ConflictEntry.Side(value: .string(deleted.id.storageText), dot: added.dot, hlc: added.hlc)
        }
        guard !seen else { return }
        try journal(
            .referenceDropped, entity: other.entity, object: other.id, property: property,
            winner: side(nil, Stamp(hlc: try hlc(of: root.dot), replica: root.dot.replica, seq: root.dot.seq)), loser: loser, cause: root.dot,
            detail: "\(other.entity).\(property) gained \(deleted.entity) \(deleted.id), which was deleted concurrently (delete rule nullify): the reference was dropped")
    }

    func hlc(of dot: Dot) throws -> HLC {
        try ChangeSetTable.hlc(of: dot, on: connection) ?? HLC(rawValue: 0)
    }

    /// An object whose life may have changed: it and everything it is connected to must be
    /// rewritten, and the deletes of its neighbours re-judged (a deny rule asks whether they are alive).
    func markChanged(_ object: ObjectKey) throws {
        toMaterialize.affected.insert(object)
        toMaterialize.reorderedOwners.insert(object)
        guard let entity = schema.entity(object.entity) else { return }
        for relationship in entity.relationships {
            for (other, _) in try incidentEdges(of: object, relationship) {
                toMaterialize.affected.insert(other)
                toMaterialize.reorderedOwners.insert(other)
                try touchRoots(of: other)
            }
        }
    }

    /// Adds the roots of the deletes of `object`'s neighbours to those the next round re-judges.
    func touchRootsAround(_ object: ObjectKey) throws {
        guard let entity = schema.entity(object.entity) else { return }
        for relationship in entity.relationships {
            for (other, _) in try incidentEdges(of: object, relationship) { try touchRoots(of: other) }
        }
    }

    /// Adds the roots of every delete of `object` to those the next round re-judges.
    func touchRoots(of object: ObjectKey) throws {
        // Most objects were never deleted, and what the engine knows of them says so: merges of
        // new objects and their links touch every neighbour, and a read each would be most of
        // their statements.
        if let known = try info(object), !known.mayBeDeleted { return }
        toMaterialize.touchedRoots.formUnion(try DeleteTable.roots(deleting: object, on: connection))
    }
}

extension MergeEngine: DeleteRuleResolver.Graph {
    func relationships(of entity: String) -> [SyncSchema.Relationship] {
        schema.entity(entity)?.relationships ?? []
    }

    func explicitDeletesInForce(of object: ObjectKey) throws -> [DeleteRoot] {
        guard try info(object)?.mayBeDeleted == true else { return [] }
        return try deleteRootsInForce(of: object, .explicit)
    }
}

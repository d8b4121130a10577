import Foundation
import LocalStoreCore

/// Operations replayed onto a snapshot that name objects the snapshot no longer holds.
///
/// A compaction forgets objects deleted for good (CONTRACT.md §10): no change set still to come
/// can name them, except the unpushed change sets of a replica that was retired before it saw the
/// delete, which its client replays as new local edits on top of a snapshot (§5.1). Such an
/// operation cannot be merged (its object has no record left) and must not reach the server (it
/// would refuse the change set, and the outbox would stay blocked behind it); what it would
/// have changed is journaled instead, so nothing the user committed disappears unreported.
extension MergeEngine {
    /// Splits `operations` into those naming only objects the store holds or that `operations`
    /// create, and those naming an object it does not hold (deleted and forgotten).
    func separatingForgottenObjects(_ operations: [Operation]) throws -> ForgottenObjectOperations {
        var created: Set<ObjectKey> = []
        var named: [String: Set<UUID>] = [:]
        for operation in operations {
            for object in objectsNamed(by: operation) {
                if case .create = operation { created.insert(object) } else { named[object.entity, default: []].insert(object.id) }
            }
        }
        var held: Set<ObjectKey> = []
        for (entity, ids) in named.sorted(by: { $0.key < $1.key }) {
            let unknown = ids.filter { objects[ObjectKey(entity: entity, id: $0)] == nil }.sorted { $0.precedesInStorageOrder($1) }
            for chunk in MergeEngine.chunks(of: unknown) { _ = try loadObjects(entity, chunk) }
            for id in ids where objects[ObjectKey(entity: entity, id: id)] != nil { held.insert(ObjectKey(entity: entity, id: id)) }
        }
        var separated = ForgottenObjectOperations()
        for operation in operations {
            let missing = objectsNamed(by: operation).filter { !created.contains($0) && !held.contains($0) }
            if missing.isEmpty {
                separated.kept.append(operation)
            } else {
                separated.forgotten.append(operation)
                separated.forgottenObjects.formUnion(missing)
            }
        }
        return separated
    }

    /// Journals what the forgotten operations of `changeSet` (the retired replica's, which the
    /// entries name as their cause and loser) would have changed: a value written to a forgotten object (`update_vs_delete`, no winner: the delete
    /// is forgotten too), a reference from a forgotten object (`update_vs_delete`) or to one
    /// (`reference_dropped`). Deletes, unlinks and positions lose nothing: the object and its
    /// edges are gone already.
    func journalForgotten(_ separated: ForgottenObjectOperations, of changeSet: ChangeSet) throws {
        let stamp = Stamp(hlc: changeSet.hlc, replica: changeSet.dot.replica, seq: changeSet.dot.seq)
        for operation in separated.forgotten {
            switch operation {
            case .set(let entity, let id, let attribute, let values):
                try journal(.updateVersusDelete, entity: entity, object: id, property: attribute, winner: nil, loser: side(values: values, stamp),
                            cause: changeSet.dot, detail: "\(entity) \(id) was deleted and its history compacted before this edit was replayed: the delete won")
            case .increment(let entity, let id, let attribute, let delta):
                try journal(.updateVersusDelete, entity: entity, object: id, property: attribute, winner: nil,
                            loser: side(values: [.integer(delta)], stamp), cause: changeSet.dot,
                            detail: "\(entity) \(id) was deleted and its history compacted before this increment was replayed: the delete won")
            case .link(let entity, let id, let relationship, let target):
                let source = ObjectKey(entity: entity, id: id)
                let loser = side("\"\(target.storageText)\"", stamp)
                if separated.forgottenObjects.contains(source) {
                    try journal(.updateVersusDelete, entity: entity, object: id, property: relationship, winner: nil, loser: loser, cause: changeSet.dot,
                                detail: "\(entity) \(id) was deleted and its history compacted before this link was replayed: the delete won")
                } else {
                    try journal(.referenceDropped, entity: entity, object: id, property: relationship, winner: nil, loser: loser, cause: changeSet.dot,
                                detail: "\(entity).\(relationship) gained \(target), which was deleted and its history compacted before this link was replayed: the reference was dropped")
                }
            case .create, .delete, .unlink, .position:
                continue
            }
        }
    }

    /// The objects `operation` names: its object, and the target or member it names through a relationship.
    private func objectsNamed(by operation: Operation) -> [ObjectKey] {
        switch operation {
        case .create(let entity, let id), .set(let entity, let id, _, _), .delete(let entity, let id, _), .increment(let entity, let id, _, _):
            return [ObjectKey(entity: entity, id: id)]
        case .link(let entity, let id, let relationship, let target), .unlink(let entity, let id, let relationship, let target, _),
             .position(let entity, let id, let relationship, let target, _):
            let source = ObjectKey(entity: entity, id: id)
            // A relationship the schema lacks is for the merge to refuse, naming it.
            guard let targetEntity = schema.entity(entity)?.relationship(relationship)?.target else { return [source] }
            return [source, ObjectKey(entity: targetEntity, id: target)]
        }
    }
}

/// A change set's operations split by whether they name an object the store forgot.
struct ForgottenObjectOperations {
    /// The operations naming only objects the store holds or the change set creates.
    var kept: [Operation] = []
    /// The operations naming a forgotten object.
    var forgotten: [Operation] = []
    /// The forgotten objects they name.
    var forgottenObjects: Set<ObjectKey> = []
}

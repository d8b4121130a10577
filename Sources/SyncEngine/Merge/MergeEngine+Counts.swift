import Codecs
import Foundation
import LocalStoreCore

/// Relationship bounds after merges (CONTRACT.md §3.10).
///
/// - `maxCount`: when concurrent links take a to-many beyond it, the relationship shows the
///   members whose links are **earliest** by `(HLC, replica ID)` (then by identifier, for links of
///   one change set) and hides the others. Which edges show is a function of the edges in force,
///   like the to-one choice, so every replica shows the same; a hidden edge shows again when a
///   shown one goes. Each newly hidden edge is journaled (`above_max_count`).
/// - `minCount`: a merge cannot invent members, so it keeps the result and journals a
///   relationship that falls below its bound (`below_min_count`); the next save that changes it
///   must fix it.
///
/// A self-inverse to-many ranks each end's edges the same way, and an edge shows only when it is
/// within the `maxCount` earliest at both of its ends.
extension MergeEngine {
    /// One object's side of a canonical relationship whose members a `maxCount` may hide.
    private struct Group: Hashable {
        var entity: String
        var relationship: String
        var target: ObjectKey
    }

    /// Whether the edges of the canonical `relationship` may be hidden by a `maxCount`, its own or
    /// its inverse's.
    func isBoundedAtMerge(_ relationship: SyncSchema.Relationship) -> Bool {
        guard relationship.isCanonical else { return false }
        if relationship.isSelfInverse { return relationship.kind != .toOne && relationship.maxCount != nil }
        if relationship.kind != .toOne && relationship.maxCount != nil { return true }
        guard let inverse = schema.inverse(of: relationship) else { return false }
        return inverse.kind != .toOne && inverse.maxCount != nil
    }

    /// Which sources show at a target bounded by its `maxCount` depends on every source linked to
    /// it: for each affected object, every source linked to a target it has (or had) an edge to,
    /// or to itself when it is that target, is rewritten too.
    func addMaxCountGroups() throws {
        var groups: Set<Group> = []
        for object in toMaterialize.affected.sorted() {
            guard let entity = schema.entity(object.entity) else { continue }
            for relationship in entity.relationships {
                if relationship.isSelfInverse {
                    // An edge shows by the ranks at both its ends: a change at one end (an edge, or
                    // a partner appearing or going) reranks every partner it has or had, and so
                    // every edge of those partners.
                    guard isBoundedAtMerge(relationship) else { continue }
                    groups.insert(Group(entity: relationship.entity, relationship: relationship.name, target: object))
                    for (other, _) in try everyEdge(of: object, relationship) {
                        groups.insert(Group(entity: relationship.entity, relationship: relationship.name, target: other))
                    }
                } else if relationship.isCanonical {
                    guard let inverse = schema.inverse(of: relationship), inverse.kind != .toOne, inverse.maxCount != nil else { continue }
                    for (other, _) in try everyEdge(of: object, relationship) {
                        groups.insert(Group(entity: relationship.entity, relationship: relationship.name, target: other))
                    }
                } else if relationship.maxCount != nil, let canonical = schema.inverse(of: relationship), canonical.isCanonical {
                    groups.insert(Group(entity: canonical.entity, relationship: canonical.name, target: object))
                }
            }
        }
        for group in groups.sorted(by: { $0.target < $1.target }) {
            guard let canonical = schema.entity(group.entity)?.relationship(group.relationship) else { continue }
            if canonical.isSelfInverse {
                toMaterialize.affected.insert(group.target)
                for (other, _) in try incidentEdges(of: group.target, canonical) { toMaterialize.affected.insert(other) }
                continue
            }
            for edge in try liveEdges(to: group.target, canonical) { toMaterialize.affected.insert(ObjectKey(entity: group.entity, id: edge.source)) }
        }
    }

    /// The sources of live edges into `target` through the canonical `relationship`, from live
    /// objects, earliest link first (then by identifier). A to-one source counts only when its
    /// chosen edge (§3.4) points at `target`, with that edge's stamp; a to-many source with its
    /// earliest live edge to `target`.
    private func rankedSources(at target: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> [RelationshipResolver.Claim] {
        if let ranked = countChecks.rankedSourcesByTarget[target]?[relationship.name] { return ranked }
        let ranked = try rankSources(at: target, relationship)
        countChecks.rankedSourcesByTarget[target, default: [:]][relationship.name] = ranked
        return ranked
    }

    private func rankSources(at target: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> [RelationshipResolver.Claim] {
        var claims: [RelationshipResolver.Claim] = []
        for edge in try liveEdges(to: target, relationship) {
            let source = ObjectKey(entity: relationship.entity, id: edge.source)
            guard try isAlive(source) else { continue }
            if relationship.kind == .toOne {
                guard let chosen = try bestEdge(from: source, relationship), chosen.target == target.id else { continue }
                claims.append(RelationshipResolver.Claim(id: edge.source, added: chosen.added))
            } else {
                claims.append(RelationshipResolver.Claim(id: edge.source, added: edge.added))
            }
        }
        return RelationshipResolver.earliestFirst(claims)
    }

    /// For the canonical to-one `relationship` of `source`, which chose `chosen`: `chosen`, or
    /// `nil` when the inverse's `maxCount` hides the edge.
    func shownTarget(of source: ObjectKey, chosen: UUID?, _ relationship: SyncSchema.Relationship, entity: SyncSchema.Entity) throws -> UUID? {
        guard let chosen, let inverse = schema.inverse(of: relationship), inverse.kind != .toOne, let maximum = inverse.maxCount else { return chosen }
        let owner = ObjectKey(entity: relationship.target, id: chosen)
        let ranked = try rankedSources(at: owner, relationship)
        guard let claim = RelationshipResolver.hidden(ranked, maximum: maximum).first(where: { $0.id == source.id }) else { return chosen }
        let shownBefore = try EntityTable.members(of: source.id, in: entity.table, storage: relationship.storage, on: connection)
        try noteHidden(owner: owner, inverse.name, maximum: maximum, member: source, added: claim.added, wasShown: shownBefore == [chosen])
        return nil
    }

    /// Of `members`, the live targets of the canonical to-many `relationship` of `owner`, those
    /// its own `maxCount` and each target's inverse `maxCount` let show.
    func shownMembers(_ members: [UUID], of owner: ObjectKey, _ relationship: SyncSchema.Relationship, entity: SyncSchema.Entity) throws -> [UUID] {
        guard isBoundedAtMerge(relationship) else { return members }
        var hidden: [(owner: ObjectKey, relationship: String, maximum: Int, member: ObjectKey, added: Stamp)] = []
        var shown = Set(members)
        if let maximum = relationship.maxCount, members.count > maximum {
            let claims = try liveEdges(from: owner, relationship).filter { shown.contains($0.target) }.map { RelationshipResolver.Claim(id: $0.target, added: $0.added) }
            for claim in RelationshipResolver.hidden(RelationshipResolver.earliestFirst(claims), maximum: maximum) {
                shown.remove(claim.id)
                hidden.append((owner, relationship.name, maximum, ObjectKey(entity: relationship.target, id: claim.id), claim.added))
            }
        }
        if let inverse = schema.inverse(of: relationship), inverse.kind != .toOne, let maximum = inverse.maxCount {
            for member in members where shown.contains(member) {
                let target = ObjectKey(entity: relationship.target, id: member)
                let ranked = try rankedSources(at: target, relationship)
                guard let claim = RelationshipResolver.hidden(ranked, maximum: maximum).first(where: { $0.id == owner.id }) else { continue }
                shown.remove(member)
                hidden.append((target, inverse.name, maximum, owner, claim.added))
            }
        }
        guard !hidden.isEmpty else { return members }
        let shownBefore = Set(try EntityTable.members(of: owner.id, in: entity.table, storage: relationship.storage, on: connection))
        for entry in hidden {
            let pairMember = entry.owner == owner ? entry.member.id : entry.owner.id
            try noteHidden(owner: entry.owner, entry.relationship, maximum: entry.maximum, member: entry.member, added: entry.added,
                           wasShown: shownBefore.contains(pairMember))
        }
        return members.filter(shown.contains)
    }

    /// Of `partners`, the live partners of `object` through the self-inverse to-many
    /// `relationship`, those its `maxCount` lets show: each end ranks its partners by their
    /// earliest live edge, then by identifier, and an edge shows only when it is within the
    /// `maxCount` earliest at both ends, so both ends always agree. Each end journals the edges its
    /// own bound hides.
    func shownPartners(_ partners: Set<UUID>, of object: ObjectKey, _ relationship: SyncSchema.Relationship, entity: SyncSchema.Entity) throws -> Set<UUID> {
        guard isBoundedAtMerge(relationship), let maximum = relationship.maxCount else { return partners }
        var shown = partners
        var hiddenHere: [RelationshipResolver.Claim] = []
        for (rank, claim) in try rankedPartners(of: object, relationship).enumerated() where partners.contains(claim.id) {
            let partner = ObjectKey(entity: object.entity, id: claim.id)
            if rank >= maximum {
                shown.remove(claim.id)
                hiddenHere.append(claim)
            } else if partner != object, !RelationshipResolver.shows(object.id, in: try rankedPartners(of: partner, relationship), maximum: maximum) {
                shown.remove(claim.id)
            }
        }
        guard !hiddenHere.isEmpty else { return shown }
        let shownBefore = Set(try EntityTable.members(of: object.id, in: entity.table, storage: relationship.storage, on: connection))
        for claim in hiddenHere {
            try noteHidden(owner: object, relationship.name, maximum: maximum, member: ObjectKey(entity: object.entity, id: claim.id),
                           added: claim.added, wasShown: shownBefore.contains(claim.id))
        }
        return shown
    }

    /// The live partners of `object` through the self-inverse `relationship`, earliest link first
    /// (then by identifier), each with the stamp of its earliest live edge.
    private func rankedPartners(of object: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> [RelationshipResolver.Claim] {
        var claims: [RelationshipResolver.Claim] = []
        for edge in try incidentEdges(of: object, relationship) where try isAlive(edge.other) {
            claims.append(RelationshipResolver.Claim(id: edge.other.id, added: edge.added))
        }
        return RelationshipResolver.earliestFirst(claims)
    }

    /// Journals a hidden member when this batch hides it: it showed before, or its link arrived in
    /// this batch. A member linked by this batch is also counted for record edits, which count it
    /// as the app would: a member it just added.
    private func noteHidden(owner: ObjectKey, _ relationship: String, maximum: Int, member: ObjectKey, added: Stamp, wasShown: Bool) throws {
        let linkedInBatch = changeSets.applied.contains(added.dot)
        if linkedInBatch { countChecks.hiddenByMaxCount[owner, default: [:]][relationship, default: 0] += 1 }
        guard wasShown || linkedInBatch else { return }
        try journal(
            .aboveMaxCount, entity: owner.entity, object: owner.id, property: relationship, winner: nil,
            loser: side("\"\(member.id.storageText)\"", added), cause: current.dot,
            detail: "\(owner.entity).\(relationship) holds at most \(maximum): \(member.entity) \(member.id), linked by \(added.dot), is hidden while \(maximum) earlier link(s) fill it")
    }

    // MARK: minCount

    /// Records, for each affected object, the member count of each relationship with a
    /// `minCount` (-1 for an object without a row before this batch), to tell afterwards which fell below it.
    func recordCountsBeforeMaterializing() throws {
        for object in toMaterialize.affected {
            guard let entity = schema.entity(object.entity), entity.relationships.contains(where: { $0.minCount != nil }) else { continue }
            let hasRow = try info(object)?.hasRow == true
            var counts: [String: Int] = [:]
            for relationship in entity.relationships where relationship.minCount != nil {
                counts[relationship.name] = hasRow
                    ? try EntityTable.members(of: object.id, in: entity.table, storage: relationship.storage, on: connection).count
                    : -1
            }
            countChecks.countsBeforeMaterializing[object] = counts
        }
    }

    /// Journals each relationship with a `minCount` that this batch left below it: it was within
    /// its bound before, or its object appeared in this batch.
    func journalCountsBelowMinimum() throws {
        for (object, before) in countChecks.countsBeforeMaterializing.sorted(by: { $0.key < $1.key }) {
            guard let entity = schema.entity(object.entity), try info(object)?.hasRow == true else { continue }
            for relationship in entity.relationships {
                guard let minimum = relationship.minCount, let previous = before[relationship.name] else { continue }
                let count = try EntityTable.members(of: object.id, in: entity.table, storage: relationship.storage, on: connection).count
                guard count < minimum, previous < 0 || previous >= minimum else { continue }
                try journal(
                    .belowMinCount, entity: object.entity, object: object.id, property: relationship.name, winner: nil,
                    loser: side(nil, current.stamp), cause: current.dot,
                    detail: "\(object.entity).\(relationship.name) of \(object.id) has \(count) member(s) after merging, fewer than its minCount \(minimum); the next save that changes it must add members")
            }
        }
    }
}

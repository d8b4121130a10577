import Codecs
import Foundation
import LocalStoreCore

extension MergeEngine {
    /// Rewrites the entity tables for every object the batch touched, from the metadata:
    /// rows appear, disappear or come back; foreign keys, join rows and positions follow the
    /// edges in force. Returns the identifiers of the objects whose rows were rewritten.
    @discardableResult
    func materialize() throws -> Set<UUID> {
        let cachingAlready = edgeReads != nil
        if !cachingAlready { edgeReads = EdgeReadCache() }
        defer { if !cachingAlready { edgeReads = nil } }
        try flushPendingWrites()
        try resolveDeletes()
        countChecks.hiddenByMaxCount = [:]
        countChecks.rankedSourcesByTarget = [:]
        try addMaxCountGroups()
        try recordCountsBeforeMaterializing()
        try readEdgesAhead(of: toMaterialize.affected)
        var changed = toMaterialize.rewrittenAttributes
        // Rows first: an object that appears or disappears changes the relationships of its neighbours.
        for object in toMaterialize.affected.sorted() {
            guard let entity = schema.entity(object.entity), let known = try info(object) else { continue }
            let alive = try isAlive(object)
            if alive && !known.hasRow {
                try insertRow(object, entity: entity, known: known)
                if known.createdBy == nil {
                    try markChanged(object)
                } else {
                    // Every edge of an object the batch created was added by the batch (or moved
                    // to it by a uniqueness merge), which marked both ends then: only an object
                    // coming back needs its neighbours found and marked.
                    toMaterialize.reorderedOwners.insert(object)
                }
                storeChangeRecord?.createdRows.insert(object)
                changed.insert(object.id)
            } else if !alive && known.hasRow {
                try removeRow(object, entity: entity)
                try markChanged(object)
                storeChangeRecord?.removedRows.insert(object)
                changed.insert(object.id)
            } else if !alive, let values = pending.detachedValues[object] {
                try storeTombstone(values, for: object)
            }
        }
        try addOneToOneComponents()
        for object in toMaterialize.affected.sorted() {
            guard let entity = schema.entity(object.entity), try info(object)?.hasRow == true else { continue }
            try writeRelationships(of: object, entity: entity)
            changed.insert(object.id)
            storeChangeRecord?.rewrittenRelationships.insert(object)
        }
        for owner in toMaterialize.reorderedOwners.sorted() {
            guard let entity = schema.entity(owner.entity), try info(owner)?.hasRow == true else { continue }
            try writePositions(of: owner, entity: entity)
            changed.insert(owner.id)
            storeChangeRecord?.rewrittenRelationships.insert(owner)
        }
        try journalCountsBelowMinimum()
        // Entries about counts are the last ones a batch writes.
        try flushPendingWrites()
        return changed
    }

    /// Who holds whom in a one-to-one depends on every competing edge around it, so the whole
    /// connected group of one-to-one edges around each touched object is rewritten.
    private func addOneToOneComponents() throws {
        var queue = toMaterialize.affected.sorted()
        var index = 0
        while index < queue.count {
            let object = queue[index]
            index += 1
            guard let entity = schema.entity(object.entity) else { continue }
            for relationship in entity.relationships where relationship.kind == .toOne && schema.inverse(of: relationship)?.kind == .toOne {
                for (other, _) in try incidentEdges(of: object, relationship) where !toMaterialize.affected.contains(other) {
                    toMaterialize.affected.insert(other)
                    queue.append(other)
                }
            }
        }
    }

    private func insertRow(_ object: ObjectKey, entity: SyncSchema.Entity, known: ObjectInfo) throws {
        let values = try detachedColumns(of: object)
        let defaults = entity.defaultColumnValues
        try entity.rows.insertRow(object.id, attributeValues: entity.rows.attributeColumns.enumerated().map { index, column in
            values[column] ?? (index < defaults.count ? defaults[index] : .null)
        }, on: connection)
        // A row's object has no tombstone: the marker is how a store tells it has a row.
        try ObjectMetadataTable.setTombstone(nil, of: object, on: connection)
        known.hasRow = true
        pending.detachedValues[object] = nil
    }

    private func removeRow(_ object: ObjectKey, entity: SyncSchema.Entity) throws {
        var values: [String: SQLValue] = [:]
        if !entity.rows.attributeColumns.isEmpty, let row = try entity.rows.attributeValues(of: object.id, on: connection) {
            for (column, value) in zip(entity.rows.attributeColumns, row) { values[column] = value }
        }
        try entity.rows.deleteRow(object.id, on: connection)
        objects[object]?.hasRow = false
        pending.detachedValues[object] = values
        try storeTombstone(values, for: object)
    }

    /// The target a canonical to-one holds: of its live edges to live objects, the one added last by
    /// `(HLC, replica ID)`. For a one-to-one, a target claimed by several sources keeps the latest
    /// claim; the others hold nothing, so both sides always agree.
    func chosenTarget(of source: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> UUID? {
        guard let candidate = try bestEdge(from: source, relationship) else { return nil }
        guard schema.inverse(of: relationship)?.kind == .toOne else { return candidate.target }
        return try chosenSource(of: ObjectKey(entity: relationship.target, id: candidate.target), relationship) == source.id ? candidate.target : nil
    }

    /// For a one-to-one, the source whose latest live edge points at `target` with the largest stamp.
    func chosenSource(of target: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> UUID? {
        var latestClaims: [(source: UUID, claim: RelationshipResolver.Claim)] = []
        for edge in try liveEdges(to: target, relationship) {
            let source = ObjectKey(entity: relationship.entity, id: edge.source)
            guard try isAlive(source), let sourceBest = try bestEdge(from: source, relationship) else { continue }
            latestClaims.append((edge.source, RelationshipResolver.Claim(id: sourceBest.target, added: sourceBest.added)))
        }
        return RelationshipResolver.keepingSource(of: target.id, latestClaims)
    }

    /// The partner a self-inverse to-one holds. Each object's candidate is its live edge to a
    /// live object added last by `(HLC, replica ID)`; two objects are partners when each is the
    /// other's candidate. An object whose candidate prefers someone else holds nothing, so both
    /// ends always agree, and the result depends only on the edges in force.
    func chosenPartner(of object: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> UUID? {
        guard let candidate = try bestIncidentEdge(of: object, relationship) else { return nil }
        if candidate.id == object.id { return object.id }
        return try bestIncidentEdge(of: ObjectKey(entity: object.entity, id: candidate.id), relationship)?.id == object.id ? candidate.id : nil
    }

    private func bestIncidentEdge(of object: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> RelationshipResolver.Claim? {
        var claims: [RelationshipResolver.Claim] = []
        for edge in try incidentEdges(of: object, relationship) where try isAlive(edge.other) {
            claims.append(RelationshipResolver.Claim(id: edge.other.id, added: edge.added))
        }
        return RelationshipResolver.latest(claims)
    }

    /// The live edge from `source` to a live target that its to-one keeps (``RelationshipResolver/latest(_:)``).
    func bestEdge(from source: ObjectKey, _ relationship: SyncSchema.Relationship) throws -> EdgeRecord? {
        var claims: [RelationshipResolver.Claim] = []
        for edge in try liveEdges(from: source, relationship) where try isAlive(ObjectKey(entity: relationship.target, id: edge.target)) {
            claims.append(RelationshipResolver.Claim(id: edge.target, added: edge.added))
        }
        return RelationshipResolver.latest(claims).map { EdgeRecord(source: source.id, target: $0.id, added: $0.added) }
    }

    private func writeRelationships(of object: ObjectKey, entity: SyncSchema.Entity) throws {
        for relationship in entity.relationships {
            switch relationship.storage {
            case .foreignKey(let column, let positionColumn):
                let target: UUID?
                // The owner whose ordered positions include this object: a target hidden by its
                // maxCount renumbers its remaining members.
                var positionOwner: UUID?
                if relationship.isSelfInverse {
                    target = try chosenPartner(of: object, relationship)
                } else if relationship.isCanonical {
                    positionOwner = try chosenTarget(of: object, relationship)
                    target = try shownTarget(of: object, chosen: positionOwner, relationship, entity: entity)
                } else if let canonical = schema.inverse(of: relationship) {
                    target = try chosenSource(of: object, canonical)
                } else {
                    target = nil
                }
                if positionColumn != nil, let inverse = schema.inverse(of: relationship),
                   let previous = try EntityTable.members(of: object.id, in: entity.table, storage: relationship.storage, on: connection).first,
                   previous != positionOwner ?? target {
                    // The owner this object leaves renumbers the members it keeps. It may be
                    // named by no operation of the batch: a concurrent link that wins the to-one
                    // moves the object away from an owner only an earlier change set linked.
                    toMaterialize.reorderedOwners.insert(ObjectKey(entity: inverse.entity, id: previous))
                }
                try entity.rows.setForeignKey(column, of: object.id, to: target, on: connection)
                if let positionColumn {
                    if let inverse = schema.inverse(of: relationship), let owner = positionOwner ?? target {
                        // The owner's pass numbers its members, this one included.
                        toMaterialize.reorderedOwners.insert(ObjectKey(entity: inverse.entity, id: owner))
                    }
                    if target == nil {
                        try entity.rows.clearPosition(positionColumn, of: object.id, on: connection)
                    }
                }
            case .joinTable where relationship.isSelfInverse:
                // Both directions are stored, so each member's own rows are rewritten by its own pass.
                var members: Set<UUID> = []
                for (other, _) in try incidentEdges(of: object, relationship) where try isAlive(other) { members.insert(other.id) }
                members = try shownPartners(members, of: object, relationship, entity: entity)
                try EntityTable.replaceJoinRows(of: object.id, with: members.sorted { $0.storageText < $1.storageText },
                                                storage: relationship.storage, on: connection)
            case .joinTable where relationship.storage.ownsJoinTable:
                var members: [UUID] = []
                for edge in try liveEdges(from: object, relationship) where try isAlive(ObjectKey(entity: relationship.target, id: edge.target)) {
                    if !members.contains(edge.target) { members.append(edge.target) }
                }
                members = try shownMembers(members, of: object, relationship, entity: entity)
                if relationship.kind == .orderedToMany { members = try ordered(members, owner: object, relationship: relationship.name) }
                // Unordered join rows are written by identifier, so every replica writes them alike.
                if relationship.storage.positionColumn == nil { members.sort { $0.storageText < $1.storageText } }
                try EntityTable.replaceJoinRows(of: object.id, with: members, storage: relationship.storage, on: connection)
            case .joinTable, .inverseForeignKey:
                continue
            }
        }
    }

    /// Rewrites the positions of the ordered one-to-many relationships `owner` has.
    private func writePositions(of owner: ObjectKey, entity: SyncSchema.Entity) throws {
        for relationship in entity.relationships where relationship.kind == .orderedToMany {
            guard case .inverseForeignKey(_, _, .some) = relationship.storage else { continue }
            let current = try EntityTable.positions(of: owner.id, storage: relationship.storage, on: connection)
            let members = try ordered(Array(current.keys), owner: owner, relationship: relationship.name)
            for (index, member) in members.enumerated() where current[member] != .integer(Int64(index)) {
                try EntityTable.setPosition(index, of: member, storage: relationship.storage, on: connection)
            }
        }
    }

    /// `members` in the order `owner`'s ordered `relationship` shows them (``RelationshipResolver/ordered(_:keys:)``).
    func ordered(_ members: [UUID], owner: ObjectKey, relationship: String) throws -> [UUID] {
        RelationshipResolver.ordered(members, keys: try PositionTable.positions(in: owner, relationship, on: connection))
    }
}

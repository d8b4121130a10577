/// The uniqueness rule (CONTRACT.md §3.8) for one object a change set created: which objects
/// are one object with it, and which of them survives, decided from the creation values each
/// object was recorded with, its creation's stamp and what its creating change set had seen. It
/// writes nothing and reads only through ``Creations``: ``MergeEngine`` gives it the recorded
/// values (`UniqueMergeTable`) and creations, and moves the duplicates into the survivor
/// (`MergeEngine+Unique.swift`).
///
/// The rule:
/// - Two objects collide when they hold equal values of a uniqueness key at creation and neither
///   creating change set had seen the other's creation (they were created concurrently).
///   Collisions chain: a group is every object reached from the created one through collisions.
/// - The earliest created of a group, by `(HLC, replica ID)` (then by identifier), survives;
///   the others are merged into it.
struct UniquenessResolver {
    /// What is known of objects' creations.
    protocol Creations {
        /// The objects of `object`'s entity recorded with a uniqueness key value `object` was
        /// recorded with, `object` itself possibly among them.
        func objectsSharingAKeyValue(with object: ObjectKey) throws -> [ObjectKey]
        /// The stamp of `object`'s creation and what its creating change set had seen; `nil`
        /// when the object is not known.
        func creation(of object: ObjectKey) throws -> (stamp: Stamp, vector: VersionVector)?
    }

    /// A group of objects that are one: the survivor and the duplicates merged into it.
    struct Group: Equatable {
        var survivor: ObjectKey
        /// In identifier order.
        var duplicates: [ObjectKey]
    }

    /// The group `object` belongs to, or `nil` when it collides with nothing.
    static func group(of object: ObjectKey, in creations: some Creations) throws -> Group? {
        var members: [ObjectKey] = [object]
        var stamps: [ObjectKey: (stamp: Stamp, vector: VersionVector)] = [:]
        func creation(_ member: ObjectKey) throws -> (stamp: Stamp, vector: VersionVector)? {
            if let known = stamps[member] { return known }
            let known = try creations.creation(of: member)
            stamps[member] = known
            return known
        }
        var index = 0
        while index < members.count {
            let member = members[index]
            index += 1
            for other in try creations.objectsSharingAKeyValue(with: member) where !members.contains(other) {
                guard let one = try creation(member), let two = try creation(other),
                      !one.vector.covers(two.stamp.dot), !two.vector.covers(one.stamp.dot) else { continue }
                members.append(other)
            }
        }
        guard members.count > 1 else { return nil }
        let earliestFirst = try members.map { member in
            guard let known = try creation(member) else {
                throw SyncError(.notSyncable, "\(member.entity) \(member.id) has no creation to judge a uniqueness merge by")
            }
            return (member, known.stamp)
        }.sorted { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0.id.precedesInStorageOrder($1.0.id) }
        let survivor = earliestFirst[0].0
        return Group(survivor: survivor, duplicates: members.filter { $0 != survivor }.sorted())
    }
}

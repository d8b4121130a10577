import Foundation
import SQLiteDatabase

/// A unit of work on a store: objects inserted, fetched, changed and deleted in it are
/// written together by ``save()`` (one SQLite transaction: all or nothing) or undone by
/// ``rollback()``.
///
/// A context holds one object per stored row (an identity map) and loads relationships on
/// first access. It is not thread-safe: use it from one thread or task at a time.
///
/// ```swift
/// let context = try store.makeContext()
/// let ada = Person()
/// ada.name = "Ada"
/// context.insert(ada)
/// try context.save()
/// ```
public final class ObjectContext {
    /// The store this context reads and writes.
    public let store: ObjectStore
    let connection: SQLiteConnection
    var registeredObjects = IdentityMap()
    var insertedObjects: [any PersistentEntity] = []
    var updatedObjects: [any PersistentEntity] = []
    var deletedObjects: [any PersistentEntity] = []
    /// Where merges note the objects they change, and the store's key for it, while
    /// ``automaticallyRefreshes`` is on.
    var mergedObjectSubscription: (inbox: ObjectIDInbox, key: Int)?
    /// The first error of a relationship that failed to load when its property was read, since
    /// the last ``save()`` or ``rollback()``; `nil` when every load succeeded.
    ///
    /// A relationship property cannot throw, so when the store fails while loading one (I/O, a
    /// corrupt row, a closed database), the property reads as empty (or `nil`) and stays unloaded:
    /// the next read tries again. Until ``rollback()``, ``save()`` throws this error, because
    /// changes made after such a read could be based on the empty value. Load with
    /// ``load(_:of:)`` to get the error where it happens instead.
    public internal(set) var relationshipLoadError: StoreError?

    /// The last answer of ``mapping(for:)``.
    private var recentMapping: (entityType: ObjectIdentifier, mapping: EntityMapping)?

    /// What this context's objects hold to reach it (see ``ObjectContextReference``).
    let objectReference = ObjectContextReference()

    init(store: ObjectStore, connection: SQLiteConnection) {
        self.store = store
        self.connection = connection
        objectReference.attach(self)
    }

    deinit {
        objectReference.detach()
        if let (_, key) = mergedObjectSubscription { store.changeHub.unsubscribe(key) }
    }

    /// Whether anything was inserted, changed or deleted since the last save or rollback.
    public var hasChanges: Bool {
        !insertedObjects.isEmpty || !deletedObjects.isEmpty || updatedObjects.contains { $0.hasChanges }
    }

    /// Objects inserted and not saved yet.
    public var insertedModels: [any PersistentEntity] { insertedObjects.filter { $0._$entityState.status == .inserted } }
    /// Objects marked for deletion by the next save.
    public var deletedModels: [any PersistentEntity] { deletedObjects }

    /// The mapping of the object's entity. Saves and fetches ask for it object after object of
    /// the same entity, so the last answer is kept and found without hashing.
    func mapping(for object: any PersistentEntity) -> EntityMapping {
        let entityType = ObjectIdentifier(type(of: object))
        if let recentMapping, recentMapping.entityType == entityType { return recentMapping.mapping }
        guard let mapping = store.schema.entity(for: type(of: object)) else {
            preconditionFailure("LocalStore: \(type(of: object)._$entity.name) is not one of the entities this store was opened with")
        }
        recentMapping = (entityType, mapping)
        return mapping
    }

    /// Registers a new object (and the new objects it is related to) for insertion on the next save.
    public func insert<Entity: PersistentEntity>(_ object: Entity) {
        insert(object as any PersistentEntity)
    }

    func insert(_ object: any PersistentEntity) {
        let state = object._$entityState
        if let owner = state.context {
            precondition(owner === self, "LocalStore: \(type(of: object)._$entity.name) \(object.objectID) belongs to another context")
            if state.status == .deleted {
                // Inserting an object marked for deletion takes the deletion back.
                state.status = state.isStored ? .persistent : .inserted
                deletedObjects.removeAll { $0 === object }
            }
            return
        }
        _ = mapping(for: object)
        state.context = self
        state.status = .inserted
        registeredObjects[state.objectID] = object
        insertedObjects.append(object)
        // New related objects come along, as they would with Core Data or SwiftData.
        // By index, reading only the kind and accessor: copying each description per inserted
        // object retained and released all its strings.
        let relationships = type(of: object)._$entity.relationships
        for index in relationships.indices {
            let accessor = relationships[index].accessor
            if relationships[index].kind == .toOne {
                // Most relationships of a new object are to-ones: no member array, no cast.
                if let related = accessor.firstMember(of: object), related._$entityState.status == .transient {
                    insert(related)
                }
                continue
            }
            for member in accessor.members(of: object) {
                let related = member as! any PersistentEntity
                if related._$entityState.status == .transient { insert(related) }
            }
        }
    }

    /// Marks an object for deletion. Delete rules run on the next ``save()``.
    public func delete<Entity: PersistentEntity>(_ object: Entity) {
        delete(object as any PersistentEntity)
    }

    func delete(_ object: any PersistentEntity) {
        let state = object._$entityState
        guard state.context === self else { return }
        guard state.status == .persistent || state.status == .inserted else { return }
        state.status = .deleted
        deletedObjects.append(object)
    }

    /// Called by generated setters before an attribute changes: keeps its value as last saved.
    func willChangeAttribute(of object: any PersistentEntity, named name: String) {
        let state = object._$entityState
        guard state.isStored else { return }
        let entity = type(of: object)._$entity
        guard let index = entity.attributeIndex(named: name), state.originalAttributes[index] == nil else { return }
        var values: [SQLValue] = []
        if (try? entity.encodeAttribute(index, of: object, into: &values)) == nil {
            // The saved value no longer encodes (only a `.codable` type whose encoding changed
            // can do that). NULLs differ from whatever is set next, so the save still writes
            // the attribute; a rollback leaves it as it is, since NULL does not decode to it.
            values = Array(repeating: .null, count: entity.attributes[index].columns.count)
        }
        state.originalAttributes[index] = values
        registerUpdated(object)
    }

    func registerUpdated(_ object: any PersistentEntity) {
        let state = object._$entityState
        guard !state.isQueuedForUpdate else { return }
        state.isQueuedForUpdate = true
        updatedObjects.append(object)
    }

    /// Undoes every change since the last save: changed objects get their saved values back,
    /// deleted ones are restored, inserted ones leave the context.
    public func rollback() {
        relationshipLoadError = nil
        for object in updatedObjects + deletedObjects {
            restoreSavedValues(of: object)
        }
        for object in deletedObjects where object._$entityState.status == .deleted {
            object._$entityState.status = object._$entityState.isStored ? .persistent : .inserted
        }
        for object in insertedObjects where !object._$entityState.isStored {
            let state = object._$entityState
            let entity = type(of: object)._$entity
            for relationship in entity.relationships {
                withObservedChange(of: object, keyPath: relationship.keyPath) { relationship.accessor.replaceMembers(of: object, with: []) }
            }
            state.context = nil
            state.status = .transient
            registeredObjects[state.objectID] = nil
        }
        insertedObjects.removeAll()
        updatedObjects.removeAll()
        deletedObjects.removeAll()
    }

    private func restoreSavedValues(of object: any PersistentEntity) {
        let state = object._$entityState
        let entity = type(of: object)._$entity
        for (index, values) in state.originalAttributes {
            // These values were encoded from this very attribute, so decoding cannot fail.
            withObservedChange(of: object, keyPath: entity.attributes[index].keyPath) {
                try? entity.attributes[index].accessor.decode(object, from: StoredRow(values: values), at: 0)
            }
        }
        for (index, members) in state.originalRelationships {
            withObservedChange(of: object, keyPath: entity.relationships[index].keyPath) {
                entity.relationships[index].accessor.replaceMembers(of: object, with: members)
            }
        }
        state.discardOriginalValues()
        state.isQueuedForUpdate = false
    }

    /// The registered object with this identifier, if this context has it in memory.
    public func registeredObject<Entity: PersistentEntity>(_ type: Entity.Type, id: UUID) -> Entity? {
        registeredObjects[id] as? Entity
    }
}

/// The identity map: the one object of each stored row a context has in memory, by identifier.
///
/// Every fetched object is looked up and entered here, so it is a hash table of its own: open
/// addressing with linear probing, each slot the identifier's two 64-bit halves and a plain
/// reference, hashed with one multiplication under a per-process random key. A byte per slot
/// (empty, or seven bits of the hash) lets a probe skip slots 64 to a cache line, so the table
/// fills to seven eighths. With a `Dictionary` of existentials, SipHash and rehashing were a
/// third of a fetch and each bucket 32 bytes, at most three quarters used. Objects come back
/// through a cast to the protocol, which only a hit pays.
struct IdentityMap {
    private struct Slot {
        var high: UInt64
        var low: UInt64
        var object: AnyObject?

        static var free: Slot { Slot(high: 0, low: 0, object: nil) }
    }

    /// A power of two in length, or empty; at most seven eighths used.
    private var slots: [Slot] = []
    /// Per slot: 0 when free, otherwise `0x80` with the hash's top seven bits.
    private var tags: [UInt8] = []
    private var count = 0
    /// Counts the changes to the table, so that a ``Vacancy`` can tell whether it still holds.
    private var generation: UInt = 0

    /// Where a lookup that missed would enter its identifier: the free slot its probe ended at.
    ///
    /// A fetch looks each row's identifier up, makes the object, then enters it. Entering it
    /// through the vacancy skips a second hash and probe; and the lookup reads the free slot
    /// itself, so that the cache miss on it (the table is several MiB) overlaps with making the
    /// object instead of stalling the entry.
    struct Vacancy {
        fileprivate let index: Int
        fileprivate let tag: UInt8
        fileprivate let high: UInt64
        fileprivate let low: UInt64
        fileprivate let generation: UInt
        /// Whether the slot was free when the lookup read it.
        fileprivate let isFree: Bool
    }

    /// The hash key, copied from the process's: read where it lies, not through the lazy
    /// initialization of a global, whose call made the fetch loop retain and release the arrays.
    private let key = IdentityMap.processKey

    /// Chosen once per process, so that identifiers from elsewhere (sync) cannot be picked to collide.
    private static let processKey: (UInt64, UInt64) = {
        var generator = SystemRandomNumberGenerator()
        return (generator.next(), generator.next() | 1)
    }()

    subscript(id: UUID) -> (any PersistentEntity)? {
        get {
            let (high, low) = IdentityMap.halves(of: id)
            guard let index = slotIndex(high, low) else { return nil }
            return slots[index].object.map { $0 as! any PersistentEntity }
        }
        set {
            let (high, low) = IdentityMap.halves(of: id)
            if let newValue {
                insert(newValue as AnyObject, high, low)
            } else if let index = slotIndex(high, low) {
                remove(at: index)
            }
        }
    }

    /// The object registered under `id`, or where `id` would be entered.
    ///
    /// Inlined into the fetch loop: called on the context's stored map, a call copied the map
    /// and retained and released both arrays for every row.
    @inline(__always)
    func lookUp(_ id: UUID) -> (object: (any PersistentEntity)?, vacancy: Vacancy) {
        let (high, low) = IdentityMap.halves(of: id)
        guard !slots.isEmpty else {
            return (nil, Vacancy(index: 0, tag: 0, high: high, low: low, generation: generation, isFree: false))
        }
        let mask = slots.count - 1
        var (index, tag) = start(of: IdentityMap.hash(high, low, key: key))
        while tags[index] != 0 {
            if tags[index] == tag && slots[index].high == high && slots[index].low == low {
                return (slots[index].object.map { $0 as! any PersistentEntity }, Vacancy(index: index, tag: tag, high: high, low: low, generation: generation, isFree: false))
            }
            index = (index + 1) & mask
        }
        return (nil, Vacancy(index: index, tag: tag, high: high, low: low, generation: generation, isFree: slots[index].object == nil))
    }

    /// Enters `object` where ``lookUp(_:)`` found no object; a full table, or one changed since
    /// the lookup, takes the ordinary way.
    mutating func insert(_ object: any PersistentEntity, at vacancy: Vacancy) {
        guard vacancy.isFree, vacancy.generation == generation, (count + 1) * 8 <= slots.count * 7 else {
            return insert(object as AnyObject, vacancy.high, vacancy.low)
        }
        tags[vacancy.index] = vacancy.tag
        slots[vacancy.index] = Slot(high: vacancy.high, low: vacancy.low, object: object as AnyObject)
        count += 1
        generation &+= 1
    }

    /// Every registered object, in no particular order.
    var values: [any PersistentEntity] {
        slots.compactMap { $0.object.map { $0 as! any PersistentEntity } }
    }

    private static func halves(of id: UUID) -> (UInt64, UInt64) {
        withUnsafeBytes(of: id.uuid) { ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
    }

    /// The high and low 64 bits of the keyed product of the two halves, folded together.
    private static func hash(_ high: UInt64, _ low: UInt64, key: (UInt64, UInt64)) -> UInt64 {
        let product = (high ^ key.0).multipliedFullWidth(by: low ^ key.1)
        return product.high ^ product.low
    }

    /// The tag of a hash: its top seven bits, marked as used.
    private static func tag(of hash: UInt64) -> UInt8 {
        UInt8(truncatingIfNeeded: hash >> 57) | 0x80
    }

    /// The slot the probe for a hash starts at, and the tag of the hash.
    private func start(of hash: UInt64) -> (index: Int, tag: UInt8) {
        (Int(truncatingIfNeeded: hash) & (slots.count - 1), IdentityMap.tag(of: hash))
    }

    /// The slot holding this identifier, if any.
    private func slotIndex(_ high: UInt64, _ low: UInt64) -> Int? {
        guard !slots.isEmpty else { return nil }
        let mask = slots.count - 1
        var (index, tag) = start(of: IdentityMap.hash(high, low, key: key))
        while tags[index] != 0 {
            if tags[index] == tag && slots[index].high == high && slots[index].low == low { return index }
            index = (index + 1) & mask
        }
        return nil
    }

    private mutating func insert(_ object: AnyObject, _ high: UInt64, _ low: UInt64) {
        generation &+= 1
        if (count + 1) * 8 > slots.count * 7 { grow() }
        let mask = slots.count - 1
        var (index, tag) = start(of: IdentityMap.hash(high, low, key: key))
        while tags[index] != 0 {
            if tags[index] == tag && slots[index].high == high && slots[index].low == low {
                slots[index].object = object
                return
            }
            index = (index + 1) & mask
        }
        tags[index] = tag
        slots[index] = Slot(high: high, low: low, object: object)
        count += 1
    }

    /// Doubles the table. Entries are moved, not copied: a copy retains and releases every
    /// object, and touching each object's reference count (scattered over the heap) made growing
    /// a fifth of loading a large relationship. The loop works on the buffers themselves, with the
    /// hash key read once: through the arrays, every entry paid two uniqueness checks and the
    /// retains and releases of the buffers around the key's lazy initialization.
    private mutating func grow() {
        let capacity = max(16, slots.count * 2)
        var newSlots = Array(repeating: Slot.free, count: capacity)
        var newTags = Array(repeating: UInt8(0), count: capacity)
        let mask = capacity - 1
        slots.withUnsafeMutableBufferPointer { oldSlots in
            tags.withUnsafeBufferPointer { oldTags in
                newSlots.withUnsafeMutableBufferPointer { slots in
                    newTags.withUnsafeMutableBufferPointer { tags in
                        guard let oldBase = oldSlots.baseAddress, let base = slots.baseAddress else { return }
                        for position in 0..<oldSlots.count where oldTags[position] != 0 {
                            let slot = (oldBase + position).move()
                            (oldBase + position).initialize(to: .free)
                            let hash = IdentityMap.hash(slot.high, slot.low, key: key)
                            var index = Int(truncatingIfNeeded: hash) & mask
                            while tags[index] != 0 { index = (index + 1) & mask }
                            tags[index] = IdentityMap.tag(of: hash)
                            // The free slot holds no object: overwriting it releases nothing.
                            (base + index).initialize(to: slot)
                        }
                    }
                }
            }
        }
        slots = newSlots
        tags = newTags
    }

    /// Empties the slot at `index`, moving later entries of its probe run back so that every
    /// entry stays reachable from its home slot without a free slot in between.
    private mutating func remove(at index: Int) {
        generation &+= 1
        let mask = slots.count - 1
        var hole = index
        var next = (index + 1) & mask
        while tags[next] != 0 {
            let home = start(of: IdentityMap.hash(slots[next].high, slots[next].low, key: key)).index
            // The entry may fill the hole unless its home lies cyclically after the hole and
            // at or before its own slot.
            let homeIsBetween = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
            if !homeIsBetween {
                slots[hole] = slots[next]
                tags[hole] = tags[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole] = .free
        tags[hole] = 0
        count -= 1
    }
}

/// What happens to related objects when an object is deleted.
///
/// Declared on the side being deleted, as in Core Data:
///
/// ```swift
/// @Relationship(inverse: "author", deleteRule: .cascade) var books: [Book] = []
/// ```
public enum DeleteRule: String, Hashable, Sendable, Codable {
    /// Related objects stay; their inverse no longer refers to the deleted object.
    case nullify
    /// Related objects are deleted too (and their own cascades follow).
    case cascade
    /// The delete fails (`save()` throws) while the relationship is not empty.
    case deny
    /// Not supported: it would leave dangling references. `@Relationship` rejects it at
    /// compile time and the store rejects it when it opens.
    case noAction
}

/// The shape of a relationship.
public enum RelationshipKind: String, Hashable, Sendable, Codable {
    /// `T?`
    case toOne
    /// `Set<T>`
    case toMany
    /// `[T]`: members keep their order.
    case orderedToMany

    /// Whether the relationship can hold more than one object.
    public var isToMany: Bool { self != .toOne }
}

/// A relationship of an entity, as declared in Swift.
public struct RelationshipDescription: Sendable {
    /// The Swift property name.
    public let name: String
    /// To-one, to-many or ordered to-many.
    public let kind: RelationshipKind
    /// The entity at the other end.
    public let targetEntityName: String
    /// The Swift type at the other end.
    public let targetType: any PersistentEntity.Type
    /// The name of the relationship on the target that points back.
    public let inverseName: String
    /// What deleting the owner does to the members.
    public let deleteRule: DeleteRule
    /// Fewest members allowed, checked on `save()`.
    public let minCount: Int?
    /// Most members allowed, checked on `save()`.
    public let maxCount: Int?
    /// Where the relationship is stored, when not named after the property (`persistentName:`):
    /// the foreign-key column of a to-one, or the join table of a many-to-many this side owns.
    public let persistentName: String?
    /// The name the relationship had before a rename (`originalName:`), so migration keeps its links.
    public let originalName: String?
    /// The key path of the Swift property, used to translate predicates.
    public let keyPath: AnyKeyPath & Sendable
    let accessor: any RelationshipAccessing

    /// Whether this relationship of `entity` is its own inverse (`Person.spouse` with
    /// `inverse: "spouse"`): each end sees the other through the same property.
    public func isSelfInverse(of entity: String) -> Bool {
        targetEntityName == entity && inverseName == name
    }
}

extension RelationshipDescription {
    /// The foreign-key column of a to-one: `persistentName:` or the property name.
    var storedName: String { persistentName ?? name }
}

/// Reads and changes the in-memory members of one relationship without touching the
/// inverse; the object graph code keeps both sides in step.
protocol RelationshipAccessing: AnyObject, Sendable {
    func members(of owner: AnyObject) -> [AnyObject]
    /// The first member (the target of a to-one), without building an array of members and
    /// without a dynamic cast: the insert and to-one setter paths call this per object.
    func firstMember(of owner: AnyObject) -> (any PersistentEntity)?
    func contains(_ member: AnyObject, in owner: AnyObject) -> Bool
    func count(of owner: AnyObject) -> Int
    /// Adds `member`; `index` places it in an ordered relationship (appends when `nil`).
    func add(_ member: AnyObject, to owner: AnyObject, at index: Int?)
    func remove(_ member: AnyObject, from owner: AnyObject)
    func replaceMembers(of owner: AnyObject, with members: [AnyObject])
    /// Replaces the members with the objects `load` hands to its argument, in that order,
    /// collected straight into the property's own collection: loading a large relationship
    /// through arrays of existentials and of `AnyObject` first copied (and retained and
    /// released) every member twice more. When `load` throws, the members stay as they were.
    func replaceMembers(of owner: AnyObject, loading load: (_ add: (AnyObject) -> Void) throws -> Void) throws
}

final class ToOneAccessor<Root: PersistentEntity, Target: PersistentEntity>: RelationshipAccessing {
    let get: @Sendable (Root) -> Target?
    let set: @Sendable (Root, Target?) -> Void

    init(get: @escaping @Sendable (Root) -> Target?, set: @escaping @Sendable (Root, Target?) -> Void) {
        self.get = get
        self.set = set
    }

    func members(of owner: AnyObject) -> [AnyObject] {
        get(unsafeDowncast(owner, to: Root.self)).map { [$0] } ?? []
    }
    func firstMember(of owner: AnyObject) -> (any PersistentEntity)? { get(unsafeDowncast(owner, to: Root.self)) }
    func contains(_ member: AnyObject, in owner: AnyObject) -> Bool {
        get(unsafeDowncast(owner, to: Root.self)) === member
    }
    func count(of owner: AnyObject) -> Int { get(unsafeDowncast(owner, to: Root.self)) == nil ? 0 : 1 }
    func add(_ member: AnyObject, to owner: AnyObject, at index: Int?) {
        set(unsafeDowncast(owner, to: Root.self), (member as! Target))
    }
    func remove(_ member: AnyObject, from owner: AnyObject) {
        let root = unsafeDowncast(owner, to: Root.self)
        if get(root) === member { set(root, nil) }
    }
    func replaceMembers(of owner: AnyObject, with members: [AnyObject]) {
        set(unsafeDowncast(owner, to: Root.self), members.first.map { $0 as! Target })
    }
    func replaceMembers(of owner: AnyObject, loading load: (_ add: (AnyObject) -> Void) throws -> Void) throws {
        var first: Target?
        try load { member in if first == nil { first = (member as! Target) } }
        set(unsafeDowncast(owner, to: Root.self), first)
    }
}

/// The member operations of an unordered to-many, specialized in the entity's module (see
/// `PropertyDescription.relationship(_:keyPath:get:modify:inverse:deleteRule:minCount:maxCount:persistentName:originalName:)`).
@usableFromInline
struct SpecializedSetEditing<Root: PersistentEntity, Target: PersistentEntity>: Sendable {
    /// Adds a member to the owner's set.
    let insert: @Sendable (Root, Target) -> Void
    /// Removes a member from the owner's set.
    let remove: @Sendable (Root, Target) -> Void
    /// Whether the owner's set holds the member.
    let contains: @Sendable (Root, Target) -> Bool

    @usableFromInline
    init(insert: @escaping @Sendable (Root, Target) -> Void, remove: @escaping @Sendable (Root, Target) -> Void,
         contains: @escaping @Sendable (Root, Target) -> Bool) {
        self.insert = insert
        self.remove = remove
        self.contains = contains
    }
}

final class SetAccessor<Root: PersistentEntity, Target: PersistentEntity>: RelationshipAccessing {
    let get: @Sendable (Root) -> Set<Target>
    // `modify` mutates the stored set in place: copying a large set per change would make
    // building a relationship of n members cost O(n²).
    let modify: @Sendable (Root, (inout Set<Target>) -> Void) -> Void
    let memberEditing: SpecializedSetEditing<Root, Target>

    init(get: @escaping @Sendable (Root) -> Set<Target>, modify: @escaping @Sendable (Root, (inout Set<Target>) -> Void) -> Void,
         memberEditing: SpecializedSetEditing<Root, Target>) {
        self.get = get
        self.modify = modify
        self.memberEditing = memberEditing
    }

    func members(of owner: AnyObject) -> [AnyObject] { Array(get(unsafeDowncast(owner, to: Root.self))) }
    func firstMember(of owner: AnyObject) -> (any PersistentEntity)? { get(unsafeDowncast(owner, to: Root.self)).first }
    func contains(_ member: AnyObject, in owner: AnyObject) -> Bool {
        memberEditing.contains(unsafeDowncast(owner, to: Root.self), member as! Target)
    }
    func count(of owner: AnyObject) -> Int { get(unsafeDowncast(owner, to: Root.self)).count }
    func add(_ member: AnyObject, to owner: AnyObject, at index: Int?) {
        memberEditing.insert(unsafeDowncast(owner, to: Root.self), member as! Target)
    }
    func remove(_ member: AnyObject, from owner: AnyObject) {
        memberEditing.remove(unsafeDowncast(owner, to: Root.self), member as! Target)
    }
    func replaceMembers(of owner: AnyObject, with members: [AnyObject]) {
        modify(unsafeDowncast(owner, to: Root.self)) { $0 = Set(members.map { $0 as! Target }) }
    }
    func replaceMembers(of owner: AnyObject, loading load: (_ add: (AnyObject) -> Void) throws -> Void) throws {
        var loaded = Set<Target>()
        try load { loaded.insert($0 as! Target) }
        modify(unsafeDowncast(owner, to: Root.self)) { $0 = loaded }
    }
}

/// Replaces an owner's members with the objects a loader hands over, collected in the entity's
/// module (see ``RelationshipAccessing/replaceMembers(of:loading:)``).
@usableFromInline
typealias MemberLoading<Root> = @Sendable (Root, (_ add: (AnyObject) -> Void) throws -> Void) throws -> Void

final class ArrayAccessor<Root: PersistentEntity, Target: PersistentEntity>: RelationshipAccessing {
    let get: @Sendable (Root) -> [Target]
    let modify: @Sendable (Root, (inout [Target]) -> Void) -> Void
    /// Collects a loaded relationship into an array of `Target` in specialized code: appending in
    /// this generic class looked up the array's type metadata for every member.
    let loadMembers: MemberLoading<Root>

    init(get: @escaping @Sendable (Root) -> [Target], modify: @escaping @Sendable (Root, (inout [Target]) -> Void) -> Void,
         loadMembers: @escaping MemberLoading<Root>) {
        self.get = get
        self.modify = modify
        self.loadMembers = loadMembers
    }

    func members(of owner: AnyObject) -> [AnyObject] { get(unsafeDowncast(owner, to: Root.self)) }
    func firstMember(of owner: AnyObject) -> (any PersistentEntity)? { get(unsafeDowncast(owner, to: Root.self)).first }
    func contains(_ member: AnyObject, in owner: AnyObject) -> Bool {
        get(unsafeDowncast(owner, to: Root.self)).contains { $0 === member }
    }
    func count(of owner: AnyObject) -> Int { get(unsafeDowncast(owner, to: Root.self)).count }
    func add(_ member: AnyObject, to owner: AnyObject, at index: Int?) {
        modify(unsafeDowncast(owner, to: Root.self)) { members in
            let target = member as! Target
            if let index { members.insert(target, at: min(max(index, 0), members.count)) } else { members.append(target) }
        }
    }
    func remove(_ member: AnyObject, from owner: AnyObject) {
        modify(unsafeDowncast(owner, to: Root.self)) { members in
            if let index = members.firstIndex(where: { $0 === member }) { members.remove(at: index) }
        }
    }
    func replaceMembers(of owner: AnyObject, with members: [AnyObject]) {
        modify(unsafeDowncast(owner, to: Root.self)) { $0 = members.map { $0 as! Target } }
    }
    func replaceMembers(of owner: AnyObject, loading load: (_ add: (AnyObject) -> Void) throws -> Void) throws {
        try loadMembers(unsafeDowncast(owner, to: Root.self), load)
    }
}

import Codecs
import Foundation
import SQLiteDatabase

/// Where an object stands relative to its context.
public enum ObjectStatus: Sendable, Hashable {
    /// Created and not inserted into any context.
    case transient
    /// Inserted into a context; not saved yet.
    case inserted
    /// Stored, and registered in a context.
    case persistent
    /// Marked for deletion; the next save deletes it.
    case deleted
    /// Deleted by a save; the object is no longer in the store.
    case deletedAndSaved
}

/// A relationship whose members are still in the store, not in memory.
enum RelationshipFault {
    /// A to-one whose target's identifier was read with the row (`nil`: no target).
    case toOne(UUID?)
    /// A to-many, loaded with one query on first access.
    case toMany
}

/// The bookkeeping LocalStore keeps for each object: identity, context, loaded
/// relationships and the committed values of what changed since the last save.
///
/// `@Entity` adds one to every entity class; apps do not use it directly.
public final class EntityState {
    /// The object's stable identifier.
    ///
    /// A new object draws its random identifier the first time anything asks for it (at the
    /// latest when it is inserted); an object filled from a row gets the stored one. Drawing one
    /// up front cost every fetched object a random UUID that was thrown away at once.
    public internal(set) var objectID: UUID {
        get {
            if let id = storedObjectID { return id }
            let id = UUID.random()
            storedObjectID = id
            return id
        }
        set { storedObjectID = newValue }
    }
    private var storedObjectID: UUID?
    weak var context: ObjectContext?
    var status: ObjectStatus = .transient
    /// Whether the object has a row in the store (it was fetched, or inserted and saved).
    var isStored = false
    /// Whether the object is in its context's list of updated objects.
    var isQueuedForUpdate = false
    /// Relationship index -> fault, for relationships not loaded yet.
    var faults: [Int: RelationshipFault] = [:]
    /// Attribute index -> its column values as last saved; present only for attributes changed since.
    var originalAttributes: [Int: [SQLValue]] = [:]
    /// Relationship index -> its members as last saved; present only for relationships changed since.
    var originalRelationships: [Int: [AnyObject]] = [:]

    /// Creates the state of a new object; its identifier is drawn on first use.
    public init() {}
}

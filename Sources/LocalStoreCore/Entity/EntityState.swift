import Codecs
import Foundation
import Observation
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
enum RelationshipFault: Equatable {
    /// A to-one whose target's identifier was read with the row (`nil`: no target).
    case toOne(UUID?)
    /// A to-many, loaded with one query on first access.
    case toMany
}

/// The bookkeeping LocalStore keeps for each object: identity, context, loaded
/// relationships and the committed values of what changed since the last save.
///
/// `@Entity` adds one to every entity class; apps do not use it directly.
///
/// Every fetched object has one, so its common parts are packed into the object itself (one
/// allocation of 80 bytes): the faults of up to 32 relationships as bits, with the target of one
/// to-one inline. What most objects never need (values as last saved, further to-one targets)
/// lives in an `EntityStateOverflow` made on first use. A dictionary of faults per object would
/// make a fetched object take about three times the memory of a plain Swift object. The object's
/// `ObservationRegistrar` is made at the first read through a generated getter: a registrar is
/// two allocations (about 130 bytes), more than the rest of the state, and objects that are
/// fetched, saved or merged without being read never need one. It is held by an
/// `EntityStateExtension` of its own (32 bytes) until the object needs an overflow, which then
/// takes it over: an object read and never changed does not pay for the overflow's tables.
public final class EntityState {
    // Declared from the widest alignment down, so the fields pack without padding.
    /// The context's reference, while the object is registered in one.
    private var contextReference: ObjectContextReference?
    /// The registrar's holder, or the overflow when ``Flags/hasOverflow`` is set.
    private var extensionRecord: EntityStateExtension?
    private var storedObjectID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    /// The target of the to-one fault at `inlineFaultIndex` (meaningful when `Flags.inlineTarget` is set).
    private var inlineFaultTarget = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    /// Bit `i` set: relationship `i` is a fault, a to-many one unless `i == inlineFaultIndex`.
    private var faultBits: UInt32 = 0
    var status: ObjectStatus = .transient
    private var flags: Flags = []
    /// The relationship whose to-one fault is held inline, or `noInlineFault`.
    private var inlineFaultIndex = EntityState.noInlineFault

    private static let noInlineFault: UInt8 = .max

    private struct Flags: OptionSet {
        let rawValue: UInt8
        static let hasObjectID = Flags(rawValue: 1 << 0)
        static let isStored = Flags(rawValue: 1 << 1)
        static let isQueuedForUpdate = Flags(rawValue: 1 << 2)
        /// The inline to-one fault has a target (otherwise it is `.toOne(nil)`).
        static let inlineTarget = Flags(rawValue: 1 << 3)
        /// `extensionRecord` is an `EntityStateOverflow`.
        static let hasOverflow = Flags(rawValue: 1 << 4)
    }

    /// Creates the state of a new object; its identifier is drawn on first use.
    public init() {}

    /// The context the object is registered in; `nil` when none, or once that context is gone.
    var context: ObjectContext? {
        get { contextReference?.context }
        set { contextReference = newValue?.objectReference }
    }

    /// The object's stable identifier.
    ///
    /// A new object draws its random identifier the first time anything asks for it (at the
    /// latest when it is inserted); an object filled from a row gets the stored one. Drawing one
    /// up front cost every fetched object a random UUID that was thrown away at once.
    public internal(set) var objectID: UUID {
        get {
            if flags.contains(.hasObjectID) { return storedObjectID }
            let id = UUID.random()
            storedObjectID = id
            flags.insert(.hasObjectID)
            return id
        }
        set {
            storedObjectID = newValue
            flags.insert(.hasObjectID)
        }
    }

    /// Whether the object has a row in the store (it was fetched, or inserted and saved).
    var isStored: Bool {
        get { flags.contains(.isStored) }
        set { if newValue { flags.insert(.isStored) } else { flags.remove(.isStored) } }
    }

    /// Whether the object is in its context's list of updated objects.
    var isQueuedForUpdate: Bool {
        get { flags.contains(.isQueuedForUpdate) }
        set { if newValue { flags.insert(.isQueuedForUpdate) } else { flags.remove(.isQueuedForUpdate) } }
    }

    // MARK: Faults

    /// Whether any relationship is still a fault.
    var hasFaults: Bool {
        faultBits != 0 || !(overflow?.faults.isEmpty ?? true)
    }

    /// The fault of relationship `index`, or `nil` when it is loaded.
    func fault(at index: Int) -> RelationshipFault? {
        if index < 32, faultBits & (1 << UInt32(index)) != 0 {
            guard index == Int(inlineFaultIndex) else { return .toMany }
            return .toOne(flags.contains(.inlineTarget) ? inlineFaultTarget : nil)
        }
        return overflow?.faults[index]
    }

    /// Makes relationship `index` a fault (`nil`: loaded).
    func setFault(_ fault: RelationshipFault?, at index: Int) {
        clearFault(at: index)
        guard let fault else { return }
        switch fault {
        case .toMany where index < 32:
            faultBits |= 1 << UInt32(index)
        case .toOne(let target) where index < 32 && inlineFaultIndex == EntityState.noInlineFault:
            faultBits |= 1 << UInt32(index)
            inlineFaultIndex = UInt8(index)
            if let target {
                inlineFaultTarget = target
                flags.insert(.inlineTarget)
            } else {
                flags.remove(.inlineTarget)
            }
        default:
            makeOverflow().faults[index] = fault
        }
    }

    private func clearFault(at index: Int) {
        if index < 32 {
            faultBits &= ~(1 << UInt32(index))
            if index == Int(inlineFaultIndex) { inlineFaultIndex = EntityState.noInlineFault }
        }
        if let overflow, !overflow.faults.isEmpty { overflow.faults[index] = nil }
    }

    /// Marks every relationship as loaded.
    func removeAllFaults() {
        faultBits = 0
        inlineFaultIndex = EntityState.noInlineFault
        overflow?.faults.removeAll()
    }

    // MARK: Values as last saved

    /// Attribute index -> its column values as last saved; present only for attributes changed since.
    var originalAttributes: [Int: [SQLValue]] {
        get { overflow?.originalAttributes ?? [:] }
        _modify { yield &makeOverflow().originalAttributes }
    }

    /// Relationship index -> its members as last saved; present only for relationships changed since.
    var originalRelationships: [Int: [AnyObject]] {
        get { overflow?.originalRelationships ?? [:] }
        _modify { yield &makeOverflow().originalRelationships }
    }

    /// Whether an attribute or relationship changed since the last save.
    var hasOriginalValues: Bool {
        guard let overflow else { return false }
        return !overflow.originalAttributes.isEmpty || !overflow.originalRelationships.isEmpty
    }

    /// Forgets the values as last saved (after a save, a rollback, or a delete in the store).
    func discardOriginalValues() {
        guard let overflow else { return }
        overflow.originalAttributes.removeAll()
        overflow.originalRelationships.removeAll()
        removeEmptyOverflow(overflow)
    }

    // MARK: Observation

    /// The object's registrar, if anything has read the object through its accessors. An object
    /// without one has no observers: observers register through reads, which make it.
    @usableFromInline var observationRegistrar: ObservationRegistrar? { extensionRecord?.observationRegistrar }

    /// The object's registrar, made on first use.
    func makeObservationRegistrar() -> ObservationRegistrar {
        if let record = extensionRecord {
            if let registrar = record.observationRegistrar { return registrar }
            let registrar = ObservationRegistrar()
            record.observationRegistrar = registrar
            return registrar
        }
        let registrar = ObservationRegistrar()
        extensionRecord = EntityStateExtension(observationRegistrar: registrar)
        return registrar
    }

    /// The overflow, if the object has one.
    private var overflow: EntityStateOverflow? {
        guard flags.contains(.hasOverflow), let extensionRecord else { return nil }
        return unsafeDowncast(extensionRecord, to: EntityStateOverflow.self)
    }

    /// The overflow, made on first use; it takes over a registrar made before it.
    private func makeOverflow() -> EntityStateOverflow {
        if let overflow { return overflow }
        let created = EntityStateOverflow(observationRegistrar: extensionRecord?.observationRegistrar)
        extensionRecord = created
        flags.insert(.hasOverflow)
        return created
    }

    /// Drops the overflow once it holds nothing, keeping the registrar.
    private func removeEmptyOverflow(_ overflow: EntityStateOverflow) {
        guard overflow.faults.isEmpty && overflow.originalAttributes.isEmpty && overflow.originalRelationships.isEmpty else { return }
        flags.remove(.hasOverflow)
        extensionRecord = overflow.observationRegistrar.map(EntityStateExtension.init(observationRegistrar:))
    }
}

/// Holds an object's Swift Observation registrar, made at the first read through an accessor.
class EntityStateExtension {
    /// The registrar; `nil` only in an overflow made before any read.
    final var observationRegistrar: ObservationRegistrar?

    init(observationRegistrar: ObservationRegistrar?) {
        self.observationRegistrar = observationRegistrar
    }
}

/// The parts of an ``EntityState`` few objects need, allocated on first use.
final class EntityStateOverflow: EntityStateExtension {
    /// Attribute index -> its column values as last saved.
    var originalAttributes: [Int: [SQLValue]] = [:]
    /// Relationship index -> its members as last saved.
    var originalRelationships: [Int: [AnyObject]] = [:]
    /// Faults the inline fields cannot hold: a second to-one, or a relationship index past 31.
    var faults: [Int: RelationshipFault] = [:]
}

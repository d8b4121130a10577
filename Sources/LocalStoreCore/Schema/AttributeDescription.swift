import SQLiteDatabase
/// A stored attribute of an entity, as declared in Swift.
public struct AttributeDescription: Sendable {
    /// The Swift property name.
    public let name: String
    /// The column name (or column prefix for compositions); `persistentName:` or the property name.
    public let persistentName: String
    /// The name this attribute had before a rename (`originalName:`), used by migration.
    public let originalName: String?
    /// `.unique` and `.indexed`.
    public let options: Set<AttributeOption>
    /// How the value is stored.
    public let storage: AttributeStorage
    /// Whether the Swift type is optional.
    public let isOptional: Bool
    /// The Swift type, e.g. `"Mood"` or `"GeoPoint?"`, for messages and the exported schema.
    public let swiftType: String
    /// The columns, named in full (`location_latitude`).
    public let columns: [ColumnDescription]
    /// The key path of the Swift property, used to translate predicates and sort descriptors.
    public let keyPath: AnyKeyPath & Sendable
    /// For compositions, the field key paths and their columns.
    public let compositionFields: [CompositionFieldDescription]
    /// What a fetch does when the stored value does not decode (`@Attribute(decodeFailure:)`).
    public let decodeFailure: DecodeFailurePolicy
    /// The raw values a `.raw` attribute accepts, in `allCases` order, when its type is
    /// `CaseIterable`; `nil` for every other attribute. Sync refuses any other value on arrival.
    public let rawValues: [SQLValue]?
    /// How concurrent writes merge across replicas (`@Attribute(merge:)`).
    public let mergePolicy: AttributeMergePolicy
    /// For a `.custom` merge policy, the Swift type's merge over column values.
    package let mergeColumnValues: (@Sendable ([SQLValue], [SQLValue]) -> [SQLValue]?)?
    let accessor: any AttributeAccessing

    /// Whether the attribute is declared `.unique`.
    public var isUnique: Bool { options.contains(.unique) }
    /// Whether the attribute is declared `.indexed`.
    public var isIndexed: Bool { options.contains(.indexed) }

    /// Converts a Swift value of this attribute's type (for example a constant captured
    /// by a predicate) to the SQL values of its columns; `nil` when the value has another type.
    public func sqlValues(for value: Any) -> [SQLValue]? {
        accessor.encodeConstant(value)
    }
}

/// One column of an attribute in full.
public struct ColumnDescription: Hashable, Sendable {
    /// The column name in the entity's table.
    public let name: String
    /// The primitive type it holds.
    public let type: AttributeType
    /// Whether it may hold `NULL`.
    public let isNullable: Bool
}

/// A field of a `.composition` attribute and the column holding it.
public struct CompositionFieldDescription: Sendable {
    /// The field name.
    public let name: String
    /// The field's key path inside the composition type.
    public let keyPath: AnyKeyPath & Sendable
    /// Its column.
    public let column: ColumnDescription
    let encodeConstant: @Sendable (Any) -> SQLValue?

    /// Converts a Swift value of the field's type to its SQL value; `nil` for another type.
    public func sqlValue(for value: Any) -> SQLValue? { encodeConstant(value) }
}

/// Reads and writes one attribute of an object, type-erased so the store can work on any entity.
protocol AttributeAccessing: Sendable {
    func encode(_ object: AnyObject, into values: inout [SQLValue]) throws(ValueEncodingFailure)
    func decode(_ object: AnyObject, from row: StoredRow, at offset: Int) throws(ValueDecodingFailure)
    func encodeConstant(_ value: Any) -> [SQLValue]?
    /// ``encode(_:into:)``, ``decode(_:from:at:)`` and the binding of the value to an insert as
    /// closures, the specialized ones when the attribute has them: the per-row loops of fetches
    /// and saves call them without a dynamic dispatch, a generic method and a copy of the
    /// existential in between.
    var coding: AttributeCoding { get }
}

/// An attribute's encoding, decoding and binding as closures, specialized for its entity class
/// and value type where the storage allows (see `PropertyDescription.valueCodingClosures`).
///
/// A class, so that the per-row loops call the closures through an unretained reference (see
/// ``EntityMapping/encodeAttribute(_:of:into:)``): closures kept in an array are stored in
/// their most general form, so every call out of one went through two conversion thunks and
/// retained and released their contexts.
@usableFromInline
final class AttributeCoding: Sendable {
    /// Appends the object's value of the attribute as SQL values.
    let encode: @Sendable (AnyObject, inout [SQLValue]) throws(ValueEncodingFailure) -> Void
    /// Sets the object's value of the attribute from the columns of a stored row at an offset.
    let decode: @Sendable (AnyObject, StoredRow, Int) throws(ValueDecodingFailure) -> Void
    /// Binds the object's value of the attribute to the parameters of a row from a column on.
    let bind: @Sendable (AnyObject, RowBinding, Int) throws -> Void

    @usableFromInline
    init(encode: @escaping @Sendable (AnyObject, inout [SQLValue]) throws(ValueEncodingFailure) -> Void,
         decode: @escaping @Sendable (AnyObject, StoredRow, Int) throws(ValueDecodingFailure) -> Void,
         bind: @escaping @Sendable (AnyObject, RowBinding, Int) throws -> Void) {
        self.encode = encode
        self.decode = decode
        self.bind = bind
    }
}

final class TypedAttributeAccessor<Root: PersistentEntity, Coder: ValueCoder>: AttributeAccessing {
    let get: @Sendable (Root) -> Coder.Value
    let set: @Sendable (Root, Coder.Value) -> Void
    let coder: Coder
    /// The specialized coding of default and `.raw` storage; the other storages go through `coder`.
    let specializedCoding: AttributeCoding?

    init(get: @escaping @Sendable (Root) -> Coder.Value, set: @escaping @Sendable (Root, Coder.Value) -> Void, coder: Coder,
         specializedCoding: AttributeCoding?) {
        self.get = get
        self.set = set
        self.coder = coder
        self.specializedCoding = specializedCoding
    }

    func encode(_ object: AnyObject, into values: inout [SQLValue]) throws(ValueEncodingFailure) {
        if let specializedCoding { return try specializedCoding.encode(object, &values) }
        try coder.encode(get(unsafeDowncast(object, to: Root.self)), into: &values)
    }

    func decode(_ object: AnyObject, from row: StoredRow, at offset: Int) throws(ValueDecodingFailure) {
        if let specializedCoding { return try specializedCoding.decode(object, row, offset) }
        set(unsafeDowncast(object, to: Root.self), try coder.decode(row, at: offset))
    }

    var coding: AttributeCoding {
        if let specializedCoding { return specializedCoding }
        return AttributeCoding(
            encode: { object, values throws(ValueEncodingFailure) in try self.encode(object, into: &values) },
            decode: { object, row, offset throws(ValueDecodingFailure) in try self.decode(object, from: row, at: offset) },
            bind: { object, row, offset in try self.coder.bind(self.get(unsafeDowncast(object, to: Root.self)), to: row, at: offset) })
    }

    func encodeConstant(_ value: Any) -> [SQLValue]? {
        guard let typed = value as? Coder.Value else { return nil }
        var values: [SQLValue] = []
        // A constant JSON cannot express has no SQL form to compare with: like a value of the
        // wrong type, it is reported by the caller as not translatable.
        guard (try? coder.encode(typed, into: &values)) != nil else { return nil }
        return values
    }
}

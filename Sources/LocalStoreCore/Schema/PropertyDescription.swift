import SQLiteDatabase
/// A stored property of an entity: an attribute or a relationship.
///
/// The `@Entity` macro generates one per stored property; the static functions below are
/// what that generated code calls. Apps rarely use them directly.
public enum PropertyDescription: Sendable {
    /// A stored attribute.
    case attribute(AttributeDescription)
    /// A relationship to another entity.
    case relationship(RelationshipDescription)

    /// The Swift property name.
    public var name: String {
        switch self {
        case .attribute(let attribute): return attribute.name
        case .relationship(let relationship): return relationship.name
        }
    }
}

extension PropertyDescription {
    @usableFromInline
    static func makeAttribute<Root: PersistentEntity, Coder: ValueCoder>(
        _ name: String, keyPath: AnyKeyPath & Sendable, coder: Coder, swiftType: String,
        get: @escaping @Sendable (Root) -> Coder.Value, set: @escaping @Sendable (Root, Coder.Value) -> Void,
        options: [AttributeOption], persistentName: String?, originalName: String?, decodeFailure: DecodeFailurePolicy,
        merge: AttributeMergePolicy = .lastWriterWins, specializedCoding: AttributeCoding? = nil
    ) -> PropertyDescription {
        let base = persistentName ?? name
        let shapes = coder.columns
        let columns = shapes.map { shape in
            ColumnDescription(name: shape.suffix.map { base + "_" + $0 } ?? base, type: shape.type, isNullable: shape.isNullable)
        }
        var fields: [CompositionFieldDescription] = []
        if let composition = Coder.self as? any CompositionFieldsProviding.Type {
            fields = zip(composition.fieldKeyPaths(), columns).map { field, column in
                CompositionFieldDescription(name: field.name, keyPath: field.keyPath, column: column, encodeConstant: field.encode)
            }
        }
        return .attribute(AttributeDescription(
            name: name, persistentName: base, originalName: originalName, options: Set(options),
            storage: coder.storage, isOptional: shapes.count == 1 ? shapes[0].isNullable : swiftType.hasSuffix("?"),
            swiftType: swiftType, columns: columns, keyPath: keyPath, compositionFields: fields, decodeFailure: decodeFailure,
            rawValues: (Coder.self as? any RawValuesProviding.Type)?.caseRawValues(),
            mergePolicy: merge, mergeColumnValues: columnMerge(merge, coder: coder),
            accessor: TypedAttributeAccessor(get: get, set: set, coder: coder, specializedCoding: specializedCoding)))
    }

    /// For a `.custom` policy, the type's merge over the attribute's column values: what the sync
    /// engine calls on replicas that have the Swift type. `nil` for other policies.
    static func columnMerge<Coder: ValueCoder>(_ policy: AttributeMergePolicy, coder: Coder) -> (@Sendable ([SQLValue], [SQLValue]) -> [SQLValue]?)? {
        guard let merge = policy.customMerge else { return nil }
        return { first, second in
            guard let first = try? coder.decode(StoredRow(values: first), at: 0), let second = try? coder.decode(StoredRow(values: second), at: 0),
                  let merged = merge(first, second) as? Coder.Value else { return nil }
            var values: [SQLValue] = []
            guard (try? coder.encode(merged, into: &values)) != nil else { return nil }
            return values
        }
    }

    /// Closures that move an attribute's value between the object and SQL values, a stored row
    /// or an insert's parameters, made here, in inlinable code, so that the compiler specializes
    /// them in the entity's own module for its class and the attribute's type. The same steps
    /// through ``TypedAttributeAccessor``'s generic code went through a witness table and value
    /// witnesses for every value, a fifth of fetching an object.
    @inlinable
    static func valueCodingClosures<Root: PersistentEntity, Coder: ValueCoder>(
        _ coder: Coder, get: @escaping @Sendable (Root) -> Coder.Value, set: @escaping @Sendable (Root, Coder.Value) -> Void
    ) -> AttributeCoding {
        AttributeCoding(
            encode: { object, values throws(ValueEncodingFailure) in try coder.encode(get(unsafeDowncast(object, to: Root.self)), into: &values) },
            decode: { object, row, offset throws(ValueDecodingFailure) in
                set(unsafeDowncast(object, to: Root.self), try coder.decode(row, at: offset))
            },
            bind: { object, row, offset in try coder.bind(get(unsafeDowncast(object, to: Root.self)), to: row, at: offset) })
    }

    /// An attribute with default storage (the type is an ``AttributeValue``).
    @inlinable
    public static func attribute<Root: PersistentEntity, Value: AttributeValue>(
        _ name: String, keyPath: KeyPath<Root, Value> & Sendable,
        get: @escaping @Sendable (Root) -> Value, set: @escaping @Sendable (Root, Value) -> Void,
        options: [AttributeOption] = [], persistentName: String? = nil, originalName: String? = nil,
        decodeFailure: DecodeFailurePolicy = .throwError, merge: AttributeMergePolicy = .lastWriterWins
    ) -> PropertyDescription {
        makeAttribute(name, keyPath: keyPath, coder: DefaultCoder<Value>(), swiftType: "\(Value.self)",
                      get: get, set: set, options: options, persistentName: persistentName, originalName: originalName, decodeFailure: decodeFailure,
                      merge: merge, specializedCoding: valueCodingClosures(DefaultCoder<Value>(), get: get, set: set))
    }

    /// An attribute with `.raw` storage.
    @inlinable
    public static func rawAttribute<Root: PersistentEntity, Value: RawRepresentable>(
        _ name: String, keyPath: KeyPath<Root, Value> & Sendable,
        get: @escaping @Sendable (Root) -> Value, set: @escaping @Sendable (Root, Value) -> Void,
        options: [AttributeOption] = [], persistentName: String? = nil, originalName: String? = nil,
        decodeFailure: DecodeFailurePolicy = .throwError, merge: AttributeMergePolicy = .lastWriterWins
    ) -> PropertyDescription where Value.RawValue: AttributeValue {
        makeAttribute(name, keyPath: keyPath, coder: RawCoder<Value>(), swiftType: "\(Value.self)",
                      get: get, set: set, options: options, persistentName: persistentName, originalName: originalName, decodeFailure: decodeFailure,
                      merge: merge, specializedCoding: valueCodingClosures(RawCoder<Value>(), get: get, set: set))
    }

    /// An optional attribute with `.raw` storage.
    @inlinable
    public static func rawAttribute<Root: PersistentEntity, Wrapped: RawRepresentable>(
        _ name: String, keyPath: KeyPath<Root, Wrapped?> & Sendable,
        get: @escaping @Sendable (Root) -> Wrapped?, set: @escaping @Sendable (Root, Wrapped?) -> Void,
        options: [AttributeOption] = [], persistentName: String? = nil, originalName: String? = nil,
        decodeFailure: DecodeFailurePolicy = .throwError, merge: AttributeMergePolicy = .lastWriterWins
    ) -> PropertyDescription where Wrapped.RawValue: AttributeValue {
        makeAttribute(name, keyPath: keyPath, coder: OptionalRawCoder<Wrapped>(), swiftType: "\(Wrapped.self)?",
                      get: get, set: set, options: options, persistentName: persistentName, originalName: originalName, decodeFailure: decodeFailure,
                      merge: merge, specializedCoding: valueCodingClosures(OptionalRawCoder<Wrapped>(), get: get, set: set))
    }

    /// An attribute with `.codable` storage.
    public static func codableAttribute<Root: PersistentEntity, Value: Codable>(
        _ name: String, keyPath: KeyPath<Root, Value> & Sendable,
        get: @escaping @Sendable (Root) -> Value, set: @escaping @Sendable (Root, Value) -> Void,
        options: [AttributeOption] = [], persistentName: String? = nil, originalName: String? = nil,
        decodeFailure: DecodeFailurePolicy = .throwError, merge: AttributeMergePolicy = .lastWriterWins
    ) -> PropertyDescription {
        makeAttribute(name, keyPath: keyPath, coder: CodableCoder<Value>(), swiftType: "\(Value.self)",
                      get: get, set: set, options: options, persistentName: persistentName, originalName: originalName, decodeFailure: decodeFailure,
                      merge: merge)
    }

    /// An optional attribute with `.codable` storage.
    public static func codableAttribute<Root: PersistentEntity, Wrapped: Codable>(
        _ name: String, keyPath: KeyPath<Root, Wrapped?> & Sendable,
        get: @escaping @Sendable (Root) -> Wrapped?, set: @escaping @Sendable (Root, Wrapped?) -> Void,
        options: [AttributeOption] = [], persistentName: String? = nil, originalName: String? = nil,
        decodeFailure: DecodeFailurePolicy = .throwError, merge: AttributeMergePolicy = .lastWriterWins
    ) -> PropertyDescription {
        makeAttribute(name, keyPath: keyPath, coder: OptionalCodableCoder<Wrapped>(), swiftType: "\(Wrapped.self)?",
                      get: get, set: set, options: options, persistentName: persistentName, originalName: originalName, decodeFailure: decodeFailure,
                      merge: merge)
    }

    /// An attribute with `.composition` storage.
    public static func compositionAttribute<Root: PersistentEntity, Value: CompositionValue>(
        _ name: String, keyPath: KeyPath<Root, Value> & Sendable,
        get: @escaping @Sendable (Root) -> Value, set: @escaping @Sendable (Root, Value) -> Void,
        options: [AttributeOption] = [], persistentName: String? = nil, originalName: String? = nil,
        decodeFailure: DecodeFailurePolicy = .throwError, merge: AttributeMergePolicy = .lastWriterWins
    ) -> PropertyDescription {
        makeAttribute(name, keyPath: keyPath, coder: CompositionCoder<Value>(), swiftType: "\(Value.self)",
                      get: get, set: set, options: options, persistentName: persistentName, originalName: originalName, decodeFailure: decodeFailure,
                      merge: merge)
    }

    /// An optional attribute with `.composition` storage.
    public static func compositionAttribute<Root: PersistentEntity, Wrapped: CompositionValue>(
        _ name: String, keyPath: KeyPath<Root, Wrapped?> & Sendable,
        get: @escaping @Sendable (Root) -> Wrapped?, set: @escaping @Sendable (Root, Wrapped?) -> Void,
        options: [AttributeOption] = [], persistentName: String? = nil, originalName: String? = nil,
        decodeFailure: DecodeFailurePolicy = .throwError, merge: AttributeMergePolicy = .lastWriterWins
    ) -> PropertyDescription {
        makeAttribute(name, keyPath: keyPath, coder: OptionalCompositionCoder<Wrapped>(), swiftType: "\(Wrapped.self)?",
                      get: get, set: set, options: options, persistentName: persistentName, originalName: originalName, decodeFailure: decodeFailure,
                      merge: merge)
    }

    /// A to-one relationship (`T?`).
    public static func relationship<Root: PersistentEntity, Target: PersistentEntity>(
        _ name: String, keyPath: KeyPath<Root, Target?> & Sendable,
        get: @escaping @Sendable (Root) -> Target?, set: @escaping @Sendable (Root, Target?) -> Void,
        inverse: String, deleteRule: DeleteRule, minCount: Int? = nil, maxCount: Int? = nil,
        persistentName: String? = nil, originalName: String? = nil
    ) -> PropertyDescription {
        .relationship(RelationshipDescription(
            name: name, kind: .toOne, targetEntityName: "\(Target.self)", targetType: Target.self, inverseName: inverse,
            deleteRule: deleteRule, minCount: minCount, maxCount: maxCount, persistentName: persistentName, originalName: originalName, keyPath: keyPath,
            accessor: ToOneAccessor(get: get, set: set)))
    }

    /// An unordered to-many relationship (`Set<T>`).
    ///
    /// Inlinable, so that the closures that add, remove and look up one member are specialized
    /// in the entity's own module for its classes, as the attribute builders' are: unspecialized,
    /// the set operations hash and copy every member through witness tables, which costs a
    /// tenth of inserting an object whose to-one has a to-many inverse.
    @inlinable
    public static func relationship<Root: PersistentEntity, Target: PersistentEntity>(
        _ name: String, keyPath: KeyPath<Root, Set<Target>> & Sendable,
        get: @escaping @Sendable (Root) -> Set<Target>,
        modify: @escaping @Sendable (Root, (inout Set<Target>) -> Void) -> Void,
        inverse: String, deleteRule: DeleteRule, minCount: Int? = nil, maxCount: Int? = nil,
        persistentName: String? = nil, originalName: String? = nil
    ) -> PropertyDescription {
        makeSetRelationship(
            name, keyPath: keyPath, get: get, modify: modify, inverse: inverse, deleteRule: deleteRule, minCount: minCount, maxCount: maxCount,
            persistentName: persistentName, originalName: originalName,
            memberEditing: SpecializedSetEditing(
                insert: { owner, member in modify(owner) { _ = $0.insert(member) } },
                remove: { owner, member in modify(owner) { _ = $0.remove(member) } },
                contains: { owner, member in get(owner).contains(member) }))
    }

    @usableFromInline
    static func makeSetRelationship<Root: PersistentEntity, Target: PersistentEntity>(
        _ name: String, keyPath: KeyPath<Root, Set<Target>> & Sendable,
        get: @escaping @Sendable (Root) -> Set<Target>,
        modify: @escaping @Sendable (Root, (inout Set<Target>) -> Void) -> Void,
        inverse: String, deleteRule: DeleteRule, minCount: Int?, maxCount: Int?,
        persistentName: String?, originalName: String?, memberEditing: SpecializedSetEditing<Root, Target>
    ) -> PropertyDescription {
        .relationship(RelationshipDescription(
            name: name, kind: .toMany, targetEntityName: "\(Target.self)", targetType: Target.self, inverseName: inverse,
            deleteRule: deleteRule, minCount: minCount, maxCount: maxCount, persistentName: persistentName, originalName: originalName, keyPath: keyPath,
            accessor: SetAccessor(get: get, modify: modify, memberEditing: memberEditing)))
    }

    /// An ordered to-many relationship (`[T]`).
    ///
    /// Inlinable, so that loading the relationship collects its members in code specialized for
    /// the entity's classes.
    @inlinable
    public static func relationship<Root: PersistentEntity, Target: PersistentEntity>(
        _ name: String, keyPath: KeyPath<Root, [Target]> & Sendable,
        get: @escaping @Sendable (Root) -> [Target],
        modify: @escaping @Sendable (Root, (inout [Target]) -> Void) -> Void,
        inverse: String, deleteRule: DeleteRule, minCount: Int? = nil, maxCount: Int? = nil,
        persistentName: String? = nil, originalName: String? = nil
    ) -> PropertyDescription {
        makeArrayRelationship(
            name, keyPath: keyPath, get: get, modify: modify, inverse: inverse, deleteRule: deleteRule, minCount: minCount, maxCount: maxCount,
            persistentName: persistentName, originalName: originalName,
            loadMembers: { owner, load in
                var loaded: [Target] = []
                try load { loaded.append($0 as! Target) }
                modify(owner) { $0 = loaded }
            })
    }

    @usableFromInline
    static func makeArrayRelationship<Root: PersistentEntity, Target: PersistentEntity>(
        _ name: String, keyPath: KeyPath<Root, [Target]> & Sendable,
        get: @escaping @Sendable (Root) -> [Target],
        modify: @escaping @Sendable (Root, (inout [Target]) -> Void) -> Void,
        inverse: String, deleteRule: DeleteRule, minCount: Int?, maxCount: Int?,
        persistentName: String?, originalName: String?, loadMembers: @escaping MemberLoading<Root>
    ) -> PropertyDescription {
        .relationship(RelationshipDescription(
            name: name, kind: .orderedToMany, targetEntityName: "\(Target.self)", targetType: Target.self, inverseName: inverse,
            deleteRule: deleteRule, minCount: minCount, maxCount: maxCount, persistentName: persistentName, originalName: originalName, keyPath: keyPath,
            accessor: ArrayAccessor(get: get, modify: modify, loadMembers: loadMembers)))
    }
}

/// Lets ``PropertyDescription`` list the raw values of a `.raw` attribute's cases without knowing
/// its type statically.
protocol RawValuesProviding {
    /// The raw values of the type's cases in `allCases` order; `nil` when it is not `CaseIterable`.
    static func caseRawValues() -> [SQLValue]?
}

extension RawCoder: RawValuesProviding {
    static func caseRawValues() -> [SQLValue]? { rawValuesOfCases(of: Value.self) }
}

extension OptionalRawCoder: RawValuesProviding {
    static func caseRawValues() -> [SQLValue]? { rawValuesOfCases(of: Wrapped.self) }
}

/// The raw values of `type`'s cases when it is `CaseIterable`: what a `.raw` attribute of that
/// type can hold. A runtime check, so that the macro and existing declarations need no change.
private func rawValuesOfCases<Value: RawRepresentable>(of type: Value.Type) -> [SQLValue]? where Value.RawValue: AttributeValue {
    guard let caseIterable = type as? any CaseIterable.Type else { return nil }
    func cases<Cases: CaseIterable>(_ cases: Cases.Type) -> [Any] { Cases.allCases.map { $0 } }
    return cases(caseIterable).compactMap { ($0 as? Value)?.rawValue.sqlValue }
}

/// Lets ``PropertyDescription`` list a composition's fields without knowing its type statically.
protocol CompositionFieldsProviding {
    static func fieldKeyPaths() -> [(name: String, keyPath: AnyKeyPath & Sendable, encode: @Sendable (Any) -> SQLValue?)]
}

extension CompositionCoder: CompositionFieldsProviding {
    static func fieldKeyPaths() -> [(name: String, keyPath: AnyKeyPath & Sendable, encode: @Sendable (Any) -> SQLValue?)] {
        Value._$compositionFields.map { ($0.name, $0.keyPath, $0.encodeConstant) }
    }
}

extension OptionalCompositionCoder: CompositionFieldsProviding {
    static func fieldKeyPaths() -> [(name: String, keyPath: AnyKeyPath & Sendable, encode: @Sendable (Any) -> SQLValue?)] {
        Wrapped._$compositionFields.map { ($0.name, $0.keyPath, $0.encodeConstant) }
    }
}

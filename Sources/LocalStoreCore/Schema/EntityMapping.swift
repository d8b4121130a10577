/// One relationship with everything the store needs at hand: its inverse and storage.
struct RelationshipMapping: Sendable {
    let index: Int
    let description: RelationshipDescription
    let inverse: RelationshipDescription
    let targetEntityName: String
    let storage: RelationshipStorage
    /// For `.foreignKey` storage, the offset of the column in the entity's `columns`.
    let foreignKeyOffset: Int?
}

/// How one entity maps to its table.
///
/// A class: a save looks the mapping up several times per object, and copying a struct of this
/// many arrays and strings cost a retain and a release of each, every time.
final class EntityMapping: Sendable {
    let description: EntityDescription
    let table: String
    /// Attribute columns in declaration order, then foreign keys and positions; the identifier column is not included.
    let columns: [ColumnDescription]
    /// For each attribute, the offset of its first column in `columns`.
    let attributeColumnOffsets: [Int]
    /// How many of `columns` hold attribute values (they come first).
    let attributeColumnCount: Int
    let relationships: [RelationshipMapping]
    /// `"_object_id", "name", …` quoted for SQL, in `columns` order with the identifier column first.
    ///
    /// Built once here: every insert and fetch uses it, and quoting each name again per row
    /// (Foundation's `replacingOccurrences`) was most of the cost of an insert.
    let selectList: String
    /// `INSERT INTO "Table" (<selectList>) VALUES (?, …)`: one parameter per column of a row.
    let insertSQL: String
    /// Each attribute's encoding and decoding, in declaration order: per-object loops over the
    /// attributes themselves copied every field of each description.
    let attributeCodings: [AttributeCoding]
    /// ``attributeCodings`` unretained, for the per-row calls (the mapping owns them).
    private let unretainedAttributeCodings: [Unmanaged<AttributeCoding>]
    /// For each relationship, the `selectList` position of its foreign-key column, or `nil` when
    /// other rows hold it: what a fetched object's faults are made from, without copying a
    /// `RelationshipMapping` (and retaining its strings and descriptions) per object.
    let foreignKeyColumns: [Int?]
    /// The relationships stored as a foreign key of this entity's row, in column order: the
    /// accessor of each, and whether a position column follows its foreign key. Inserts bind
    /// these per row; copying each `RelationshipMapping` to find them retained and released
    /// the strings of two relationship descriptions per relationship and row.
    let foreignKeyWrites: [(accessor: any RelationshipAccessing, hasPositionColumn: Bool)]
    /// The uniqueness keys (`.unique` attributes, then `#Unique` keys), each with the indices of
    /// its attributes: a save checks these for the objects it inserts or whose key it changes.
    let uniqueKeys: [(key: UniqueKey, attributeIndices: [Int])]
    /// Whether a relationship is stored as other rows' foreign key with a position column (an
    /// ordered to-many whose inverse is a to-one); saves skip the position work without one.
    let hasOrderedInverseForeignKeys: Bool
    /// Whether this entity owns a join table (writes the rows of a many-to-many).
    let ownsJoinTables: Bool
    /// Whether a relationship has a `minCount` or `maxCount` for saves to check.
    let hasCountedRelationships: Bool

    /// The storage layer's statements on the entity's table and join tables.
    let rows: EntityTable

    init(description: EntityDescription, table: String, columns: [ColumnDescription], attributeColumnOffsets: [Int], relationships: [RelationshipMapping]) {
        self.description = description
        self.table = table
        self.columns = columns
        self.attributeColumnOffsets = attributeColumnOffsets
        self.relationships = relationships
        selectList = ([EntityTable.identifierColumn] + columns.map(\.name)).map(quoteIdentifier).joined(separator: ", ")
        let placeholders = Array(repeating: "?", count: columns.count + 1).joined(separator: ", ")
        insertSQL = "INSERT INTO \(quoteIdentifier(table)) (\(selectList)) VALUES (\(placeholders))"
        attributeCodings = description.attributes.map(\.accessor.coding)
        unretainedAttributeCodings = attributeCodings.map(Unmanaged.passUnretained)
        attributeColumnCount = description.attributes.reduce(0) { $0 + $1.columns.count }
        foreignKeyColumns = relationships.map { $0.foreignKeyOffset.map { 1 + $0 } }
        foreignKeyWrites = relationships.compactMap { relationship in
            guard case .foreignKey(_, let positionColumn) = relationship.storage else { return nil }
            return (relationship.description.accessor, positionColumn != nil)
        }
        let attributes = description.attributes
        let singleKeys = attributes.indices.filter { attributes[$0].isUnique }.map { [$0] }
        let compositeKeys = description.uniquenessConstraints.map { names in names.compactMap { description.attributeIndex(named: $0) } }
        uniqueKeys = (singleKeys + compositeKeys).map { indices in
            (UniqueKey(attributeNames: indices.map { attributes[$0].name }, columns: indices.flatMap { attributes[$0].columns.map(\.name) }), indices)
        }
        hasOrderedInverseForeignKeys = relationships.contains {
            if case .inverseForeignKey(_, _, .some) = $0.storage { true } else { false }
        }
        hasCountedRelationships = description.relationships.contains { $0.minCount != nil || $0.maxCount != nil }
        ownsJoinTables = relationships.contains {
            $0.storage.ownsJoinTable
        }
        rows = EntityTable(entity: description.name, table: table, attributeColumns: columns.prefix(attributeColumnCount).map(\.name),
                           relationships: relationships.map { ($0.description.name, $0.storage, $0.description.isSelfInverse(of: description.name)) })
    }

    var name: String { description.name }

    /// Appends the SQL values of the attribute at `index` of `object`.
    ///
    /// - Throws: ``StoreError`` `.unencodableValue` naming the entity, attribute and object when
    ///   the value has no SQL form (a `.codable` value JSON cannot express).
    @inline(__always)
    func encodeAttribute(_ index: Int, of object: any PersistentEntity, into values: inout [SQLValue]) throws(StoreError) {
        let encoded = unretainedAttributeCodings[index]._withUnsafeGuaranteedRef { coding in
            Result { () throws(ValueEncodingFailure) in try coding.encode(object, &values) }
        }
        if case .failure(let error) = encoded { throw description.unencodable(index, of: object, error) }
    }

    /// Binds the attribute at `index` of `object` to the parameters of `row` (an insert of
    /// ``insertSQL``).
    ///
    /// - Throws: ``StoreError`` `.unencodableValue` as ``encodeAttribute(_:of:into:)`` does, or
    ///   the error of a failed bind.
    @inline(__always)
    func bindAttribute(_ index: Int, of object: any PersistentEntity, to row: RowBinding) throws {
        let offset = 1 + attributeColumnOffsets[index]
        let bound = unretainedAttributeCodings[index]._withUnsafeGuaranteedRef { coding in
            Result { () throws in try coding.bind(object, row, offset) }
        }
        guard case .failure(let error) = bound else { return }
        if let failure = error as? ValueEncodingFailure { throw description.unencodable(index, of: object, failure) }
        throw error
    }

    /// Sets the attribute at `index` of `object` from the columns of `row` starting at `offset`.
    @inline(__always)
    func decodeAttributeValue(_ index: Int, of object: any PersistentEntity, from row: StoredRow, at offset: Int) throws(ValueDecodingFailure) {
        try unretainedAttributeCodings[index]._withUnsafeGuaranteedRef { coding in
            Result { () throws(ValueDecodingFailure) in try coding.decode(object, row, offset) }
        }.get()
    }
}

/// Quotes an SQL identifier (table or column name).
package func quoteIdentifier(_ name: String) -> String {
    // Statements are built per row on hot paths; names with quotes in them are rare.
    guard name.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + name + "\"" }
    return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

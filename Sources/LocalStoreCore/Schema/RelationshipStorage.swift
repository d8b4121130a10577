/// Where a relationship's members are stored in the entity tables.
///
/// In a ``SchemaDocument`` it is written as an object with a `kind` string (`foreignKey`,
/// `inverseForeignKey` or `joinTable`) and the names that kind uses; that encoding is part of the
/// document's `versionHash`, so it is kept exactly as it is and this type maps to and from it.
public enum RelationshipStorage: Hashable, Sendable {
    /// A to-one held in this entity's table: the target's identifier in `column`, and, when the
    /// inverse is ordered, this object's index in that ordered relationship in `positionColumn`.
    case foreignKey(column: String, positionColumn: String?)
    /// A to-many whose inverse is a to-one: the members are the rows of `table` whose `column` holds
    /// this object's identifier, ordered by `positionColumn` when ordered.
    case inverseForeignKey(table: String, column: String, positionColumn: String?)
    /// A many-to-many in a join table: this object in `ownerColumn`, members in `memberColumn`;
    /// `positionColumn` orders the members when this side is ordered.
    case joinTable(table: String, ownerColumn: String, memberColumn: String, positionColumn: String?)

    /// The join-table column holding the objects of the side that owns the table (and names it).
    public static let owningSideColumn = "owner"
    /// The join-table column holding the objects of the other side.
    public static let memberSideColumn = "member"
    /// The join-table column ordering the members of the owning side, when that side is ordered.
    public static let joinTablePositionColumn = "position"

    /// The column ordering the members, when the relationship (or, for a foreign key, its inverse) is ordered.
    public var positionColumn: String? {
        switch self {
        case .foreignKey(_, let positionColumn), .inverseForeignKey(_, _, let positionColumn), .joinTable(_, _, _, let positionColumn):
            positionColumn
        }
    }

    /// Whether `other` stores a relationship the same way under other names: the same kind of
    /// storage, the same side owning a join table, and a position column on both or neither
    /// (what a rename may change and a migration carries over).
    package func hasSameShape(as other: RelationshipStorage) -> Bool {
        switch (self, other) {
        case (.foreignKey, .foreignKey), (.inverseForeignKey, .inverseForeignKey):
            return (positionColumn == nil) == (other.positionColumn == nil)
        case (.joinTable, .joinTable):
            return ownsJoinTable == other.ownsJoinTable && (positionColumn == nil) == (other.positionColumn == nil)
        default:
            return false
        }
    }

    /// Whether this is the side of a many-to-many that owns its join table: the side that writes
    /// the join rows, names the table and orders them when the pair is ordered.
    public var ownsJoinTable: Bool {
        if case .joinTable(_, let ownerColumn, _, _) = self { ownerColumn == Self.owningSideColumn } else { false }
    }

    /// The join table, for `.joinTable` storage.
    public var joinTableName: String? {
        if case .joinTable(let table, _, _, _) = self { table } else { nil }
    }

    /// The columns this relationship adds to its own entity's table (a foreign key and its
    /// position), in table order; empty when other rows hold the relationship.
    public var ownTableColumns: [String] {
        if case .foreignKey(let column, let positionColumn) = self { [column] + (positionColumn.map { [$0] } ?? []) } else { [] }
    }
}

extension RelationshipStorage: Codable {
    /// The wire names of a ``SchemaDocument`` relationship's `storage` object.
    private enum CodingKeys: String, CodingKey {
        case kind, table, column, positionColumn, ownerColumn, memberColumn
    }

    /// The `kind` strings of the document.
    private enum Kind: String, Codable {
        case foreignKey, inverseForeignKey, joinTable
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let positionColumn = try container.decodeIfPresent(String.self, forKey: .positionColumn)
        switch try container.decode(Kind.self, forKey: .kind) {
        case .foreignKey:
            self = .foreignKey(column: try container.decode(String.self, forKey: .column), positionColumn: positionColumn)
        case .inverseForeignKey:
            self = .inverseForeignKey(
                table: try container.decode(String.self, forKey: .table), column: try container.decode(String.self, forKey: .column),
                positionColumn: positionColumn)
        case .joinTable:
            self = .joinTable(
                table: try container.decode(String.self, forKey: .table), ownerColumn: try container.decode(String.self, forKey: .ownerColumn),
                memberColumn: try container.decode(String.self, forKey: .memberColumn), positionColumn: positionColumn)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        // Keys in the order of the document's original field declarations and absent rather than
        // null when unused, so encoders without sorted keys write the same bytes as before.
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .foreignKey(let column, let positionColumn):
            try container.encode(Kind.foreignKey, forKey: .kind)
            try container.encode(column, forKey: .column)
            try container.encodeIfPresent(positionColumn, forKey: .positionColumn)
        case .inverseForeignKey(let table, let column, let positionColumn):
            try container.encode(Kind.inverseForeignKey, forKey: .kind)
            try container.encode(table, forKey: .table)
            try container.encode(column, forKey: .column)
            try container.encodeIfPresent(positionColumn, forKey: .positionColumn)
        case .joinTable(let table, let ownerColumn, let memberColumn, let positionColumn):
            try container.encode(Kind.joinTable, forKey: .kind)
            try container.encode(table, forKey: .table)
            try container.encodeIfPresent(positionColumn, forKey: .positionColumn)
            try container.encode(ownerColumn, forKey: .ownerColumn)
            try container.encode(memberColumn, forKey: .memberColumn)
        }
    }
}

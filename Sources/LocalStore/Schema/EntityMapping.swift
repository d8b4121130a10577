/// Where a relationship's members are stored.
enum RelationshipStorage: Sendable {
    /// A to-one held in this entity's table: the target's identifier in `column`, and, when the
    /// inverse is ordered, this object's index in that ordered relationship in `positionColumn`.
    case foreignKey(column: String, positionColumn: String?)
    /// A to-many whose inverse is a to-one: the members are the rows of `table` whose `column` holds
    /// this object's identifier, ordered by `positionColumn` when ordered.
    case inverseForeignKey(table: String, column: String, positionColumn: String?)
    /// A many-to-many in a join table: this object in `ownerColumn`, members in `memberColumn`;
    /// `positionColumn` orders the members when this side is ordered.
    case joinTable(table: String, ownerColumn: String, memberColumn: String, positionColumn: String?)
}

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
struct EntityMapping: Sendable {
    let description: EntityDescription
    let table: String
    /// Attribute columns in declaration order, then foreign keys and positions; `id` is not included.
    let columns: [ColumnDescription]
    /// For each attribute, the offset of its first column in `columns`.
    let attributeColumnOffsets: [Int]
    let relationships: [RelationshipMapping]
    /// `"id", "name", …` quoted for SQL, in `columns` order with `id` first.
    ///
    /// Built once here: every insert and fetch uses it, and quoting each name again per row
    /// (Foundation's `replacingOccurrences`) was most of the cost of an insert.
    let selectList: String
    /// `INSERT INTO "Table" (<selectList>) VALUES (?, …)`: one parameter per column of a row.
    let insertSQL: String

    init(description: EntityDescription, table: String, columns: [ColumnDescription], attributeColumnOffsets: [Int], relationships: [RelationshipMapping]) {
        self.description = description
        self.table = table
        self.columns = columns
        self.attributeColumnOffsets = attributeColumnOffsets
        self.relationships = relationships
        selectList = (["id"] + columns.map(\.name)).map(quoteIdentifier).joined(separator: ", ")
        let placeholders = Array(repeating: "?", count: columns.count + 1).joined(separator: ", ")
        insertSQL = "INSERT INTO \(quoteIdentifier(table)) (\(selectList)) VALUES (\(placeholders))"
    }

    var name: String { description.name }
}

/// Quotes an SQL identifier (table or column name).
package func quoteIdentifier(_ name: String) -> String {
    // Statements are built per row on hot paths; names with quotes in them are rare.
    guard name.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + name + "\"" }
    return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

import Foundation
import SyncKit

/// The CLI's bridge to SyncKit's data-level record editing and reading.
enum RecordAccess {
    static let unavailable = RuntimeError("editing and reading records without Swift types needs RecordEditor, which is not on main yet")

    static func put(_ replica: SyncReplica, entity: String, id: UUID?, values: [(field: String, value: String)]) throws -> UUID {
        throw unavailable
    }

    static func link(_ replica: SyncReplica, entity: String, id: UUID, relationship: String, target: UUID) throws {
        throw unavailable
    }

    static func unlink(_ replica: SyncReplica, entity: String, id: UUID, relationship: String, target: UUID) throws {
        throw unavailable
    }

    static func delete(_ replica: SyncReplica, entity: String, id: UUID) throws {
        throw unavailable
    }

    /// One object as a JSON line, or `nil` when there is none.
    static func record(_ replica: SyncReplica, entity: String, id: UUID) throws -> String? {
        try RecordReader(replica, entity: entity).objects(id: id).first.map(Output.json)
    }

    /// Every object of `entity` as JSON lines, sorted by id.
    static func records(_ replica: SyncReplica, entity: String) throws -> [String] {
        try RecordReader(replica, entity: entity).objects(id: nil).map(Output.json)
    }
}

/// Reads objects straight from an entity's table through the store's schema document, so it
/// needs no Swift types: attributes by column type, relationships by how they are stored.
struct RecordReader {
    let entity: SchemaDocument.Entity
    let connection: SQLiteConnection

    init(_ replica: SyncReplica, entity name: String) throws {
        guard let entity = replica.store.schemaDocument.entity(named: name) else {
            let names = replica.store.schemaDocument.entities.map(\.name).sorted().joined(separator: ", ")
            throw RuntimeError("the store's schema has no entity '\(name)'; it has: \(names)")
        }
        self.entity = entity
        connection = try replica.store.openConnection()
    }

    /// The object with `id`, or all objects sorted by id, as JSON-ready dictionaries.
    func objects(id: UUID?) throws -> [[String: Any]] {
        let columns = entity.attributes.flatMap(\.columns)
        let select = (["id"] + columns.map(\.name)).map(quote).joined(separator: ", ")
        var sql = "SELECT \(select) FROM \(quote(entity.table))"
        var arguments: [SQLValue] = []
        if let id {
            sql += " WHERE id = ?"
            arguments.append(.text(id.uuidString))
        }
        sql += " ORDER BY id"
        return try connection.rows(sql, arguments).map { row in
            guard case .text(let objectID) = row[0] else { throw RuntimeError("a \(entity.name) row has no id") }
            var object: [String: Any] = ["id": objectID]
            var index = 1
            for attribute in entity.attributes {
                let values = Array(row[index..<(index + attribute.columns.count)])
                index += attribute.columns.count
                object[attribute.name] = RecordReader.json(attribute, values)
            }
            for relationship in entity.relationships {
                object[relationship.name] = try members(of: objectID, relationship, row: row, columns: columns)
            }
            return object
        }
    }

    /// A relationship's value: the target's id or null for a to-one, an array of ids otherwise
    /// (in order for ordered relationships, else sorted).
    func members(of objectID: String, _ relationship: SchemaDocument.Relationship, row: [SQLValue], columns: [SchemaDocument.Column]) throws -> Any {
        let storage = relationship.storage
        var ids: [String] = []
        switch storage.kind {
        case "foreignKey":
            let column = try storage.column ?? missing(relationship)
            if let index = columns.firstIndex(where: { $0.name == column }), case .text(let target) = row[index + 1] {
                ids = [target]
            } else if !columns.contains(where: { $0.name == column }),
                      case .text(let target)? = try connection.rows("SELECT \(quote(column)) FROM \(quote(entity.table)) WHERE id = ?", [.text(objectID)]).first?.first {
                ids = [target]
            }
        case "inverseForeignKey":
            let table = try storage.table ?? missing(relationship), column = try storage.column ?? missing(relationship)
            let order = storage.positionColumn.map { "\(quote($0)), id" } ?? "id"
            ids = try connection.rows("SELECT id FROM \(quote(table)) WHERE \(quote(column)) = ? ORDER BY \(order)", [.text(objectID)])
                .compactMap { if case .text(let id) = $0[0] { return id } else { return nil } }
        case "joinTable":
            let table = try storage.table ?? missing(relationship)
            let owner = try storage.ownerColumn ?? missing(relationship), member = try storage.memberColumn ?? missing(relationship)
            let order = storage.positionColumn.map { "\(quote($0)), \(quote(member))" } ?? quote(member)
            ids = try connection.rows("SELECT \(quote(member)) FROM \(quote(table)) WHERE \(quote(owner)) = ? ORDER BY \(order)", [.text(objectID)])
                .compactMap { if case .text(let id) = $0[0] { return id } else { return nil } }
        default:
            throw RuntimeError("\(entity.name).\(relationship.name) has an unknown storage '\(storage.kind)'")
        }
        if relationship.kind == .toOne { return ids.first ?? NSNull() }
        return relationship.kind == .orderedToMany ? ids : ids.sorted()
    }

    func missing(_ relationship: SchemaDocument.Relationship) throws -> String {
        throw RuntimeError("\(entity.name).\(relationship.name)'s storage in the schema is incomplete")
    }

    func quote(_ identifier: String) -> String { "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// An attribute's stored columns as a JSON value: by type for one column; an object keyed by
    /// column name for compositions.
    static func json(_ attribute: SchemaDocument.Attribute, _ values: [SQLValue]) -> Any {
        if attribute.columns.count == 1, let value = values.first {
            return json(value, type: attribute.columns[0].type)
        }
        var object: [String: Any] = [:]
        for (column, value) in zip(attribute.columns, values) {
            var name = column.name
            if name.hasPrefix(attribute.persistentName + "_") { name.removeFirst(attribute.persistentName.count + 1) }
            object[name] = json(value, type: column.type)
        }
        return object.values.allSatisfy { $0 is NSNull } && attribute.optional ? NSNull() : object
    }

    static func json(_ value: SQLValue, type: AttributeType) -> Any {
        switch (value, type) {
        case (.null, _): return NSNull()
        case (.integer(let number), .bool): return number != 0
        case (.integer(let seconds), .date): return Output.date(Date(timeIntervalSince1970: Double(seconds)))
        case (.integer(let number), _): return NSNumber(value: number)
        case (.real(let seconds), .date): return Output.date(Date(timeIntervalSince1970: seconds))
        case (.real(let number), _): return NSNumber(value: number)
        case (.text(let text), .json): return (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) ?? text
        case (.text(let text), _): return text
        case (.blob(let data), _): return data.base64EncodedString()
        }
    }
}

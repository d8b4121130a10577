import Codecs
import Foundation
import LocalStoreCore
import SyncEngine

/// The CLI's bridge to SyncKit's record editing and reading (``RecordEditor``, ``Record``):
/// text from the command line in, JSON out, converted by the schema's attribute types.
enum RecordAccess {
    static func entity(_ replica: SyncReplica, _ name: String) throws -> SchemaDocument.Entity {
        guard let entity = replica.store.schemaDocument.entity(named: name) else {
            let names = replica.store.schemaDocument.entities.map(\.name).sorted().joined(separator: ", ")
            throw RuntimeError("the store's schema has no entity '\(name)'; it has: \(names)")
        }
        return entity
    }

    /// Parses `field=value` texts by the type of the column they name (an attribute, or a
    /// composition field's column).
    static func values(_ entity: SchemaDocument.Entity, _ fields: [(field: String, value: String)]) throws -> [String: SQLValue] {
        var columns: [String: SchemaDocument.Column] = [:]
        for attribute in entity.attributes {
            if attribute.columns.count == 1 {
                columns[attribute.name] = attribute.columns[0]
            } else {
                for column in attribute.columns { columns[column.name] = column }
            }
        }
        var result: [String: SQLValue] = [:]
        for (field, text) in fields {
            guard let column = columns[field] else {
                throw RuntimeError("\(entity.name) has no attribute '\(field)'; it has: \(columns.keys.sorted().joined(separator: ", "))")
            }
            do {
                result[field] = try column.type.parse(text)
            } catch {
                throw RuntimeError("\(entity.name).\(field): \(Output.describe(error))")
            }
        }
        return result
    }

    static func put(_ replica: SyncReplica, entity name: String, id: UUID?, values fields: [(field: String, value: String)]) throws -> UUID {
        let values = try values(try entity(replica, name), fields)
        // Decided before the edit: the editor's body must not call back into the replica.
        let exists = try id.map { try replica.record(name, id: $0) != nil } ?? false
        let objectID = id ?? UUID()
        try replica.edit { editor in
            if exists {
                try editor.update(name, id: objectID, values: values)
            } else {
                try editor.insert(name, id: objectID, values: values)
            }
        }
        return objectID
    }

    static func increment(_ replica: SyncReplica, entity: String, id: UUID, attribute: String, by delta: Int64) throws {
        _ = try RecordAccess.entity(replica, entity)
        guard try replica.record(entity, id: id) != nil else {
            throw RuntimeError("there is no \(entity) with id \(id.uuidString)")
        }
        try replica.edit { try $0.increment(entity, id: id, attribute: attribute, by: delta) }
    }

    static func link(_ replica: SyncReplica, entity: String, id: UUID, relationship: String, target: UUID) throws {
        try replica.edit { try $0.link(entity, id: id, relationship: relationship, target: target) }
    }

    static func unlink(_ replica: SyncReplica, entity: String, id: UUID, relationship: String, target: UUID) throws {
        try replica.edit { try $0.unlink(entity, id: id, relationship: relationship, target: target) }
    }

    static func delete(_ replica: SyncReplica, entity: String, id: UUID) throws {
        _ = try RecordAccess.entity(replica, entity)
        guard try replica.record(entity, id: id) != nil else {
            throw RuntimeError("there is no \(entity) with id \(id.uuidString)")
        }
        try replica.edit { try $0.delete(entity, id: id) }
    }

    /// One object as a JSON line, or `nil` when there is none.
    static func record(_ replica: SyncReplica, entity name: String, id: UUID) throws -> String? {
        let entity = try entity(replica, name)
        return try replica.record(name, id: id).map { json($0, entity).string }
    }

    /// Every object of `entity` as JSON lines, sorted by id.
    static func records(_ replica: SyncReplica, entity name: String) throws -> [String] {
        let entity = try entity(replica, name)
        return try replica.records(name).map { json($0, entity).string }
    }

    /// A record as a JSON object: `id`, attributes by type, relationships as ids (a to-one as
    /// one id or null; unordered to-manys sorted).
    static func json(_ record: Record, _ entity: SchemaDocument.Entity) -> JSONValue {
        var object: [String: JSONValue] = ["id": .string(record.id.uuidString)]
        for (name, values) in record.attributes {
            guard let attribute = entity.attribute(named: name) else { continue }
            object[name] = json(attribute, values)
        }
        for (name, members) in record.relationships {
            let ids = members.map(\.uuidString)
            switch entity.relationship(named: name)?.kind {
            case .toOne?: object[name] = ids.first.map(JSONValue.string) ?? .null
            case .orderedToMany?: object[name] = .array(ids.map(JSONValue.string))
            default: object[name] = .array(ids.sorted().map(JSONValue.string))
            }
        }
        return .object(object)
    }

    /// An attribute's stored columns as a JSON value: by type for one column; an object keyed by
    /// field for compositions (null when an optional composition is absent).
    static func json(_ attribute: SchemaDocument.Attribute, _ values: [SQLValue]) -> JSONValue {
        if attribute.columns.count == 1, let value = values.first {
            return json(value, type: attribute.columns[0].type)
        }
        var object: [String: JSONValue] = [:]
        for (column, value) in zip(attribute.columns, values) {
            var name = column.name
            if name.hasPrefix(attribute.persistentName + "_") { name.removeFirst(attribute.persistentName.count + 1) }
            object[name] = json(value, type: column.type)
        }
        return attribute.optional && values.allSatisfy(\.isNull) ? .null : .object(object)
    }

    static func json(_ value: SQLValue, type: AttributeType) -> JSONValue {
        switch (value, type) {
        case (.null, _): return .null
        case (.integer(let number), .bool): return .bool(number != 0)
        case (.integer(let seconds), .date): return .string(Output.date(Date(timeIntervalSince1970: Double(seconds))))
        case (.integer(let number), _): return .integer(number)
        case (.real(let seconds), .date): return .string(Output.date(Date(timeIntervalSince1970: seconds)))
        case (.real(let number), _): return .double(number)
        // Stored JSON (a `.codable` value) is shown as the JSON it is; text that is not JSON as a string.
        case (.text(let text), .json): return (try? JSONValue(parsing: text)) ?? .string(text)
        case (.text(let text), _): return .string(text)
        case (.blob(let data), _): return .string(data.base64EncodedString())
        }
    }
}

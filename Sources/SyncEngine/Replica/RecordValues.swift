import Codecs
import Foundation
import LocalStoreCore

extension AttributeType {
    /// Parses text typed by a person (for example `sync put Person name=Ada born=2024-05-01T10:00:00Z`)
    /// into the value this type stores. `null` stands for nil.
    ///
    /// Integers and booleans (`true`/`false`/`1`/`0`), reals, dates (ISO 8601 or seconds since
    /// 1970), UUIDs, URLs and decimals are checked; data is base64; JSON must parse.
    public func parse(_ text: String) throws -> SQLValue {
        if text == "null" { return .null }
        func invalid(_ expected: String) -> SyncError {
            SyncError(.schemaMismatch, "'\(text)' is not \(expected)")
        }
        switch self {
        case .bool:
            switch text.lowercased() {
            case "true", "1", "yes": return .integer(1)
            case "false", "0", "no": return .integer(0)
            default: throw invalid("a boolean (true or false)")
            }
        case .int, .int16, .int32, .int64:
            guard let number = Int64(text) else { throw invalid("an integer") }
            let limits: ClosedRange<Int64> = switch self {
            case .int16: Int64(Int16.min)...Int64(Int16.max)
            case .int32: Int64(Int32.min)...Int64(Int32.max)
            default: Int64.min...Int64.max
            }
            guard limits.contains(number) else { throw invalid("an integer that fits \(rawValue)") }
            return .integer(number)
        case .float, .double:
            guard let number = Double(text), number.isFinite else { throw invalid("a finite number") }
            return .real(number)
        case .date:
            if let seconds = Double(text) { return .real(seconds) }
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            if let date = formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text) {
                return .real(date.timeIntervalSince1970)
            }
            throw invalid("a date (ISO 8601, e.g. 2024-05-01T10:00:00Z, or seconds since 1970)")
        case .decimal:
            guard Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) != nil else { throw invalid("a decimal number") }
            return .text(text)
        case .uuid:
            guard let uuid = UUID(storageText: text) else { throw invalid("a UUID") }
            return .text(uuid.storageText)
        case .url:
            guard URL(string: text) != nil else { throw invalid("a URL") }
            return .text(text)
        case .data:
            guard let data = Data(base64Encoded: text) else { throw invalid("base64 data") }
            return .blob(data)
        case .json:
            guard JSONValue.isValid(text) else { throw invalid("JSON") }
            return .text(text)
        case .string:
            return .text(text)
        }
    }
}

/// One stored object, read without its Swift type.
public struct Record: Sendable, Equatable {
    /// The entity's name, as in the schema.
    public var entity: String
    /// The object's identifier.
    public var id: UUID
    /// Attribute name -> one value per column (compositions have several), in declaration order.
    public var attributes: [(name: String, values: [SQLValue])]
    /// Relationship name -> members (in order for ordered relationships), in declaration order.
    public var relationships: [(name: String, members: [UUID])]

    public static func == (lhs: Record, rhs: Record) -> Bool {
        lhs.entity == rhs.entity && lhs.id == rhs.id
            && lhs.attributes.map(\.name) == rhs.attributes.map(\.name) && lhs.attributes.map(\.values) == rhs.attributes.map(\.values)
            && lhs.relationships.map(\.name) == rhs.relationships.map(\.name) && lhs.relationships.map(\.members) == rhs.relationships.map(\.members)
    }
}

/// Reads relationships as the app would see them, from the entity tables.
enum StoredRelationships {
    static func members(of object: ObjectKey, _ relationship: SchemaDocument.Relationship, entity: SchemaDocument.Entity, on connection: SQLiteConnection) throws -> [UUID] {
        try EntityTable.members(of: object.id, in: entity.table, storage: relationship.storage, on: connection)
    }

    /// The record of a row read by ``EntityTable`` as `[identifier, attribute columns…]`.
    static func record(_ entity: SyncSchema.Entity, row: [SQLValue], on connection: SQLiteConnection) throws -> Record? {
        guard let id = row.first?.textValue.flatMap(UUID.init(storageText:)) else { return nil }
        let relationships = try entity.relationships.map {
            ($0.name, try EntityTable.members(of: id, in: entity.table, storage: $0.storage, on: connection))
        }
        return Record(entity: entity.name, id: id, attributes: entity.valuesByAttribute(row.dropFirst()), relationships: relationships)
    }
}

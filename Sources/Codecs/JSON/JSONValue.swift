import Foundation

/// A JSON document as a small tree, for the bodies and lines that are built field by field
/// (server responses, the `sync` CLI's output) rather than streamed like change sets.
///
/// Writing goes through ``JSONWriter`` and parsing through ``JSONReader``, so these documents
/// follow the same rules as the wire format: object keys in byte order, no whitespace, strings
/// escaped as `JSONEncoder` escapes them, slashes not escaped.
///
/// ```swift
/// JSONValue.object(["status": .string("ok")]).string   // {"status":"ok"}
/// ```
package enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case unsignedInteger(UInt64)
    /// A real; a non-finite one is written as `null`, which is all JSON can say of it.
    case double(Double)
    case string(String)
    case array([JSONValue])
    /// Members, written with their keys in byte order whatever the dictionary's order.
    case object([String: JSONValue])
    /// A value that is already encoded JSON, written as is.
    case encoded(Data)

    /// The value as UTF-8 JSON.
    package var data: Data {
        var writer = JSONWriter(reservingCapacity: 128)
        write(to: &writer)
        return writer.data
    }

    /// The value as JSON text.
    package var string: String {
        var writer = JSONWriter(reservingCapacity: 128)
        write(to: &writer)
        return writer.string
    }

    /// Parses one JSON document strictly (RFC 8259, see ``JSONReader``). Numbers without a
    /// fraction or exponent that fit an `Int64` become ``integer(_:)``, other numbers
    /// ``double(_:)``.
    ///
    /// - Throws: a ``JSONReadError`` naming the path and byte offset of what is wrong.
    package init(parsing text: String) throws {
        self = try JSONReader.read(text) { reader in try JSONValue.read(from: &reader, depth: 0) }
    }

    /// Whether `text` is one JSON document (any value, not only an object or array).
    package static func isValid(_ text: String) -> Bool {
        (try? JSONReader.read(text) { reader in try reader.skipValue() }) != nil
    }

    func write(to writer: inout JSONWriter) {
        switch self {
        case .null: writer.writeNull()
        case .bool(let value): writer.writeBool(value)
        case .integer(let value): writer.writeInteger(value)
        case .unsignedInteger(let value): writer.writeUnsignedInteger(value)
        case .double(let value):
            if value.isFinite { try? writer.writeDouble(value) } else { writer.writeNull() }
        case .string(let text): writer.writeString(text)
        case .encoded(let data): writer.writeEncoded(data)
        case .array(let elements):
            writer.beginArray()
            for element in elements { element.write(to: &writer) }
            writer.endArray()
        case .object(let members):
            writer.beginObject()
            for key in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                writer.writeKey(key)
                members[key, default: .null].write(to: &writer)
            }
            writer.endObject()
        }
    }

    private static func read(from reader: inout JSONReader, depth: Int) throws -> JSONValue {
        guard depth < JSONReader.maximumDepth else { throw reader.failure("values nest deeper than \(JSONReader.maximumDepth) levels") }
        switch reader.peekKind() {
        case .object:
            try reader.beginObject()
            var members: [String: JSONValue] = [:]
            while let key = try reader.nextKey() {
                let name = key.string
                members[name] = try JSONReadError.at(.key(name)) { try read(from: &reader, depth: depth + 1) }
            }
            return .object(members)
        case .array:
            try reader.beginArray()
            var elements: [JSONValue] = []
            while try reader.nextElement() {
                elements.append(try JSONReadError.at(.index(elements.count)) { try read(from: &reader, depth: depth + 1) })
            }
            return .array(elements)
        case .string:
            return .string(try reader.readString())
        case .number:
            let start = reader.offset
            if let integer = try? reader.readInteger() { return .integer(integer) }
            reader.offset = start
            return .double(try reader.readDouble())
        case .bool:
            return .bool(try reader.readBool())
        case .null:
            _ = reader.readNullIfPresent()
            return .null
        case nil:
            throw reader.failure("expected a value, found \(reader.found)")
        }
    }
}

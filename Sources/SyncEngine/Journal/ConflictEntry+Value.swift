import Codecs
import Foundation
import LocalStoreCore

extension ConflictEntry {
    /// A value the conflict journal reports for one side of a resolution, as a JSON value.
    ///
    /// - An attribute's value is its SQL value in the sync protocol's JSON form: `null`, an
    ///   integer, a string, `{"real": 1.5}` or `{"blob": "<base64>"}` (``init(_:)``);
    ///   an attribute of several columns (a `.composition`) is an array of them.
    /// - An object ID (`to_one`, `reference_dropped`) or a position key (`move`) is a string.
    ///
    /// ```swift
    /// for entry in try replica.conflicts() where entry.kind == .attribute {
    ///     if case .string(let title)? = entry.loser.value { print("lost the title \(title)") }
    ///     print(entry.loser.value?.jsonText ?? "none")     // "Milk", 3, [{"real":1.5},2], …
    /// }
    /// ```
    public enum Value: Hashable, Sendable {
        /// JSON `null`: an attribute that held SQL `NULL`.
        case null
        /// `true` or `false`.
        case bool(Bool)
        /// A number without a fraction or exponent that fits 64 bits.
        case integer(Int64)
        /// Any other number.
        case number(Double)
        /// A string: text, an object ID, a position key.
        case string(String)
        /// An array: the columns of a multi-column attribute.
        case array([Value])
        /// An object: a real (`{"real": x}`) or a blob (`{"blob": "<base64>"}`).
        case object([String: Value])

        /// An SQL value in the sync protocol's JSON form.
        public init(_ value: SQLValue) {
            switch value {
            case .null: self = .null
            case .integer(let integer): self = .integer(integer)
            case .text(let text): self = .string(text)
            case .real(let real): self = .object(["real": .number(real)])
            case .blob(let data): self = .object(["blob": .string(data.base64EncodedString())])
            }
        }

        /// The value of an attribute's columns: the value itself for one column, else an array.
        init(columns values: [SQLValue]) {
            self = values.count == 1 ? Value(values[0]) : .array(values.map { Value($0) })
        }

        /// Reads one JSON document.
        ///
        /// - Throws: an error naming the byte offset of what is not JSON.
        public init(jsonText: String) throws {
            try self.init(try JSONValue(parsing: jsonText))
        }

        /// The SQL value this is the protocol's JSON form of; `nil` for an array, a boolean, a
        /// non-integer number or an object other than `{"real": x}` and `{"blob": "<base64>"}`.
        public var sqlValue: SQLValue? {
            switch self {
            case .null: return .null
            case .integer(let integer): return .integer(integer)
            case .string(let text): return .text(text)
            case .object(let members) where members.count == 1:
                switch members.first {
                case ("real", .number(let real))?: return .real(real)
                case ("real", .integer(let integer))?: return .real(Double(integer))
                case ("blob", .string(let base64))?: return Data(base64Encoded: base64).map(SQLValue.blob)
                default: return nil
                }
            case .bool, .number, .array, .object: return nil
            }
        }

        /// The value as compact JSON text (object keys in byte order, slashes not escaped).
        public var jsonText: String { json.string }

        /// The value as the JSON tree the command-line tools write.
        package var json: JSONValue {
            switch self {
            case .null: return .null
            case .bool(let bool): return .bool(bool)
            case .integer(let integer): return .integer(integer)
            case .number(let number): return .double(number)
            case .string(let text): return .string(text)
            case .array(let elements): return .array(elements.map(\.json))
            case .object(let members): return .object(members.mapValues(\.json))
            }
        }

        init(_ json: JSONValue) throws {
            switch json {
            case .null: self = .null
            case .bool(let bool): self = .bool(bool)
            case .integer(let integer): self = .integer(integer)
            case .unsignedInteger(let integer): self = Int64(exactly: integer).map(Value.integer) ?? .number(Double(integer))
            case .double(let number): self = .number(number)
            case .string(let text): self = .string(text)
            case .array(let elements): self = .array(try elements.map { try Value($0) })
            case .object(let members): self = .object(try members.mapValues { try Value($0) })
            case .encoded(let data): self = try Value(jsonText: String(decoding: data, as: UTF8.self))
            }
        }
    }
}

extension ConflictEntry.Value: CustomStringConvertible {
    /// The value as JSON text (``jsonText``).
    public var description: String { jsonText }
}

extension ConflictEntry.Value: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByArrayLiteral {
    /// A ``string(_:)``.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An ``integer(_:)``.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// An ``array(_:)``.
    public init(arrayLiteral elements: ConflictEntry.Value...) { self = .array(elements) }
}

extension ConflictEntry.Value: Codable {
    /// Reads the value from any JSON value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let integer = try? container.decode(Int64.self) {
            self = .integer(integer)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let elements = try? container.decode([ConflictEntry.Value].self) {
            self = .array(elements)
        } else {
            self = .object(try container.decode([String: ConflictEntry.Value].self))
        }
    }

    /// Writes the value as itself: `3`, `"x"`, `[…]`, `{…}`, `null`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let bool): try container.encode(bool)
        case .integer(let integer): try container.encode(integer)
        case .number(let number): try container.encode(number)
        case .string(let text): try container.encode(text)
        case .array(let elements): try container.encode(elements)
        case .object(let members): try container.encode(members)
        }
    }
}

import Foundation
import SQLiteDatabase

/// Converts an attribute's Swift value to the SQL values of its columns and back.
///
/// The `@Entity` macro picks a coder from the attribute's storage method; apps do not
/// implement this protocol.
public protocol ValueCoder<Value>: Sendable {
    /// The attribute's Swift type.
    associatedtype Value
    /// The storage method this coder implements.
    var storage: AttributeStorage { get }
    /// The columns a value occupies, in order.
    var columns: [ColumnShape] { get }
    /// Appends one SQL value per column.
    ///
    /// - Throws: ``ValueEncodingFailure`` when the value has no SQL form (only `.codable`
    ///   values can fail, when JSON cannot express them).
    func encode(_ value: Value, into values: inout [SQLValue]) throws(ValueEncodingFailure)
    /// Reads a value from `columns.count` columns of `row` starting at `offset`.
    func decode(_ row: StoredRow, at offset: Int) throws(ValueDecodingFailure) -> Value
    /// Binds a value to `columns.count` parameters of `row` starting at column `offset`, as
    /// ``encode(_:into:)`` would encode it.
    ///
    /// - Throws: ``ValueEncodingFailure`` as ``encode(_:into:)`` does, or the SQLite error of a
    ///   failed bind.
    func bind(_ value: Value, to row: RowBinding, at offset: Int) throws
}

extension ValueCoder {
    /// Encodes the value, then binds each SQL value.
    public func bind(_ value: Value, to row: RowBinding, at offset: Int) throws {
        var values: [SQLValue] = []
        try encode(value, into: &values)
        for index in values.indices { try row.bind(values[index], at: offset + index) }
    }
}

/// Default storage: the value is an ``AttributeValue``.
public struct DefaultCoder<Value: AttributeValue>: ValueCoder {
    /// The coder; it has no state.
    public init() {}
    public var storage: AttributeStorage { .default }
    public var columns: [ColumnShape] {
        [ColumnShape(suffix: nil, type: Value.attributeType, isNullable: Value.isOptionalAttribute)]
    }
    // Inlinable, like the encoders and decoders of `RawCoder` and `OptionalRawCoder`: the
    // attribute builders specialize them into the entity's module (see
    // `PropertyDescription.valueCodingClosures`).
    @inlinable public func encode(_ value: Value, into values: inout [SQLValue]) { values.append(value.sqlValue) }
    @inlinable public func decode(_ row: StoredRow, at offset: Int) throws(ValueDecodingFailure) -> Value {
        try Value.decode(row, at: offset)
    }
    @inlinable public func bind(_ value: Value, to row: RowBinding, at offset: Int) throws {
        try value.bind(to: row, at: offset)
    }
}

/// `.raw` storage of a non-optional `RawRepresentable`.
public struct RawCoder<Value: RawRepresentable>: ValueCoder where Value.RawValue: AttributeValue {
    /// The coder; it has no state.
    public init() {}
    public var storage: AttributeStorage { .raw }
    public var columns: [ColumnShape] {
        [ColumnShape(suffix: nil, type: Value.RawValue.attributeType, isNullable: false)]
    }
    @inlinable public func encode(_ value: Value, into values: inout [SQLValue]) { values.append(value.rawValue.sqlValue) }
    @inlinable public func bind(_ value: Value, to row: RowBinding, at offset: Int) throws {
        try value.rawValue.bind(to: row, at: offset)
    }
    @inlinable public func decode(_ row: StoredRow, at offset: Int) throws(ValueDecodingFailure) -> Value {
        let raw = try Value.RawValue.decode(row, at: offset)
        guard let value = Value(rawValue: raw) else {
            throw ValueDecodingFailure(expected: "a raw value of \(Value.self)", found: row.value(at: offset))
        }
        return value
    }
}

/// `.raw` storage of an optional `RawRepresentable`: `nil` is `NULL`.
public struct OptionalRawCoder<Wrapped: RawRepresentable>: ValueCoder where Wrapped.RawValue: AttributeValue {
    /// The attribute's Swift type, an optional: `nil` is stored as `NULL`.
    public typealias Value = Wrapped?
    /// The coder; it has no state.
    public init() {}
    public var storage: AttributeStorage { .raw }
    public var columns: [ColumnShape] {
        [ColumnShape(suffix: nil, type: Wrapped.RawValue.attributeType, isNullable: true)]
    }
    @inlinable public func encode(_ value: Wrapped?, into values: inout [SQLValue]) {
        values.append(value?.rawValue.sqlValue ?? .null)
    }
    @inlinable public func bind(_ value: Wrapped?, to row: RowBinding, at offset: Int) throws {
        guard let value else { return try row.bind(.null, at: offset) }
        try RawCoder<Wrapped>().bind(value, to: row, at: offset)
    }
    @inlinable public func decode(_ row: StoredRow, at offset: Int) throws(ValueDecodingFailure) -> Wrapped? {
        if row.isNull(at: offset) { return nil }
        return try RawCoder<Wrapped>().decode(row, at: offset)
    }
}

/// JSON for `.codable` storage: sorted keys, so equal values always store equal text.
enum CodableJSON {
    static func encode<T: Encodable>(_ value: T) throws(ValueEncodingFailure) -> SQLValue {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .secondsSince1970
        do {
            return .text(String(decoding: try encoder.encode(value), as: UTF8.self))
        } catch {
            // Only values JSON cannot express fail here (e.g. a non-finite Double); storing
            // anything else would silently lose data, so the save fails instead.
            throw ValueEncodingFailure("cannot encode \(T.self) as JSON for .codable storage: \(CodableJSON.describe(error))")
        }
    }

    /// An `EncodingError` as a sentence naming the path of the value that failed.
    private static func describe(_ error: any Error) -> String {
        guard case .invalidValue(let value, let context) = error as? EncodingError else { return "\(error)" }
        let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return "\(value) at \(path.isEmpty ? "top level" : path): \(context.debugDescription)"
    }

    static func decode<T: Decodable>(_ type: T.Type, from value: SQLValue) throws(ValueDecodingFailure) -> T {
        guard case .text(let text) = value else {
            throw ValueDecodingFailure(expected: "JSON text for \(T.self)", found: value)
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        do {
            return try decoder.decode(T.self, from: Data(text.utf8))
        } catch {
            throw ValueDecodingFailure(expected: "JSON decodable as \(T.self) (\(error))", found: value)
        }
    }
}

/// `.codable` storage of a non-optional value.
public struct CodableCoder<Value: Codable>: ValueCoder {
    /// The coder; it has no state.
    public init() {}
    public var storage: AttributeStorage { .codable }
    public var columns: [ColumnShape] { [ColumnShape(suffix: nil, type: .json, isNullable: false)] }
    public func encode(_ value: Value, into values: inout [SQLValue]) throws(ValueEncodingFailure) {
        values.append(try CodableJSON.encode(value))
    }
    public func decode(_ row: StoredRow, at offset: Int) throws(ValueDecodingFailure) -> Value {
        try CodableJSON.decode(Value.self, from: row.value(at: offset))
    }
}

/// `.codable` storage of an optional value: `nil` is `NULL`, not the JSON text `null`.
public struct OptionalCodableCoder<Wrapped: Codable>: ValueCoder {
    /// The attribute's Swift type, an optional: `nil` is stored as `NULL`.
    public typealias Value = Wrapped?
    /// The coder; it has no state.
    public init() {}
    public var storage: AttributeStorage { .codable }
    public var columns: [ColumnShape] { [ColumnShape(suffix: nil, type: .json, isNullable: true)] }
    public func encode(_ value: Wrapped?, into values: inout [SQLValue]) throws(ValueEncodingFailure) {
        guard let value else {
            values.append(.null)
            return
        }
        values.append(try CodableJSON.encode(value))
    }
    public func decode(_ row: StoredRow, at offset: Int) throws(ValueDecodingFailure) -> Wrapped? {
        if row.isNull(at: offset) { return nil }
        return try CodableJSON.decode(Wrapped.self, from: row.value(at: offset))
    }
}

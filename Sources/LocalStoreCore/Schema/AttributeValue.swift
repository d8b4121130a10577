import Codecs
import Foundation
import SQLiteDatabase

/// The primitive type an attribute's column holds, as recorded in the exported schema.
public enum AttributeType: String, Hashable, Sendable, Codable, CaseIterable {
    /// `Bool`, stored as the integer 0 or 1.
    case bool
    /// `Int`, an integer.
    case int
    /// `Int16`, an integer in its range.
    case int16
    /// `Int32`, an integer in its range.
    case int32
    /// `Int64`, an integer.
    case int64
    /// `Float`, a real within its range.
    case float
    /// `Double`, a real.
    case double
    /// `Decimal`, stored as its text so no digit is lost.
    case decimal
    /// `String`, text.
    case string
    /// `Date`, a real: seconds since 1970.
    case date
    /// `Data`, a blob.
    case data
    /// `UUID`, its text.
    case uuid
    /// `URL`, its absolute string.
    case url
    /// JSON text written by `.codable` storage.
    case json

    /// The SQL column type used to store values of this type.
    public var columnType: ColumnType {
        switch self {
        case .bool, .int, .int16, .int32, .int64: return .integer
        case .float, .double, .date: return .real
        case .decimal, .string, .uuid, .url, .json: return .text
        case .data: return .blob
        }
    }
}

/// Why a stored SQL value could not become the Swift value an attribute declares.
public struct ValueDecodingFailure: Error, Sendable, CustomStringConvertible {
    /// What was expected, e.g. `"an integer"` or `"a raw value of Mood"`.
    public var expected: String
    /// The stored value that did not fit.
    public var found: SQLValue

    /// A failure to read `found` as `expected`.
    public init(expected: String, found: SQLValue) {
        self.expected = expected
        self.found = found
    }

    public var description: String { "expected \(expected), found \(found.storageClassName) \(found)" }
}

/// Why a Swift value could not become SQL values: ``ValueCoder/encode(_:into:)`` throws it, and
/// a save turns it into a ``StoreError`` naming the entity, attribute and object.
public struct ValueEncodingFailure: Error, Sendable, CustomStringConvertible {
    /// What could not be encoded and why, e.g. `cannot encode Reading as JSON: …`.
    public var message: String

    /// A failure described by `message`.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

/// A Swift type that maps to exactly one SQL column with the default storage method.
///
/// `Bool`, the integer types, `Float`, `Double`, `Decimal`, `String`, `Date`, `Data`,
/// `UUID`, `URL` and their optionals conform. Entities declare attributes of these types
/// without any storage option:
///
/// ```swift
/// @Entity final class Person {
///     var name: String = ""
///     var born: Date? = nil
/// }
/// ```
public protocol AttributeValue: SendableMetatype {
    /// The primitive type recorded in the schema.
    static var attributeType: AttributeType { get }
    /// Whether `nil` is a valid value (the column is nullable).
    static var isOptionalAttribute: Bool { get }
    /// The value as SQLite stores it.
    var sqlValue: SQLValue { get }
    /// Reads a value back from SQLite.
    static func decode(_ value: SQLValue) throws(ValueDecodingFailure) -> Self
    /// Reads a value from column `index` of a stored row, by the rules of ``decode(_:)``.
    ///
    /// The types LocalStore declares read the column where it lies when it has the storage
    /// class they expect, with no ``SQLValue`` in between; the default reads ``StoredRow/value(at:)``.
    static func decode(_ row: StoredRow, at index: Int) throws(ValueDecodingFailure) -> Self
    /// Binds the value to the parameter of column `index` of a row being inserted, as
    /// ``sqlValue`` would be bound.
    ///
    /// `String` and `UUID` bind their text without making an ``SQLValue`` first; the default
    /// binds ``sqlValue``.
    func bind(to row: RowBinding, at index: Int) throws
}

extension AttributeValue {
    public static var isOptionalAttribute: Bool { false }
    public static func decode(_ row: StoredRow, at index: Int) throws(ValueDecodingFailure) -> Self {
        try decode(row.value(at: index))
    }
    public func bind(to row: RowBinding, at index: Int) throws {
        try row.bind(sqlValue, at: index)
    }
}

extension Optional: AttributeValue where Wrapped: AttributeValue {
    public static var attributeType: AttributeType { Wrapped.attributeType }
    public static var isOptionalAttribute: Bool { true }
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
    public static func decode(_ value: SQLValue) throws(ValueDecodingFailure) -> Self {
        if case .null = value { return nil }
        return try Wrapped.decode(value)
    }
    // Inlinable, so that an entity's module reads an optional attribute with its wrapped type's
    // decoding called directly, not through this generic code and the type's metadata.
    @inlinable public static func decode(_ row: StoredRow, at index: Int) throws(ValueDecodingFailure) -> Self {
        if row.isNull(at: index) { return nil }
        return try Wrapped.decode(row, at: index)
    }
    @inlinable public func bind(to row: RowBinding, at index: Int) throws {
        guard let self else { return try row.bind(.null, at: index) }
        try self.bind(to: row, at: index)
    }
}

extension Bool: AttributeValue {
    public static var attributeType: AttributeType { .bool }
    public var sqlValue: SQLValue { .integer(self ? 1 : 0) }
    public static func decode(_ value: SQLValue) throws(ValueDecodingFailure) -> Bool {
        if case .integer(let number) = value { return number != 0 }
        throw ValueDecodingFailure(expected: "a boolean (integer 0 or 1)", found: value)
    }
    public static func decode(_ row: StoredRow, at index: Int) throws(ValueDecodingFailure) -> Bool {
        if let number = row.integer(at: index) { return number != 0 }
        return try decode(row.value(at: index))
    }
}

/// Integer attributes share one decoding rule: SQLite integers that fit the Swift type.
protocol IntegerAttributeValue: AttributeValue, FixedWidthInteger {}

extension IntegerAttributeValue {
    public var sqlValue: SQLValue { .integer(Int64(self)) }
    public static func decode(_ value: SQLValue) throws(ValueDecodingFailure) -> Self {
        if case .integer(let number) = value, let exact = Self(exactly: number) { return exact }
        throw ValueDecodingFailure(expected: "an integer that fits \(Self.self)", found: value)
    }
    public static func decode(_ row: StoredRow, at index: Int) throws(ValueDecodingFailure) -> Self {
        if let number = row.integer(at: index), let exact = Self(exactly: number) { return exact }
        return try decode(row.value(at: index))
    }
}

extension Int: IntegerAttributeValue { public static var attributeType: AttributeType { .int } }
extension Int16: IntegerAttributeValue { public static var attributeType: AttributeType { .int16 } }
extension Int32: IntegerAttributeValue { public static var attributeType: AttributeType { .int32 } }
extension Int64: IntegerAttributeValue { public static var attributeType: AttributeType { .int64 } }

extension Double: AttributeValue {
    public static var attributeType: AttributeType { .double }
    public var sqlValue: SQLValue { .real(self) }
    public static func decode(_ value: SQLValue) throws(ValueDecodingFailure) -> Double {
        switch value {
        case .real(let number): return number
        case .integer(let number): return Double(number)
        default: throw ValueDecodingFailure(expected: "a real number", found: value)
        }
    }
    public static func decode(_ row: StoredRow, at index: Int) throws(ValueDecodingFailure) -> Double {
        if let number = row.real(at: index) { return number }
        return try decode(row.value(at: index))
    }
}

extension Float: AttributeValue {
    public static var attributeType: AttributeType { .float }
    public var sqlValue: SQLValue { .real(Double(self)) }
    public static func decode(_ value: SQLValue) throws(ValueDecodingFailure) -> Float {
        Float(try Double.decode(value))
    }
}

extension Decimal: AttributeValue {
    public static var attributeType: AttributeType { .decimal }
    /// Stored as text so no digit is lost; queries compare it numerically with `CAST`.
    public var sqlValue: SQLValue { .text(description) }
    public static func decode(_ value: SQLValue) throws(ValueDecodingFailure) -> Decimal {
        switch value {
        case .text(let text):
            if let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) { return decimal }
        case .integer(let number): return Decimal(number)
        case .real(let number): return Decimal(number)
        default: break
        }
        throw ValueDecodingFailure(expected: "a decimal number", found: value)
    }
}

extension String: AttributeValue {
    public static var attributeType: AttributeType { .string }
    public var sqlValue: SQLValue { .text(self) }
    public static func decode(_ value: SQLValue) throws(ValueDecodingFailure) -> String {
        if case .text(let text) = value { return text }
        throw ValueDecodingFailure(expected: "text", found: value)
    }
    public static func decode(_ row: StoredRow, at index: Int) throws(ValueDecodingFailure) -> String {
        if let text = row.text(at: index) { return text }
        return try decode(row.value(at: index))
    }
    public func bind(to row: RowBinding, at index: Int) throws {
        try row.bind(text: self, at: index)
    }
}

extension Date: AttributeValue {
    public static var attributeType: AttributeType { .date }
    /// Seconds since 1970 as a real number: sortable and comparable in SQL.
    public var sqlValue: SQLValue { .real(timeIntervalSince1970) }
    public static func decode(_ value: SQLValue) throws(ValueDecodingFailure) -> Date {
        switch value {
        case .real(let seconds): return Date(timeIntervalSince1970: seconds)
        case .integer(let seconds): return Date(timeIntervalSince1970: Double(seconds))
        default: throw ValueDecodingFailure(expected: "a date (seconds since 1970)", found: value)
        }
    }
    public static func decode(_ row: StoredRow, at index: Int) throws(ValueDecodingFailure) -> Date {
        if let seconds = row.real(at: index) { return Date(timeIntervalSince1970: seconds) }
        return try decode(row.value(at: index))
    }
}

extension Data: AttributeValue {
    public static var attributeType: AttributeType { .data }
    public var sqlValue: SQLValue { .blob(self) }
    public static func decode(_ value: SQLValue) throws(ValueDecodingFailure) -> Data {
        if case .blob(let data) = value { return data }
        throw ValueDecodingFailure(expected: "a blob", found: value)
    }
}

extension UUID: AttributeValue {
    public static var attributeType: AttributeType { .uuid }
    public var sqlValue: SQLValue { .text(storageText) }
    public static func decode(_ value: SQLValue) throws(ValueDecodingFailure) -> UUID {
        if case .text(let text) = value, let uuid = UUID(storageText: text) { return uuid }
        throw ValueDecodingFailure(expected: "a UUID string", found: value)
    }
    public static func decode(_ row: StoredRow, at index: Int) throws(ValueDecodingFailure) -> UUID {
        if let uuid = row.uuid(at: index) { return uuid }
        return try decode(row.value(at: index))
    }
    public func bind(to row: RowBinding, at index: Int) throws {
        try row.bind(storageTextOf: self, at: index)
    }
}

extension URL: AttributeValue {
    public static var attributeType: AttributeType { .url }
    public var sqlValue: SQLValue { .text(absoluteString) }
    public static func decode(_ value: SQLValue) throws(ValueDecodingFailure) -> URL {
        if case .text(let text) = value, let url = URL(string: text) { return url }
        throw ValueDecodingFailure(expected: "a URL string", found: value)
    }
}

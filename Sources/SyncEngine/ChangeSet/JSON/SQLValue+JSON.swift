import Codecs
import Foundation
import LocalStoreCore

/// SQL values in the protocol's JSON form (`Protocol/README.md`, "SQL values"): `null`, a JSON
/// integer, a JSON string, `{"real": 1.5}`, `{"blob": "<base64>"}`. Reals are wrapped so that
/// `1.0` does not come back as the integer `1`.
///
/// The bytes are those of `SQLValue`'s `Codable` form through `JSONEncoder` with sorted keys, so
/// JSON already stored by that route (the conflict journal, tombstones) compares equal as text.
extension JSONWriter {
    /// Writes one SQL value.
    ///
    /// - Throws: `EncodingError.invalidValue` for a real that is infinite or NaN.
    mutating func writeSQLValue(_ value: SQLValue) throws {
        switch value {
        case .null:
            writeNull()
        case .integer(let integer):
            writeInteger(integer)
        case .text(let text):
            writeString(text)
        case .real(let real):
            beginObject()
            writeKey("real")
            try writeDouble(real)
            endObject()
        case .blob(let data):
            beginObject()
            writeKey("blob")
            writeBase64(data)
            endObject()
        }
    }

    /// Writes SQL values as a JSON array.
    mutating func writeSQLValues(_ values: [SQLValue]) throws {
        beginArray()
        for value in values { try writeSQLValue(value) }
        endArray()
    }
}

extension JSONReader {
    /// Reads one SQL value. A bare number must be an integer that fits in 64 bits; an object
    /// must have exactly one of `real` (any number) and `blob` (base64); other keys are ignored,
    /// as `Codable` ignored them.
    mutating func readSQLValue() throws -> SQLValue {
        switch peekKind() {
        case .null:
            _ = readNullIfPresent()
            return .null
        case .string:
            return .text(try readString())
        case .number:
            do {
                return .integer(try readInteger())
            } catch var error as JSONReadError {
                error.message += " (a real is written {\"real\": x})"
                throw error
            }
        case .object:
            return try readTaggedSQLValue()
        case .array, .bool, nil:
            throw failure("expected null, an integer, a string, {\"real\": x} or {\"blob\": \"<base64>\"}, found \(found)")
        }
    }

    /// Reads SQL values from a JSON array; errors name the element (`[2]`).
    mutating func readSQLValues() throws -> [SQLValue] {
        try beginArray()
        var values: [SQLValue] = []
        while try nextElement() {
            values.append(try JSONReadError.at(.index(values.count)) { try readSQLValue() })
        }
        return values
    }

    /// `{"real": x}` or `{"blob": "<base64>"}`.
    private mutating func readTaggedSQLValue() throws -> SQLValue {
        let start = offset
        try beginObject()
        var value: SQLValue?
        while let key = try nextKey() {
            let isReal = key.matches("real")
            guard isReal || key.matches("blob") else {
                try skipValue()
                continue
            }
            // null stands for an absent key, as it did for Codable's decodeIfPresent.
            if readNullIfPresent() { continue }
            guard value == nil else {
                throw failure("a SQL value object must have only one of 'real' and 'blob'")
            }
            if isReal {
                value = .real(try JSONReadError.at(.key("real")) { try readDouble() })
            } else {
                let blobStart = offset
                let text = try JSONReadError.at(.key("blob")) { try readString() }
                guard let data = Data(base64Encoded: text) else {
                    throw JSONReadError(message: "the blob is not base64", offset: blobStart, path: [.key("blob")])
                }
                value = .blob(data)
            }
        }
        guard let value else {
            throw JSONReadError(message: "expected {\"real\": x} or {\"blob\": \"<base64>\"}, found an object with neither", offset: start)
        }
        return value
    }
}

import Codecs
import Foundation
import LocalStoreCore

/// The binary form of an SQL value, shared by stored change sets (``StoredOperations``) and the
/// conflict journal (``JournalBatch``):
///
/// ```
/// value := 0 (null) | 1, zigzag varint (integer) | 2, 8 bytes little-endian (real's bits)
///        | 3, string (text) | 4, length varint, bytes (blob)
/// ```
enum SQLValueTag: UInt8 {
    case null = 0, integer, real, text, blob
}

extension ByteWriter {
    /// Writes `value` with its tag.
    ///
    /// - Throws: `EncodingError.invalidValue` for a real that is infinite or NaN, which the wire
    ///   format cannot carry either (and no SQLite column holds).
    mutating func writeSQLValue(_ value: SQLValue) throws {
        switch value {
        case .null:
            writeByte(SQLValueTag.null.rawValue)
        case .integer(let integer):
            writeByte(SQLValueTag.integer.rawValue)
            writeSignedVarint(integer)
        case .real(let real):
            guard real.isFinite else {
                throw EncodingError.invalidValue(real, EncodingError.Context(
                    codingPath: [], debugDescription: "the real \(real) is not finite: the change-set format has no representation for it"))
            }
            writeByte(SQLValueTag.real.rawValue)
            writeFixed64(real.bitPattern)
        case .text(let text):
            writeByte(SQLValueTag.text.rawValue)
            writeString(text)
        case .blob(let data):
            writeByte(SQLValueTag.blob.rawValue)
            data.withUnsafeBytes { writeLengthPrefixed($0) }
        }
    }
}

extension ByteReader {
    /// Reads what ``ByteWriter/writeSQLValue(_:)`` wrote.
    mutating func readSQLValue() throws -> SQLValue {
        let start = offset
        let tag = try readByte()
        switch SQLValueTag(rawValue: tag) {
        case .null: return .null
        case .integer: return .integer(try readSignedVarint())
        case .real: return .real(Double(bitPattern: try readFixed64()))
        case .text: return .text(try readString())
        case .blob: return .blob(Data(try readLengthPrefixed()))
        case nil: throw failure("the value tag \(tag) is not one of null 0, integer 1, real 2, text 3, blob 4", at: start)
        }
    }
}

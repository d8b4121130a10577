import Codecs
import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import Testing

/// `ByteWriter` and `ByteReader` on their own: every value reads back, and bad bytes are refused
/// with where.
@Suite struct ByteCodingTests {
    private func read<T>(_ bytes: [UInt8], _ body: (inout ByteReader) throws -> T) throws -> T {
        try bytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            return try body(&reader)
        }
    }

    @Test func valuesReadBackAsWritten() throws {
        let varints: [UInt64] = [0, 1, 127, 128, 16_383, 16_384, UInt64(UInt32.max), .max]
        let signed: [Int64] = [0, -1, 1, -64, 64, .min, .max]
        let values: [SQLValue] = [.null, .integer(0), .integer(.min), .integer(.max), .real(-0.5), .real(.greatestFiniteMagnitude),
                                  .text(""), .text("é 🙂 \u{0}"), .blob(Data()), .blob(Data((0...255).map(UInt8.init)))]
        let uuid = UUID()
        var writer = ByteWriter()
        for value in varints { writer.writeVarint(value) }
        for value in signed { writer.writeSignedVarint(value) }
        writer.writeFixed64(0x0102_0304_0506_0708)
        writer.writeUUID(uuid)
        for value in values { try writer.writeSQLValue(value) }
        let bytes = writer.withBytes { [UInt8]($0) }
        // Varints take a byte per seven bits, low bits first.
        #expect(bytes.prefix(5) == [0, 1, 127, 0x80, 0x01])

        let read = try read(bytes) { reader in
            var readVarints: [UInt64] = [], readSigned: [Int64] = [], readValues: [SQLValue] = []
            for _ in varints { readVarints.append(try reader.readVarint()) }
            for _ in signed { readSigned.append(try reader.readSignedVarint()) }
            let fixed = try reader.readFixed64(), readUUID = try reader.readUUID()
            for _ in values { readValues.append(try reader.readSQLValue()) }
            return (readVarints, readSigned, fixed, readUUID, readValues, reader.isAtEnd)
        }
        #expect(read.0 == varints)
        #expect(read.1 == signed)
        #expect(read.2 == 0x0102_0304_0506_0708)
        #expect(read.3 == uuid)
        #expect(read.4 == values)
        #expect(read.5)
    }

    @Test func nonFiniteRealsAreRefused() {
        var writer = ByteWriter()
        #expect(throws: EncodingError.self) { try writer.writeSQLValue(.real(.nan)) }
    }

    @Test(arguments: [
        ([0x80, 0x80], "unexpected end of data at byte 2"),
        ([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02], "a varint is longer than 64 bits at byte 0"),
    ] as [([UInt8], String)])
    func badVarintsAreRefused(bytes: [UInt8], reason: String) throws {
        let failure = try #require(throws: ByteReadError.self) { try read(bytes) { try $0.readVarint() } }
        #expect(failure.description == reason)
    }

    @Test func badStringsAndTagsAreRefusedWithTheirOffset() throws {
        let utf8Failure = try #require(throws: ByteReadError.self) {
            try read([9, 2, 0xC3, 0x28]) { reader in
                _ = try reader.readByte()
                return try reader.readString()
            }
        }
        #expect(utf8Failure.description == "a string is not valid UTF-8 at byte 1")
        let lengthFailure = try #require(throws: ByteReadError.self) { try read([5, 65]) { try $0.readString() } }
        #expect(lengthFailure.description.contains("cannot fit in the 1 bytes left"), "\(lengthFailure)")
        let tagFailure = try #require(throws: ByteReadError.self) { try read([7]) { try $0.readSQLValue() } }
        #expect(tagFailure.description.hasPrefix("the value tag 7 is not one of"))
    }
}

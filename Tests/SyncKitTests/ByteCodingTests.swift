import Foundation
import Testing
@testable import LocalStore
@testable import SyncKit

/// `ByteWriter` and `ByteReader`: every value reads back, and bad bytes are refused with where.
@Suite struct ByteCodingTests {
    @Test func valuesReadBackAsWritten() throws {
        let varints: [UInt64] = [0, 1, 127, 128, 16_383, 16_384, UInt64(UInt32.max), .max]
        let values: [SQLValue] = [.null, .integer(0), .integer(.min), .integer(.max), .real(-0.5), .real(.greatestFiniteMagnitude),
                                  .text(""), .text("é 🙂 \u{0}"), .blob(Data()), .blob(Data((0...255).map(UInt8.init)))]
        let uuid = UUID()
        var writer = ByteWriter()
        for value in varints { writer.writeVarint(value) }
        writer.writeFixed64(0x0102_0304_0506_0708)
        writer.writeUUID(uuid)
        writer.writeOptionalString(nil)
        writer.writeOptionalString("x")
        for value in values { writer.writeSQLValue(value) }
        // Varints take a byte per seven bits.
        #expect(writer.bytes.prefix(4) == [0, 1, 127, 0x80])

        var reader = ByteReader(writer.bytes)
        #expect(try varints.map { _ in try reader.readVarint() } == varints)
        #expect(try reader.readFixed64() == 0x0102_0304_0506_0708)
        #expect(try reader.readUUID() == uuid)
        #expect(try reader.readOptionalString() == nil)
        #expect(try reader.readOptionalString() == "x")
        #expect(try values.map { _ in try reader.readSQLValue() } == values)
        #expect(reader.isAtEnd)
    }

    @Test(arguments: [
        ([0x80, 0x80], "needs 1 byte(s), 0 left"),
        ([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02], "longer than 64 bits"),
    ] as [([UInt8], String)])
    func badVarintsAreRefused(bytes: [UInt8], reason: String) throws {
        var reader = ByteReader(bytes)
        let failure = try #require(throws: ByteReader.Failure.self) { try reader.readVarint() }
        #expect(failure.description.contains(reason), "\(failure)")
    }

    @Test func badStringsAndTagsAreRefusedWithTheirOffset() throws {
        var invalidUTF8 = ByteReader([9, 2, 0xC3, 0x28])
        _ = try invalidUTF8.readByte()
        let utf8Failure = try #require(throws: ByteReader.Failure.self) { try invalidUTF8.readString() }
        #expect(utf8Failure.description == "at byte 1: a string is not valid UTF-8")

        var tooLong = ByteReader([5, 65])
        let lengthFailure = try #require(throws: ByteReader.Failure.self) { try tooLong.readString() }
        #expect(lengthFailure.description.contains("a string of 5 bytes runs past the end"))

        var badTag = ByteReader([7])
        let tagFailure = try #require(throws: ByteReader.Failure.self) { try badTag.readSQLValue() }
        #expect(tagFailure.description == "at byte 0: 7 is not an SQL value tag")

        var badFlag = ByteReader([2])
        let flagFailure = try #require(throws: ByteReader.Failure.self) { try badFlag.readBool() }
        #expect(flagFailure.description == "at byte 0: 2 is not a flag (0 or 1)")
    }
}

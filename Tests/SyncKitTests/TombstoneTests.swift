import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import Testing

/// The stored values of deleted objects: they read back, text in `JSONEncoder`'s form reads too, and
/// damaged text is an error naming the object.
@Suite struct TombstoneTests {
    private let columns: [String: SQLValue] = [
        "name": .text("a \"quoted\" / slashed é"), "age": .integer(-7), "score": .real(2.5),
        "photo": .blob(Data([0, 1, 254, 255])), "note": .null,
    ]

    @Test func valuesReadBackAsWritten() throws {
        let text = try Tombstone.json(columns)
        #expect(try Tombstone.columns(text, of: "Member X") == columns)
        // Keys sorted, so the text depends only on the values.
        #expect(text.hasPrefix("{\"age\":"))
    }

    /// A tombstone may hold the text `JSONEncoder` makes of the same dictionary.
    @Test func textWrittenByJSONEncoderStillReads() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let text = String(decoding: try encoder.encode(columns), as: UTF8.self)
        #expect(try Tombstone.columns(text, of: "Member X") == columns)
    }

    @Test func damagedTextIsAnErrorNamingTheObject() throws {
        let error = try #require(throws: SyncError.self) { try Tombstone.columns("{\"age\": \"x\"", of: "Member 42") }
        #expect(error.code == .notSyncable)
        #expect(error.message.contains("deleted Member 42 are damaged"), "\(error)")
    }
}

import Foundation
import Testing
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport

enum SampleMood: String, Codable, Sendable { case calm, busy }

struct SamplePreferences: Codable, Equatable, Sendable {
    var theme: String = "light"
}

/// One attribute of every column type, for checking what each column accepts.
@Entity final class Sample {
    var flag: Bool = false
    var count: Int = 0
    var small: Int16 = 0
    var medium: Int32 = 0
    var ratio: Float = 0
    var amount: Double = 0
    var price: Decimal = 0
    var title: String = ""
    var stamp: Date = Date(timeIntervalSince1970: 0)
    var reference: UUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    var link: URL? = nil
    var bytes: Data = Data()
    var note: String? = nil
    @Attribute(storage: .raw) var mood: SampleMood = .calm
    @Attribute(storage: .codable) var preferences: SamplePreferences = SamplePreferences()
}

/// A value of the wrong kind for its attribute, and the end of the message that refuses it.
struct ValueViolation: CustomTestStringConvertible, Sendable {
    var attribute: String
    var values: [SQLValue]
    /// What follows "sets Sample.<attribute> of <id>".
    var complaint: String

    var testDescription: String { "\(attribute) = \(values)" }

    static let all: [ValueViolation] = [
        ValueViolation(attribute: "count", values: [.text("not a number")], complaint: "to text 'not a number', but it holds an integer"),
        ValueViolation(attribute: "count", values: [.real(1.5)], complaint: "to real 1.5, but it holds an integer"),
        ValueViolation(attribute: "count", values: [.real(2)], complaint: "to real 2.0, but it holds an integer"),
        ValueViolation(attribute: "title", values: [.null], complaint: "to NULL, but it is not optional"),
        ValueViolation(attribute: "count", values: [.null], complaint: "to NULL, but it is not optional"),
        ValueViolation(attribute: "flag", values: [.integer(2)], complaint: "to integer 2, but it holds a boolean (the integer 0 or 1)"),
        ValueViolation(attribute: "small", values: [.integer(40_000)], complaint: "to integer 40000, but it holds an integer from -32768 to 32767"),
        ValueViolation(attribute: "medium", values: [.integer(3_000_000_000)],
                       complaint: "to integer 3000000000, but it holds an integer from -2147483648 to 2147483647"),
        ValueViolation(attribute: "ratio", values: [.real(1e300)], complaint: "to real 1e+300, but it holds a number within Float's range"),
        ValueViolation(attribute: "amount", values: [.text("1.5")], complaint: "to text '1.5', but it holds a number"),
        ValueViolation(attribute: "stamp", values: [.blob(Data([1]))], complaint: "to blob x'01', but it holds a date (seconds since 1970, a number)"),
        ValueViolation(attribute: "price", values: [.text("many")], complaint: "to text 'many', but it holds a decimal number as text"),
        ValueViolation(attribute: "price", values: [.real(1.5)], complaint: "to real 1.5, but it holds a decimal number as text"),
        ValueViolation(attribute: "reference", values: [.text("not-a-uuid")], complaint: "to text 'not-a-uuid', but it holds a UUID as text"),
        ValueViolation(attribute: "link", values: [.integer(7)], complaint: "to integer 7, but it holds a URL as text"),
        ValueViolation(attribute: "bytes", values: [.text("AAEC")], complaint: "to text 'AAEC', but it holds a blob"),
        ValueViolation(attribute: "title", values: [.blob(Data([0x41]))], complaint: "to blob x'41', but it holds text"),
        ValueViolation(attribute: "mood", values: [.integer(1)], complaint: "to integer 1, but it holds text"),
        ValueViolation(attribute: "preferences", values: [.text("{\"theme\": ")], complaint: "to text '{\"theme\": ', but it holds JSON text"),
        ValueViolation(attribute: "count", values: [.integer(1), .integer(2)], complaint: "with 2 value(s); it has 1 column(s)"),
    ]
}

/// Values are checked against the schema's columns on arrival, by clients (``SyncReplica/apply(_:)``)
/// and by syncd's engine (``SQLiteDatasetEngine``), with the same error and nothing stored.
@Suite struct ValueValidationTests {
    static let author = UUID(uuidString: "0A000000-0000-4000-8000-000000000001")!
    static let object = UUID(uuidString: "0B000000-0000-4000-8000-000000000002")!

    /// A change set creating the sample with valid values of every column, integers in the real
    /// columns and `NULL` in the optional ones included.
    static let valid = ChangeSet(
        dot: Dot(replica: author, seq: 1), hlc: HLC(milliseconds: 1_700_000_000_000, counter: 0), vector: VersionVector([author: 1]),
        operations: [
            .create(entity: "Sample", id: object),
            .set(entity: "Sample", id: object, attribute: "flag", values: [.integer(1)]),
            .set(entity: "Sample", id: object, attribute: "count", values: [.integer(Int64.min)]),
            .set(entity: "Sample", id: object, attribute: "small", values: [.integer(-32_768)]),
            .set(entity: "Sample", id: object, attribute: "medium", values: [.integer(2_147_483_647)]),
            .set(entity: "Sample", id: object, attribute: "ratio", values: [.integer(3)]),
            .set(entity: "Sample", id: object, attribute: "amount", values: [.integer(4)]),
            .set(entity: "Sample", id: object, attribute: "price", values: [.text("12.50")]),
            .set(entity: "Sample", id: object, attribute: "title", values: [.text("")]),
            .set(entity: "Sample", id: object, attribute: "stamp", values: [.integer(86_400)]),
            .set(entity: "Sample", id: object, attribute: "reference", values: [.text(author.storageText)]),
            .set(entity: "Sample", id: object, attribute: "link", values: [.null]),
            .set(entity: "Sample", id: object, attribute: "bytes", values: [.blob(Data([1, 2]))]),
            .set(entity: "Sample", id: object, attribute: "note", values: [.null]),
            .set(entity: "Sample", id: object, attribute: "mood", values: [.text("busy")]),
            .set(entity: "Sample", id: object, attribute: "preferences", values: [.text("{\"theme\":\"dark\"}")]),
        ])

    /// A second change set whose second operation is `violation`.
    static func invalid(_ violation: ValueViolation) -> ChangeSet {
        ChangeSet(
            dot: Dot(replica: author, seq: 2), hlc: HLC(milliseconds: 1_700_000_000_001, counter: 0), vector: VersionVector([author: 2]),
            operations: [.set(entity: "Sample", id: object, attribute: "title", values: [.text("renamed")]),
                         .set(entity: "Sample", id: object, attribute: violation.attribute, values: violation.values)])
    }

    static func expectedError(_ violation: ValueViolation) -> SyncError {
        SyncError(.schemaMismatch,
                  "change set \(Dot(replica: author, seq: 2)), operation 1: sets Sample.\(violation.attribute) of \(object.storageText) \(violation.complaint)")
    }

    @Test func validValuesOfEveryColumnTypeApplyAndReadBack() throws {
        let client = try TestReplica(name: "values", entities: [Sample.self])
        #expect(try client.replica.apply([ValueValidationTests.valid]).applied == [ValueValidationTests.valid.dot])
        let sample = try #require(try client.fetch(Sample.self, ValueValidationTests.object))
        #expect(sample.flag && sample.count == Int.min && sample.small == Int16.min && sample.medium == Int32.max)
        #expect(sample.ratio == 3 && sample.amount == 4 && sample.price == Decimal(string: "12.5"))
        #expect(sample.stamp == Date(timeIntervalSince1970: 86_400) && sample.reference == ValueValidationTests.author)
        #expect(sample.link == nil && sample.bytes == Data([1, 2]) && sample.note == nil)
        #expect(sample.mood == .busy && sample.preferences == SamplePreferences(theme: "dark"))
    }

    @Test(arguments: ValueViolation.all)
    func aClientRefusesTheWholeBatchAndStoresNothing(_ violation: ValueViolation) throws {
        let client = try TestReplica(name: "values", entities: [Sample.self])
        let before = try client.digest()
        #expect(throws: ValueValidationTests.expectedError(violation)) {
            try client.replica.apply([ValueValidationTests.valid, ValueValidationTests.invalid(violation)])
        }
        #expect(try client.digest() == before)
        #expect(try client.replica.versionVector() == VersionVector())
        #expect(try client.replica.changeSets(missingFrom: VersionVector()).isEmpty)
    }

    @Test(arguments: ValueViolation.all)
    func syncdsEngineRefusesTheWholeBatchAndStoresNothing(_ violation: ValueViolation) throws {
        let client = try TestReplica(name: "values", entities: [Sample.self])
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("values-engine-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let engine = try SQLiteDatasetEngine.create(at: path, schema: client.store.schemaDocument)
        let before = try TestReplica.digest(of: path)
        let batch = [ValueValidationTests.valid, ValueValidationTests.invalid(violation)]
        #expect(throws: ValueValidationTests.expectedError(violation)) { try engine.validate(batch) }
        #expect(throws: ValueValidationTests.expectedError(violation)) { try engine.apply(batch, pushedBy: nil) }
        #expect(try TestReplica.digest(of: path) == before)
        #expect(try engine.versionVector() == VersionVector())
        #expect(try engine.readLog(after: 0, limit: 10, excluding: nil).changeSets.isEmpty)
        // The valid change set alone is stored, pushed by its author.
        let author = ReplicaCredentials(replica: ValueValidationTests.valid.dot.replica, key: [UInt8](repeating: 7, count: 32))
        var valid = ValueValidationTests.valid
        valid.authenticator = try ChangeSetAuthenticator.authenticator(of: valid, key: author.key)
        #expect(try engine.apply([valid], pushedBy: author).applied == [valid.dot])
    }

    @Test func aLongOffendingValueIsCutShortInTheMessage() throws {
        let violation = ValueViolation(attribute: "count", values: [.text(String(repeating: "x", count: 10_000))], complaint: "")
        let client = try TestReplica(name: "values", entities: [Sample.self])
        do {
            _ = try client.replica.apply([ValueValidationTests.valid, ValueValidationTests.invalid(violation)])
            Issue.record("the batch was applied")
        } catch let error as SyncError {
            #expect(error.code == .schemaMismatch)
            #expect(error.message.hasSuffix("to text '\(String(repeating: "x", count: 120))'…, but it holds an integer"))
        }
    }

    @Test func editsWithoutSwiftTypesAreCheckedBeforeTheyAreCommitted() throws {
        let client = try TestReplica(name: "values", entities: [Sample.self])
        let before = try client.digest()
        let id = UUID()
        // The create, then one set per attribute in declaration order: `small` is the third.
        #expect(throws: SyncError(.schemaMismatch, "change set \(Dot(replica: client.replica.replicaID, seq: 1)), operation 3: sets Sample.small of \(id.storageText) to integer 70000, but it holds an integer from -32768 to 32767")) {
            try client.replica.edit { editor in try editor.insert("Sample", id: id, values: ["small": .integer(70_000)]) }
        }
        #expect(try client.digest() == before)
        #expect(try client.replica.localChangeSets(status: .pending).isEmpty)
    }
}

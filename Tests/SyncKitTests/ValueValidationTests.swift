import Foundation
import Testing
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport

enum SampleMood: String, Codable, Sendable, CaseIterable { case calm, busy }

/// A raw type whose cases the schema lists as integers.
enum SampleLevel: Int, Sendable, CaseIterable { case low = 1, high = 3 }

/// A raw type that is not `CaseIterable`: its values are checked by column type alone.
struct SampleCode: RawRepresentable, Sendable {
    var rawValue: String
}

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
    @Attribute(storage: .raw) var level: SampleLevel? = nil
    @Attribute(storage: .raw) var code: SampleCode = SampleCode(rawValue: "")
}

/// A value of the wrong kind for its attribute, and the end of the message that refuses it.
struct ValueViolation: CustomTestStringConvertible, Sendable {
    var attribute: String
    var values: [SQLValue]
    /// What follows "sets Sample.<attribute> of <id>".
    var complaint: String

    var testDescription: String { "\(attribute) = \(values)" }

    /// Whether a newer schema could have written the value: `NULL` where it made the attribute
    /// optional, or the raw value of a case it added. A client keeps such a value; a server
    /// refuses it.
    var aNewerSchemaCouldWriteIt: Bool {
        values == [.null] || complaint.contains("a raw value of")
    }

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
        ValueViolation(attribute: "mood", values: [.text("asleep")], complaint: "to text 'asleep', but it holds a raw value of SampleMood ('calm', 'busy')"),
        ValueViolation(attribute: "mood", values: [.text("Calm")], complaint: "to text 'Calm', but it holds a raw value of SampleMood ('calm', 'busy')"),
        ValueViolation(attribute: "mood", values: [.null], complaint: "to NULL, but it is not optional"),
        ValueViolation(attribute: "level", values: [.integer(2)], complaint: "to integer 2, but it holds a raw value of SampleLevel (1, 3)"),
        ValueViolation(attribute: "level", values: [.text("high")], complaint: "to text 'high', but it holds an integer"),
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
            .set(entity: "Sample", id: object, attribute: "level", values: [.integer(3)]),
            .set(entity: "Sample", id: object, attribute: "code", values: [.text("any text")]),
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
        #expect(sample.level == .high && sample.code.rawValue == "any text")
        // NULL in the optional raw attribute is not a case, and fits.
        var cleared = ValueValidationTests.invalid(ValueViolation(attribute: "level", values: [.null], complaint: ""))
        cleared.operations.removeFirst()
        #expect(try client.replica.apply([cleared]).applied == [cleared.dot])
        #expect(try client.fetch(Sample.self, ValueValidationTests.object)?.level == nil)
    }

    @Test func theSchemaListsTheRawValuesOfCaseIterableTypesOnly() throws {
        let client = try TestReplica(name: "values", entities: [Sample.self])
        let sample = try #require(client.store.schemaDocument.entity(named: "Sample"))
        #expect(sample.attribute(named: "mood")?.rawValues == [.text("calm"), .text("busy")])
        #expect(sample.attribute(named: "level")?.rawValues == [.integer(1), .integer(3)])
        #expect(sample.attribute(named: "code")?.rawValues == nil)
        #expect(sample.attributes.filter { $0.rawValues != nil }.map(\.name) == ["mood", "level"])
        let exported = try #require(try JSONSerialization.jsonObject(with: client.store.exportSchema()) as? [String: Any])
        let entity = try #require((exported["entities"] as? [[String: Any]])?.first { $0["name"] as? String == "Sample" })
        let attributes = try #require(entity["attributes"] as? [[String: Any]])
        #expect(attributes.first { $0["name"] as? String == "mood" }?["rawValues"] as? [String] == ["calm", "busy"])
        #expect(attributes.first { $0["name"] as? String == "level" }?["rawValues"] as? [Int] == [1, 3])
        // Attributes without listed cases leave the key out, so their schemas hash as before.
        #expect(attributes.filter { $0["rawValues"] != nil }.count == 2)
    }

    /// Listing cases where none were listed, or more cases, is additive (syncd migrates to it);
    /// a schema without a listed case lacks what may be stored, as one without an attribute does.
    @Test func addingCasesIsAdditiveAndDroppingOneIsNot() throws {
        let stored = try ObjectStore.inMemory(entities: [Sample.self]).schemaDocument
        func withMoods(_ moods: [SQLValue]?) throws -> SchemaDocument {
            var document = stored
            let entity = try #require(document.entities.firstIndex { $0.name == "Sample" })
            let mood = try #require(document.entities[entity].attributes.firstIndex { $0.name == "mood" })
            document.entities[entity].attributes[mood].rawValues = moods
            document.versionHash = SchemaDocument.hash(of: document.entities)
            return document
        }
        #expect(try withMoods([.text("calm"), .text("busy"), .text("away")]).compatibility(with: stored)
                == .additive(["attribute Sample.mood accepts the raw values 'calm', 'busy', 'away'"]))
        #expect(try withMoods(nil).compatibility(with: stored)
                == .additive(["attribute Sample.mood accepts the raw values of its raw type (no cases listed)"]))
        let unlisted = try withMoods(nil)
        #expect(stored.compatibility(with: unlisted)
                == .additive(["attribute Sample.mood accepts the raw values 'calm', 'busy'"]))
        #expect(try withMoods([.text("calm")]).compatibility(with: stored)
                == .subset(["attribute Sample.mood no longer accepts the raw values 'busy'"]))
    }

    /// A value written before its case was removed (or by a tool that bypassed sync) stays in the
    /// file; reading it applies the attribute's decode-failure policy, which throws by default.
    @Test func anUnknownRawValueAlreadyStoredFollowsTheDecodeFailurePolicy() throws {
        let client = try TestReplica(name: "values", entities: [Sample.self])
        _ = try client.replica.apply([ValueValidationTests.valid])
        try client.context.connection.run(#"UPDATE "Sample" SET "mood" = 'asleep' WHERE "_object_id" = ?"#,
                                          [.text(ValueValidationTests.object.storageText)])
        let error = try #require(throws: StoreError.self) { try client.fetch(Sample.self, ValueValidationTests.object) }
        #expect(error.code == .corruptValue && error.entity == "Sample" && error.attribute == "mood")
        #expect(error.objectID == ValueValidationTests.object)
    }

    @Test(arguments: ValueViolation.all.filter { !$0.aNewerSchemaCouldWriteIt })
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

    /// A value a newer schema could have written is not applied: the client keeps the attribute's
    /// value and the change set whole, to apply it once its app knows the newer schema.
    @Test(arguments: ValueViolation.all.filter(\.aNewerSchemaCouldWriteIt))
    func aClientKeepsAValueOnlyANewerSchemaHolds(_ violation: ValueViolation) throws {
        let client = try TestReplica(name: "values", entities: [Sample.self])
        _ = try client.replica.apply([ValueValidationTests.valid])
        func column(_ name: String) throws -> SQLValue? {
            try SQLiteConnection(path: client.path).rows("SELECT \"\(name)\" FROM Sample").first?.first
        }
        let before = try column(violation.attribute)
        let newer = ValueValidationTests.invalid(violation)
        #expect(try client.replica.apply([newer]).applied == [newer.dot])
        // The title the change set also sets (to text) is applied; the value it keeps is not.
        #expect(try column("title") == .text("renamed"))
        if violation.attribute != "title" { #expect(try column(violation.attribute) == before) }
        #expect(try client.replica.keptChangeSetCount() == 1)
        #expect(try client.replica.changeSets(missingFrom: VersionVector()).last == newer)
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

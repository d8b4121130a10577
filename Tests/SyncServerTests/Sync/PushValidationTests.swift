import Foundation
@testable import SyncEngine
import SyncKit
import Testing

@testable import SyncServer

/// A pushed batch is validated once, before the push waits for the dataset's write lock, and
/// again only when a schema registration changed the engine's schema while it waited.
@Suite struct PushValidationTests {
    /// The dataset's engine, with the replica that counts the batches it validated.
    static func engine(of server: ServerFixture) throws -> SQLiteDatasetEngine {
        try #require(try server.service.registry.dataset("main").requireEngine() as? SQLiteDatasetEngine)
    }

    static func batchesValidated(by engine: SQLiteDatasetEngine) -> Int {
        engine.replica.batchesValidated.load(ordering: .relaxed)
    }

    @Test func aPushedBatchIsValidatedOnce() throws {
        let server = try ServerFixture()
        try server.registerSchema()
        let engine = try PushValidationTests.engine(of: server)
        let client = try ClientReplica()
        try client.addBoard("Plans", cards: 2)
        server.push(try client.batch(), as: try client.credentials).expectOK()
        #expect(PushValidationTests.batchesValidated(by: engine) == 1)
        #expect(try server.serverVector() == client.replica.versionVector())
    }

    @Test func aBatchValidatedAgainstAnEarlierSchemaIsValidatedAgainstTheCurrentOne() throws {
        let server = try ServerFixture()
        try server.registerSchema()
        let earlier = try PushValidationTests.engine(of: server)
        let client = try ClientReplica()
        try client.addBoard("Plans")
        let changeSets = try client.replica.changeSets(missingFrom: VersionVector())
        // Card.color is not in the earlier schema, so its value is the merge's to refuse, not the
        // validator's; once the schema declares it as text, an integer there does not fit.
        var colored = changeSets[0]
        colored.operations.append(.set(entity: "Card", id: UUID(), attribute: "color", values: [.integer(5)]))
        let stale = try earlier.validate(changeSets), staleColored = try earlier.validate([colored])
        #expect(PushValidationTests.batchesValidated(by: earlier) == 2)

        // What a registration does while a push waits for the write lock.
        try server.registerSchema(try rehashed(try addingCardColor(to: earlier.schema)))
        let current = try PushValidationTests.engine(of: server)
        #expect(current !== earlier && current.schema.versionHash != stale.schemaVersionHash)
        do {
            _ = try current.apply(staleColored, pushedBy: try client.credentials)
            Issue.record("a value that does not fit the current schema was applied")
        } catch let error as SyncError {
            #expect(error.code == .schemaMismatch && error.message.contains("Card.color"), "\(error)")
        }
        #expect(try current.apply(stale, pushedBy: try client.credentials).applied == changeSets.map(\.dot))
        #expect(PushValidationTests.batchesValidated(by: current) == 2)
        // A batch validated against the current schema is not validated again.
        _ = try current.apply(try current.validate(changeSets), pushedBy: try client.credentials)
        #expect(PushValidationTests.batchesValidated(by: current) == 3)
    }
}

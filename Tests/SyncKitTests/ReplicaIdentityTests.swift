import Foundation
import Testing
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport

/// A dataset engine stores a change set only when it can check its author: the pusher's own
/// change sets with the key it registered at its first push, relayed ones with their author's
/// registered key. Nobody holding the dataset's token can pre-empt another replica's dot.
@Suite struct ReplicaIdentityTests {
    /// A dataset engine on a temporary file, and replicas A and B of the same schema.
    final class Setup {
        let a: TestReplica
        let b: TestReplica
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("identity-\(UUID().uuidString).sqlite").path
        let engine: SQLiteDatasetEngine

        init() throws {
            a = try TestReplica(name: "a")
            b = try TestReplica(name: "b")
            engine = try SQLiteDatasetEngine.create(at: path, schema: a.store.schemaDocument)
        }

        deinit {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }

        /// Saves a new team named `name` in `replica` and returns the change set it recorded.
        @discardableResult
        func save(_ name: String, in replica: TestReplica) throws -> ChangeSet {
            let team = Team()
            team.name = name
            replica.context.insert(team)
            try replica.context.save()
            return try #require(try replica.replica.localChangeSets(status: .pending).last)
        }

        /// The team names the engine's store holds, sorted.
        func teamNames() throws -> [String] {
            try SQLiteConnection(path: path, readOnly: true).rows("SELECT name FROM Team ORDER BY name").compactMap(\.first?.textValue)
        }
    }

    @Test func aChangeSetForgedUnderAnotherReplicasIDIsRefusedAndTheRealOneIsAcceptedAfterwards() throws {
        let setup = try Setup()
        _ = try setup.engine.apply([try setup.save("A1", in: setup.a)], pushedBy: try setup.a.replica.credentials())
        let real = try setup.save("A2", in: setup.a)
        // B holds the token but not A's key: it signs A's next dot with a key of its own.
        var forged = GuaranteeTests.forged(real)
        forged.authenticator = try ChangeSetAuthenticator.authenticator(of: forged, key: try setup.b.replica.credentials().key)
        #expect(throws: SyncError(.unverifiedAuthor, "change set \(real.dot) does not carry its author's authenticator (forged or altered)",
                                  dot: real.dot)) {
            try setup.engine.apply([forged], pushedBy: try setup.b.replica.credentials())
        }
        #expect(try setup.engine.versionVector()[setup.a.replica.replicaID] == 1)
        // Claiming to be A with another key is refused before anything else.
        let impostor = ReplicaCredentials(replica: setup.a.replica.replicaID, key: try setup.b.replica.credentials().key)
        #expect(throws: SyncError.self) { try setup.engine.apply([forged], pushedBy: impostor) }
        do {
            _ = try setup.engine.apply([forged], pushedBy: impostor)
        } catch let error as SyncError {
            #expect(error.code == .replicaKeyMismatch)
        }
        let accepted = try setup.engine.apply([real], pushedBy: try setup.a.replica.credentials())
        #expect(accepted.applied == [real.dot])
        #expect(try setup.teamNames() == ["A1", "A2"])
    }

    @Test func aRelayOfAGenuineChangeSetIsAcceptedAndATamperedOneRefused() throws {
        let setup = try Setup()
        _ = try setup.engine.apply([try setup.save("A1", in: setup.a)], pushedBy: try setup.a.replica.credentials())
        let second = try setup.save("A2", in: setup.a)
        try setup.b.pull(from: setup.a)
        let relayed = try #require(try setup.b.replica.changeSets(missingFrom: setup.engine.versionVector()).first)
        #expect(relayed == second && relayed.authenticator != nil, "B keeps A's authenticator")

        #expect(throws: SyncError.self) {
            try setup.engine.apply([GuaranteeTests.forged(relayed)], pushedBy: try setup.b.replica.credentials())
        }
        #expect(try setup.teamNames() == ["A1"])
        let result = try setup.engine.apply([relayed], pushedBy: try setup.b.replica.credentials())
        #expect(result.applied == [second.dot])
        // The server hands the authenticator on: a pull carries it.
        #expect(try setup.engine.readLog(after: 1, limit: 5, excluding: nil).changeSets.first?.authenticator == second.authenticator)
    }

    @Test func aRelayOfAnAuthorWithoutARegisteredKeyIsRefusedNamingTheChangeSet() throws {
        let setup = try Setup()
        let first = try setup.save("A1", in: setup.a)
        try setup.b.pull(from: setup.a)
        do {
            _ = try setup.engine.apply([first], pushedBy: try setup.b.replica.credentials())
            Issue.record("a relay of an author the server has no key for was accepted")
        } catch let error as SyncError {
            #expect(error.code == .unverifiedAuthor && error.dot == first.dot)
        }
        #expect(try setup.engine.versionVector() == VersionVector())
    }

    @Test func aChangeSetWithoutAuthenticatorIsStoredOnlyIfTheServerAlreadyHasItIdentically() throws {
        let setup = try Setup()
        let first = try setup.save("A1", in: setup.a)
        var legacy = first
        legacy.authenticator = nil
        #expect(throws: SyncError(.unverifiedAuthor, "change set \(first.dot) carries no authenticator", dot: first.dot)) {
            try setup.engine.apply([legacy], pushedBy: try setup.a.replica.credentials())
        }
        _ = try setup.engine.apply([first], pushedBy: try setup.a.replica.credentials())
        let again = try setup.engine.apply([legacy], pushedBy: nil)
        #expect(again.alreadyApplied == [first.dot] && again.applied.isEmpty)
    }

    @Test func aPushWithoutReplicaHeadersStoresNothingNew() throws {
        let setup = try Setup()
        let first = try setup.save("A1", in: setup.a)
        #expect(throws: SyncError.self) { try setup.engine.apply([first], pushedBy: nil) }
        #expect(try setup.engine.versionVector() == VersionVector())
    }

    @Test func snapshotsCarryNoKeys() throws {
        let setup = try Setup()
        _ = try setup.engine.apply([try setup.save("A1", in: setup.a)], pushedBy: try setup.a.replica.credentials())
        let copy = setup.path + "-snapshot.sqlite"
        defer { try? FileManager.default.removeItem(atPath: copy) }
        _ = try setup.engine.writeSnapshot(to: copy)
        let connection = try SQLiteConnection(path: copy, readOnly: true)
        #expect(try connection.rows("SELECT 1 FROM sqlite_master WHERE name = '_server_replica_key'").isEmpty)
        #expect(try connection.rows("SELECT 1 FROM _sync_state WHERE key = 'replica_key'").isEmpty)
    }
}

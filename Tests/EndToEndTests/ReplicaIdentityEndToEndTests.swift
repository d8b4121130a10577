import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Replica identity against a real `syncd`: a holder of the dataset's token cannot push change
/// sets under another replica's ID, and a server restored from a backup gets back what clients
/// can prove.
extension EndToEndTests {
    /// Pushes `changeSets` over plain HTTP with the replica headers of `pusher`; returns the status and body.
    func rawPush(_ changeSets: [ChangeSet], as pusher: ReplicaCredentials) async throws -> (status: Int, body: String) {
        var request = URLRequest(url: URL(string: "\(server.url)/v1/datasets/e2e/changesets")!)
        request.httpMethod = "POST"
        request.httpBody = try ChangeSetCoding.encode(changeSets, base: VersionVector())
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue(pusher.replica.uuidString, forHTTPHeaderField: "Sync-Replica-ID")
        request.setValue(pusher.keyHex, forHTTPHeaderField: "Sync-Replica-Key")
        let (data, response) = try await URLSession(configuration: .ephemeral).data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    @Test func aChangeSetForgedUnderAnotherReplicasIDIsRefusedAndTheRealOneGoesThrough() async throws {
        let (a, b, squad, victim) = try twoCLIReplicasSharingASquad()

        // The attacker holds the token and reads A's ID and next seq from the log, but not A's key.
        let attacker = ReplicaCredentials(replica: UUID(), key: [UInt8](repeating: 0x5a, count: 32))
        var forged = ChangeSet(dot: Dot(replica: victim, seq: 2), hlc: HLC(rawValue: HybridLogicalClock.wallClockMilliseconds() << 16),
                               vector: VersionVector([victim: 2]),
                               operations: [.set(entity: "Squad", id: try #require(UUID(uuidString: squad)), attribute: "name", values: [.text("forged")])])
        forged.authenticator = try ChangeSetAuthenticator.authenticator(of: forged, key: attacker.key)
        let refused = try await rawPush([forged], as: attacker)
        #expect(refused.status == 403 && refused.body.contains(#""code":"unverified_author""#), "\(refused.body)")
        let impostor = ReplicaCredentials(replica: victim, key: attacker.key)
        let mismatch = try await rawPush([forged], as: impostor)
        #expect(mismatch.status == 403 && mismatch.body.contains(#""code":"replica_key_mismatch""#), "\(mismatch.body)")

        // A's own next change set takes the dot the attacker aimed at.
        try cli(a, "put", "Squad", squad, "name=Blue")
        try cli(a, "push")
        try cli(b, "pull")
        let listed = try cli(b, "list", "Squad")
        #expect(listed.contains("Blue") && !listed.contains("forged"), "\(listed)")
        #expect(try storeDigest(a) == storeDigest(b))
    }

    /// The server's store file of the dataset.
    var serverStorePath: String { directory.file("syncd-data/datasets/e2e/store.sqlite") }

    /// Copies the dataset's store file as a backup, and returns the copy's path.
    func backUpServer() throws -> String {
        let backup = directory.file("backup.sqlite")
        try SQLiteConnection(path: serverStorePath).run("VACUUM INTO ?", [.text(backup)])
        return backup
    }

    /// Stops the server, puts `backup` in place of the dataset's store file and starts it again on its port.
    func restoreServer(from backup: String) throws {
        let storePath = serverStorePath
        #expect(server.stop())
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: storePath + suffix) }
        try FileManager.default.removeItem(atPath: storePath)
        try FileManager.default.copyItem(atPath: backup, toPath: storePath)
        try server.start(port: server.port)
    }

    /// Saves a new squad named `name` in `replica`.
    func saveSquad(_ name: String, in replica: InProcess) throws {
        let squad = Squad()
        squad.name = name
        replica.context.insert(squad)
        try replica.context.save()
    }

    /// The names of `replica`'s squads, sorted.
    func squadNames(_ replica: InProcess) throws -> [String] {
        try replica.replica.records("Squad").compactMap { record in
            record.attributes.first { $0.name == "name" }?.values.first?.textValue
        }.sorted()
    }

    /// Three new replicas each save and push one squad (D1, E1, F1), independent of each other.
    @discardableResult
    func pushSquadsFromNewWriters() async throws -> [InProcess] {
        let writers = try ["d", "e", "f"].map { try makeInProcessReplica("\($0).sqlite") }
        for (writer, name) in zip(writers, ["D1", "E1", "F1"]) {
            try saveSquad(name, in: writer)
            try await writer.client.sync()
        }
        return writers
    }

    @Test func aClientWhoseCursorTheRestoredLogPassedPullsEveryChangeSet() async throws {
        let a = try makeInProcessReplica("a.sqlite"), reader = try makeInProcessReplica("reader.sqlite")
        try saveSquad("A1", in: a)
        try await a.client.sync()
        let backup = try backUpServer()
        for name in ["A2", "A3"] { try saveSquad(name, in: a) }
        try await a.client.sync()
        try await reader.client.sync()
        let pulled = try await reader.client.transport.pull(after: "0", limit: 10, excluding: nil)
        #expect(pulled.cursor == "3")

        // The restored log ends at 1; three new replicas' change sets, independent of each other,
        // take cursors 2 to 4, past the reader's 3. Trusting its cursor, the reader would pull
        // only the last and never learn of the others.
        try restoreServer(from: backup)
        let writers = try await pushSquadsFromNewWriters()

        let report = try await reader.client.sync()
        #expect(report.pulled == 3, "\(report)")
        #expect(try squadNames(reader) == ["A1", "A2", "A3", "D1", "E1", "F1"])
        // A re-sends what the server lost once it learns of it; then every store is the same.
        try saveSquad("A4", in: a)
        try await a.client.sync()
        for replica in writers + [reader] { try await replica.client.sync() }
        for replica in writers + [reader] { #expect(try storeDigest(replica.path) == storeDigest(a.path)) }
    }

    @Test func aClientMadeFromASnapshotWhoseCursorTheRestoredLogPassedPullsEveryChangeSet() async throws {
        let a = try makeInProcessReplica("a.sqlite")
        try saveSquad("A1", in: a)
        try await a.client.sync()
        let backup = try backUpServer()
        for name in ["A2", "A3"] { try saveSquad(name, in: a) }
        try await a.client.sync()
        let reader = try await makeInProcessReplicaFromSnapshot("reader.sqlite")
        let adopted = try SyncClient.StoredState.read(from: reader.replica)
        #expect(adopted.cursor == "3" && adopted.cursorDigest?.count == 32, "\(adopted)")
        #expect(try squadNames(reader) == ["A1", "A2", "A3"])

        // The restored log ends at 1; three new replicas' change sets take cursors 2 to 4, past
        // the snapshot's 3. Trusting the snapshot's cursor, the reader would pull only the last.
        try restoreServer(from: backup)
        try await pushSquadsFromNewWriters()

        let report = try await reader.client.sync()
        #expect(report.pulled == 3, "\(report)")
        #expect(try squadNames(reader) == ["A1", "A2", "A3", "D1", "E1", "F1"])
    }

    @Test func aServerRestoredFromABackupGetsBackWhatItsClientsCanProve() async throws {
        let a = try makeInProcessReplica("a.sqlite"), b = try makeInProcessReplica("b.sqlite"), c = try makeInProcessReplica("c.sqlite")
        try saveSquad("A1", in: a)
        try await a.client.sync()
        try await b.client.sync()
        let backup = try backUpServer()

        // After the backup: C pushes for the first time (its key is not in the backup), A pushes
        // again, B builds on both.
        try saveSquad("C1", in: c)
        try await c.client.sync()
        try saveSquad("A2", in: a)
        try await a.client.sync()
        try await b.client.sync()
        try saveSquad("B1", in: b)
        try await b.client.sync()

        try restoreServer(from: backup)

        // B resends what the server lost: A's change set goes through (the backup has A's key),
        // C's cannot be verified, so it and B's own that depend on it wait for C. The clients'
        // cursors were saved after the backup: the restored server refuses them by their digests.
        try saveSquad("B2", in: b)
        await #expect(throws: SyncClientError.self) { try await b.client.sync() }
        let error = try #require(b.client.status.lastError)
        guard case .causality(let message) = error else {
            Issue.record("expected a causality error naming C, got \(error)")
            return
        }
        #expect(message.contains(c.replica.replicaID.uuidString), "\(message)")
        let reader = try makeInProcessReplica("reader.sqlite")
        try await reader.client.pull()
        #expect(try reader.replica.versionVector() == VersionVector([a.replica.replicaID: 2]))

        // C's next sync pushes C's change sets itself, registering its key again; then B's go through.
        try saveSquad("C2", in: c)
        try await c.client.sync()
        let report = try await b.client.sync()
        #expect(report.pendingAfter == 0 && report.unrelayedAuthors.isEmpty)
        for replica in [a, c, reader] { try await replica.client.sync() }
        #expect(try squadNames(a) == ["A1", "A2", "B1", "B2", "C1", "C2"])
        for replica in [b, c, reader] { #expect(try storeDigest(replica.path) == storeDigest(a.path)) }
    }
}

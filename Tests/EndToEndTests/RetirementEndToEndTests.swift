import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Retiring a replica against a real `syncd`: an operator retires it with `syncd replica
/// retire` while the server runs, and the replica's next sync starts again from a snapshot
/// under a new ID, replaying its unpushed edits, so nothing the user committed is lost.
extension EndToEndTests {
    /// Runs `syncd replica <arguments> --dataset e2e --data <the server's directory>`; a non-zero exit fails the test.
    @discardableResult
    func syncdReplica(_ arguments: String...) throws -> String {
        let result = try ProductProcess.run(product: "syncd", ["replica"] + arguments + ["--dataset", "e2e", "--data", directory.file("syncd-data")])
        guard result.status == 0 else {
            throw ProductProcessError("syncd replica \(arguments.joined(separator: " ")) exited \(result.status): \(result.standardError)")
        }
        return result.standardOutput
    }

    @Test func aRetiredReplicaStartsAgainFromASnapshotAndEveryUnpushedEditReachesTheServerAndTheOtherReplica() async throws {
        let (a, b, red, retired) = try twoCLIReplicasSharingASquad()

        // A edits offline; B edits and pushes meanwhile, so the snapshot holds what A never saw.
        try cli(a, "put", "Squad", red, "score=3")
        let blue = try cli(a, "put", "Squad", "name=Blue")
        let ada = try cli(a, "put", "Player", "name=Ada")
        try cli(a, "link", "Player", ada, "squad", blue)
        let green = try cli(b, "put", "Squad", "name=Green")
        try cli(b, "push")

        try syncdReplica("retire", "--replica", retired.uuidString)
        let listed = try syncdReplica("list", "--json")
        #expect(listed.contains(#""replica":"\#(retired.storageText)""#) && listed.contains(#""state":"retired""#), "\(listed)")

        let report = try cli(a, "pull", "--push")
        #expect(report.contains("started again from its snapshot"), "\(report)")
        let renewed = try SyncReplica(store: ObjectStore(existingAt: a)).replicaID
        #expect(renewed != retired)
        try cli(b, "pull")
        #expect(try storeDigest(a) == storeDigest(b))
        let squads = try cli(b, "list", "Squad")
        for expected in ["Red", "Blue", "Green", "\"score\":3"] { #expect(squads.contains(expected), "\(squads)") }
        #expect(squads.contains(green))
        let players = try cli(b, "list", "Player")
        #expect(players.contains("Ada") && players.contains(blue), "\(players)")

        // The retired ID stays refused, and A's new one syncs on.
        let pull = try await rawPull(excluding: retired)
        #expect(pull.status == 410 && pull.body.contains(#""code":"replica_retired""#), "\(pull.body)")
        try cli(a, "put", "Squad", red, "score=4")
        try cli(a, "push")
        try cli(b, "pull")
        #expect(try storeDigest(a) == storeDigest(b))
    }

    @Test func anAppsOpenStoreKeepsWorkingWhenItsReplicaStartsAgainFromASnapshot() async throws {
        let a = try makeInProcessReplica("a.sqlite"), b = try makeInProcessReplica("b.sqlite")
        try saveSquad("A1", in: a)
        try await a.client.sync()
        try await b.client.sync()
        try saveSquad("A2 offline", in: a)
        try saveSquad("B1", in: b)
        try await b.client.sync()
        let retired = a.replica.replicaID
        try syncdReplica("retire", "--replica", retired.uuidString)

        let report = try await a.client.sync()
        let rebootstrap = try #require(report.rebootstrap)
        #expect(rebootstrap.retiredReplica == retired && rebootstrap.newReplica == a.replica.replicaID && rebootstrap.replayed == 1)
        #expect(report.pendingAfter == 0)
        // The context opened before goes on reading and saving, as the new replica.
        #expect(try a.context.fetch(FetchDescriptor<Squad>()).map(\.name).sorted() == ["A1", "A2 offline", "B1"])
        try saveSquad("A3", in: a)
        #expect(try a.replica.localChangeSets(status: .pending).map(\.dot) == [Dot(replica: rebootstrap.newReplica, seq: 2)])
        try await a.client.sync()
        try await b.client.sync()
        #expect(try squadNames(b) == ["A1", "A2 offline", "A3", "B1"])
        #expect(try storeDigest(a.path) == storeDigest(b.path))
    }

    /// Two CLI replicas A and B: A saved a squad named Red and pushed it, B pulled it. Returns
    /// both stores, Red's ID and A's replica ID.
    func twoCLIReplicasSharingASquad() throws -> (a: String, b: String, squad: String, replicaOfA: ReplicaID) {
        let schemaSource = try makeInProcessReplica("schema.sqlite")
        let a = try makeCLIReplica("a.sqlite", schemaFrom: schemaSource.store)
        let b = try makeCLIReplica("b.sqlite", schemaFrom: schemaSource.store)
        let squad = try cli(a, "put", "Squad", "name=Red")
        try cli(a, "push")
        try cli(b, "pull")
        return (a, b, squad, try SyncReplica(store: ObjectStore(existingAt: a)).replicaID)
    }

    /// Pulls from cursor 0 over plain HTTP naming `replica` in `exclude`; returns the status and body.
    func rawPull(excluding replica: ReplicaID) async throws -> (status: Int, body: String) {
        var request = URLRequest(url: URL(string: "\(server.url)/v1/datasets/e2e/changesets?after=0&exclude=\(replica.uuidString)")!)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession(configuration: .ephemeral).data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }
}

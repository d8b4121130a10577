import CommandLineArguments
import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport
import Testing

/// `syncd dataset compact` against a real, serving `syncd`: an operator compacts a dataset's
/// log below a vector of their choosing; what was compacted no longer travels in pulls, a new
/// replica starts from a snapshot, and a malformed vector is refused, naming what is wrong.
extension EndToEndTests {
    /// Runs `syncd dataset compact --dataset e2e --data <the server's directory>` with `arguments`.
    func syncdCompact(_ arguments: String...) throws -> ProcessOutput {
        try ProductProcess.run(product: "syncd", ["dataset", "compact", "--dataset", "e2e", "--data", directory.file("syncd-data")] + arguments)
    }

    @Test func compactingBelowAGivenVectorRemovesWhatItCoversAndANewReplicaStartsFromTheSnapshot() async throws {
        let (a, b, red, _) = try twoCLIReplicasSharingASquad()
        try cli(a, "put", "Squad", red, "score=3")
        try cli(a, "push")
        try cli(b, "pull")
        let status = try #require(try JSONSerialization.jsonObject(with: Data(try cli(b, "status", "--json").utf8)) as? [String: Any])
        let vector = try #require(status["vector"] as? [String: Int])
        #expect(!vector.isEmpty)
        let below = String(decoding: try JSONSerialization.data(withJSONObject: vector, options: [.sortedKeys]), as: UTF8.self)

        let compacted = try syncdCompact("--below", below)
        #expect(compacted.status == 0, "\(compacted.standardError)")
        // Both change sets A pushed (the squad, then its score) lie below the vector.
        #expect(compacted.standardOutput.contains("entries removed 2"), "\(compacted.standardOutput)")
        #expect(try syncdCompact("--below", below).standardOutput.contains("entries removed 0"), "a second run finds nothing left to remove")

        // A replica that has nothing cannot be answered from the compacted log: it starts from the snapshot.
        let schemaSource = try makeInProcessReplica("schema-c.sqlite")
        let c = try makeCLIReplica("c.sqlite", schemaFrom: schemaSource.store)
        let pulled = try cli(c, "pull")
        #expect(pulled.contains("started again from its snapshot"), "\(pulled)")
        #expect(try storeDigest(c) == storeDigest(a))
        #expect(try cli(c, "list", "Squad").contains("\"score\":3"))

        // Later edits travel as before.
        try cli(b, "put", "Squad", red, "score=4")
        try cli(b, "push")
        try cli(a, "pull")
        try cli(c, "pull")
        #expect(try storeDigest(a) == storeDigest(b))
        #expect(try storeDigest(c) == storeDigest(b))
    }

    @Test(arguments: [
        (#"{"nope": 1}"#, "nope"),
        (#"[1, 2]"#, "--below must be a JSON object"),
        (#"{"00000000-0000-0000-0000-000000000001": -1}"#, "--below must be a JSON object"),
    ])
    func aMalformedVectorIsAUsageErrorAndCompactsNothing(vector: String, named: String) throws {
        let (a, _, _, _) = try twoCLIReplicasSharingASquad()
        let refused = try syncdCompact("--below", vector)
        #expect(refused.status == UsageError.exitStatus)
        #expect(refused.standardError.contains(named), "\(refused.standardError)")
        // Nothing was compacted: a replica with nothing still pulls the log from its start.
        let schemaSource = try makeInProcessReplica("schema-c.sqlite")
        let c = try makeCLIReplica("c.sqlite", schemaFrom: schemaSource.store)
        let pulled = try cli(c, "pull")
        #expect(!pulled.contains("snapshot"), "\(pulled)")
        #expect(try storeDigest(c) == storeDigest(a))
    }
}

/// A real `syncd` lets go of a forgotten object's identifier once every client that compacts
/// deleted objects has reported, on its pulls, that it holds nothing of it.
extension EndToEndTests {
    @Test func syncdReleasesAForgottenIdentifierOnceEveryClientReportedForgettingItsObject() async throws {
        var configuration = clientConfiguration
        configuration.historyCompaction = .changeSetsAndDeletedObjects
        let a = try makeInProcessReplica("a.sqlite"), b = try makeInProcessReplica("b.sqlite")
        let clients = [a, b].map { SyncClient(replica: $0.replica, configuration: configuration) }
        let squad = Squad()
        squad.name = "Doomed"
        a.context.insert(squad)
        try a.context.save()
        a.context.delete(squad)
        try a.context.save()
        func syncBoth(rounds: Int) async throws {
            for _ in 0..<rounds { for client in clients { _ = try await client.sync() } }
        }
        func released(_ output: ProcessOutput) throws -> Int {
            #expect(output.status == 0, "\(output.standardError)")
            let number = output.standardOutput.split(separator: "identifiers released ").dropFirst().first?.prefix { $0.isNumber }
            return try #require(number.flatMap { Int($0) }, "\(output.standardOutput)")
        }
        // Everyone has everything and compacted below it.
        try await syncBoth(rounds: 3)
        let forgetting = try syncdCompact()
        #expect(forgetting.standardOutput.contains("objects forgotten 1"), "\(forgetting.standardOutput)")
        #expect(try a.replica.forgottenBelow() != nil && b.replica.forgottenBelow() != nil)
        // The identifier goes at the compaction that forgot it, or at the next once the clients'
        // pulls have reported the vector it used.
        var total = try released(forgetting)
        try await syncBoth(rounds: 2)
        total += try released(try syncdCompact())
        #expect(total == 1)
        #expect(try released(try syncdCompact()) == 0, "released once")
    }
}

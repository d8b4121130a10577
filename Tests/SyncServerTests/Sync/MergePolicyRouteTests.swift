import Foundation
import Synchronization
@testable import HTTPServer
import SyncKit
import TestSupport
import Testing

@testable import SyncServer

/// A schema with a counter and a maximum, registered on the server by the tests below.
@Entity final class Poll {
    var question: String = ""
    @Attribute(merge: .counter) var votes: Int = 0
    @Attribute(merge: .max) var peak: Int = 0
}

/// CONTRACT.md §3.9 on syncd: increments add up and maxima keep the largest value, whatever the
/// order they are pushed in; an operation the policy forbids is `422 schema_mismatch`.
@Suite struct MergePolicyRouteTests {
    private func pollServer() throws -> ServerFixture {
        let server = try ServerFixture()
        let file = TemporaryStoreFile(prefix: "poll-schema")
        _ = try server.registerSchema(try ObjectStore(path: file.path, entities: [Poll.self]).exportSchema())
        return server
    }

    private func changeSet(_ replica: UUID, _ seq: Int, hlc: UInt64, vector: [UUID: Int], _ operations: String) -> String {
        let entries = vector.map { "\"\($0.key.uuidString)\": \($0.value)" }.joined(separator: ", ")
        return """
            {"replica": "\(replica.uuidString)", "seq": \(seq), "hlc": \(hlc), "vector": {\(entries)}, "operations": [\(operations)]}
            """
    }

    /// A client replica of the poll schema.
    private struct PollClient {
        let file = TemporaryStoreFile(prefix: "poll-client")
        let store: ObjectStore
        let replica: SyncReplica
        let context: ObjectContext

        init(clock: UInt64) throws {
            store = try ObjectStore(path: file.path, entities: [Poll.self])
            let readings = Counter(start: clock)
            replica = try SyncReplica(store: store, wallClock: { readings.next() })
            context = try store.makeContext()
        }

        func push(to server: ServerFixture) throws -> HTTPResponse {
            let vector = try server.serverVector()
            return server.push(try ChangeSetCoding.encode(try replica.changeSets(missingFrom: vector).filter { $0.dot.replica == replica.replicaID },
                                                          base: vector), as: try replica.credentials())
        }
    }

    /// A wall clock advancing one millisecond per reading.
    private final class Counter: Sendable {
        private let value: Mutex<UInt64>
        init(start: UInt64) { value = Mutex(start) }
        func next() -> UInt64 { value.withLock { $0 += 1; return $0 } }
    }

    @Test func incrementsOfACounterAddUpOnTheServer() throws {
        let server = try pollServer()
        let first = try PollClient(clock: serverNow - 10_000), second = try PollClient(clock: serverNow - 20_000)
        let created = Poll()
        created.votes = 10
        created.peak = 2
        first.context.insert(created)
        try first.context.save()
        let pollID = created.objectID, poll = created.objectID.uuidString
        _ = try second.replica.apply(try first.replica.changeSets(missingFrom: VersionVector()))
        try first.push(to: server).expectOK()
        created.votes += 1
        created.peak = 3
        try first.context.save()
        let onSecond = try #require(try second.context.object(Poll.self, id: pollID))
        onSecond.votes += 1
        onSecond.peak = 7
        try second.context.save()
        // The concurrent change sets reach the server one client at a time.
        try first.push(to: server).expectOK()
        try second.push(to: server).expectOK()
        let rows = try ServerFixture.entityRows(at: server.service.registry.dataset("main").storePath)
        let pollRow = try #require(rows.first { $0.hasPrefix("Poll:") })
        #expect(pollRow.contains("| 12 |"), "10 + 1 + 1 votes: \(pollRow)")
        #expect(pollRow.hasSuffix("| 7"), "the largest peak: \(pollRow)")
        let pulled = server.pull(after: "0", limit: 100).text
        #expect(pulled.contains(#""delta":1"#) && pulled.contains(#""op":"increment""#), "relayed as increments: \(pulled)")

        let hlc = (serverNow - 1000) << 16
        let forger = UUID()
        let serverVector = try server.serverVector()
        var forgedVector = [forger: 1]
        for (replica, seq) in serverVector.entries { forgedVector[replica] = Int(seq) }
        let setOfCounter = changeSet(forger, 1, hlc: hlc + 20, vector: forgedVector, """
            {"op": "set", "entity": "Poll", "id": "\(poll)", "attribute": "votes", "values": [99]}
            """)
        let refused = server.push(Data(#"{"base": {}, "changeSets": [\#(setOfCounter)]}"#.utf8))
        #expect(refused.status == .unprocessableContent, "\(refused.text)")
        #expect(refused.errorCode == "schema_mismatch")
        #expect(refused.errorMessage.contains("change set \(Dot(replica: forger, seq: 1)), operation 0: sets Poll.votes of \(poll)") == true,
                "\(refused.errorMessage)")
        let incrementOfMaximum = changeSet(forger, 1, hlc: hlc + 20, vector: forgedVector, """
            {"op": "increment", "entity": "Poll", "id": "\(poll)", "attribute": "peak", "delta": 1}
            """)
        let alsoRefused = server.push(Data(#"{"base": {}, "changeSets": [\#(incrementOfMaximum)]}"#.utf8))
        #expect(alsoRefused.status == .unprocessableContent, "\(alsoRefused.text)")
        #expect(alsoRefused.errorMessage.contains("increments Poll.peak of \(poll)") == true, "\(alsoRefused.errorMessage)")
    }

    /// Writes `Protocol/vectors/sequence-4-merge-policies.json` (with the other vectors,
    /// `SYNCD_WRITE_VECTORS=1 swift test --filter writeVectors`); `ProtocolVectorTests` replays it.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["SYNCD_WRITE_VECTORS"] == "1"))
    func writeVectors() throws {
        let schemaFile = TemporaryStoreFile(prefix: "poll-vector-schema")
        let schema = try ProtocolVectorTests.pretty(try ObjectStore(path: schemaFile.path, entities: [Poll.self]).exportSchema())
        let a = try ProtocolVectorTests.FixedClient(ProtocolVectorTests.replicaA, start: serverNow - 60_000, entities: [Poll.self])
        let b = try ProtocolVectorTests.FixedClient(ProtocolVectorTests.replicaB, start: serverNow - 30_000, entities: [Poll.self])
        let poll = Poll()
        poll.question = "Lunch?"
        poll.votes = 10
        poll.peak = 2
        a.context.insert(poll)
        try a.context.save()
        _ = try b.replica.apply(try a.replica.changeSets(missingFrom: VersionVector()))
        try b.context.refresh()
        // Concurrently: A adds a vote and raises the peak to 3; B adds two votes in two saves and raises it to 7, then lowers it to 5.
        poll.votes += 1
        poll.peak = 3
        try a.context.save()
        let onB = try #require(try b.context.object(Poll.self, id: poll.objectID))
        onB.votes += 1
        onB.peak = 7
        try b.context.save()
        onB.votes += 1
        onB.peak = 5
        try b.context.save()
        let aSets = try a.replica.changeSets(missingFrom: VersionVector())
        let bSets = try b.replica.changeSets(missingFrom: VersionVector()).filter { $0.dot.replica == ProtocolVectorTests.replicaB }
        _ = try a.replica.apply(bSets)
        func batch(_ sets: [ChangeSet], _ client: ProtocolVectorTests.FixedClient, note: String? = nil) throws -> [String: Any] {
            var step: [String: Any] = ["batch": try ProtocolVectorTests.pretty(try ChangeSetCoding.encode(sets, base: VersionVector())),
                                       "expectStatus": 200, "headers": try client.headers]
            if let note { step["note"] = note }
            return step
        }
        try ProtocolVectorTests.write([
            "description": "Merge policies: Poll.votes is a counter (merge: counter), Poll.peak a maximum (merge: max). Created with 10 votes; A adds 1 and sets peak 3, B concurrently adds 1 twice and sets peak 7 then 5 (a save below the maximum records the maximum). B's change sets arrive before A's second: 13 votes, peak 7, in any order.",
            "schema": schema,
            "batches": [try batch([aSets[0]], a), try batch(bSets, b), try batch([aSets[1]], a),
                        try batch(aSets, a, note: "a retry of everything A has: all already applied, no increment counts twice")],
            "expectedRows": try ProtocolVectorTests.rows(at: a.replica.store.path),
        ], to: "sequence-4-merge-policies.json")
    }
}

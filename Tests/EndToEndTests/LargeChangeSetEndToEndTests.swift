import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One save larger than syncd's body limit (lowered here to 16 KiB so the test runs fast)
/// pushes through an upload in parts and pulls by reference to other replicas, also when the
/// pushing client or syncd is killed with SIGKILL mid-upload: nothing is lost or duplicated.
@Suite(.serialized) struct LargeChangeSetEndToEndTests {
    static let squads = 5_000
    let directory: TemporaryDirectory
    let server: SyncdServer
    let token: String

    init() throws {
        directory = try TemporaryDirectory(prefix: "e2e-large")
        server = SyncdServer(dataDirectory: directory.file("syncd-data"))
        server.extraArguments = ["--max-body-bytes", "16384"]
        let added = try ProductProcess.run(product: "syncd", ["token", "add", "--dataset", "e2e", "--data", directory.file("syncd-data")])
        guard added.status == 0 else { throw ProductProcessError("token add failed: \(added.standardError)") }
        token = added.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        try server.start()
    }

    var configuration: SyncClient.Configuration {
        var configuration = SyncClient.Configuration(serverURL: URL(string: server.url)!, dataset: "e2e", token: token)
        configuration.backoff = Backoff(initial: .milliseconds(50), maximum: .milliseconds(400), multiplier: 2, maxAttempts: 4, jitter: { 0.5 })
        return configuration
    }

    /// A store at `name` whose one save creates ``squads`` squads, with the client's configuration saved in it.
    func bigSave(_ name: String) throws -> (path: String, replica: SyncReplica) {
        let path = directory.file(name)
        let store = try ObjectStore(path: path, entities: endToEndEntities)
        let replica = try SyncReplica(store: store)
        try configuration.save(in: replica)
        let context = try store.makeContext()
        Self.insertSquads(Self.squads, into: context)
        try context.save()
        return (path, replica)
    }

    /// Inserts `count` squads whose names make a change set large.
    static func insertSquads(_ count: Int, into context: ObjectContext) {
        for index in 0..<count {
            let squad = Squad()
            squad.name = "squad \(index) with a name long enough to make the change set large"
            squad.score = index
            context.insert(squad)
        }
    }

    /// Lines of syncd's log so far whose request matches `method` and a path containing `fragment`.
    func requests(_ method: String, _ fragment: String, status: String? = nil) -> Int {
        server.logLines.filter { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 5, fields[2] == method, fields[3].contains(fragment) else { return false }
            return status.map { fields[4] == $0 } ?? true
        }.count
    }

    /// How many different parts syncd stored, by path.
    func distinctParts() -> Int {
        Set(server.logLines.compactMap { line -> Substring? in
            let fields = line.split(separator: " ")
            return fields.count >= 5 && fields[2] == "PUT" && fields[4] == "200" ? fields[3] : nil
        }).count
    }

    func pulledCopy(_ name: String, of path: String) async throws {
        let copy = directory.file(name)
        let store = try ObjectStore(path: copy, entities: endToEndEntities)
        let replica = try SyncReplica(store: store)
        let report = try await SyncClient(replica: replica, configuration: configuration).sync()
        #expect(report.pulled == 1)
        #expect(try replica.records("Squad").count == Self.squads)
        #expect(try storeDigest(copy) == storeDigest(path))
    }

    @Test func aClientKilledMidUploadResumesItWithoutLossOrDuplicates() async throws {
        let (path, replica) = try bigSave("a.sqlite")
        let pushing = Process()
        pushing.executableURL = try BuiltProduct.url(named: "sync")
        pushing.arguments = ["--store", path, "push"]
        pushing.standardOutput = FileHandle.nullDevice
        pushing.standardError = FileHandle.nullDevice
        try pushing.run()
        let midUpload = waitUntil(timeout: 300) { requests("PUT", "/parts/", status: "200") >= 3 || !pushing.isRunning }
        kill(pushing.processIdentifier, SIGKILL)
        pushing.waitUntilExit()
        #expect(midUpload)
        // Killed, not finished: the upload was under way.
        #expect(pushing.terminationReason == .uncaughtSignal)
        #expect(requests("POST", "/commit") == 0)
        #expect(requests("PUT", "/parts/") > 0)

        let resumed = try ProductProcess.run(product: "sync", ["--store", path, "push"], timeout: 300)
        #expect(resumed.status == 0, "\(resumed.standardError)")
        // One upload, resumed: it was declared once, and the parts that had arrived were not sent
        // again (one in flight at the kill may have arrived without the client knowing).
        #expect(requests("POST", "/uploads", status: "201") == 1)
        #expect(requests("PUT", "/parts/", status: "200") <= distinctParts() + 1)
        #expect(try replica.unacknowledgedCount() == 0)
        try await pulledCopy("b.sqlite", of: path)
    }

    @Test func syncdKilledMidUploadKeepsTheStagedPartsAndTheClientResumes() async throws {
        let (path, replica) = try bigSave("c.sqlite")
        let client = SyncClient(replica: replica, configuration: configuration)
        let pushing = Task { try? await client.sync() }
        #expect(await eventually(timeout: 300) { requests("PUT", "/parts/", status: "200") >= 3 })
        #expect(server.stop(signal: SIGKILL))
        #expect(requests("POST", "/commit") == 0)
        _ = await pushing.value
        #expect(try replica.unacknowledgedCount() == 1)

        try server.start(port: server.port)
        let report = try await client.sync()
        #expect(report.pushed == 1)
        #expect(try replica.unacknowledgedCount() == 0)
        // The log starts over at each start: no upload was declared again.
        #expect(requests("POST", "/uploads", status: "201") == 0)
        #expect(requests("POST", "/commit", status: "200") == 1)
        try await pulledCopy("d.sqlite", of: path)
    }
}

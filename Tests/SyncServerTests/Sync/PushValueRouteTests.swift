import Foundation
@testable import HTTPServer
import SyncKit
import TestSupport
import Testing

@testable import SyncServer

enum GaugeState: String, CaseIterable, Sendable { case idle, running }

/// An entity with the column types whose ranges and cases syncd checks on arrival.
@Entity final class Gauge {
    var label: String = ""
    var count: Int = 0
    var reading: Int16 = 0
    var ratio: Float = 0
    @Attribute(storage: .raw) var state: GaugeState = .idle
}

/// Values that do not fit the registered schema are refused by syncd's push with
/// `422 schema_mismatch` before anything is stored; values that fit are stored.
@Suite struct PushValueRouteTests {
    static func server() throws -> ServerFixture {
        let server = try ServerFixture()
        try server.registerSchema(try ObjectStore.inMemory(entities: [Gauge.self]).exportSchema())
        return server
    }

    /// A batch of one change set that creates a gauge and sets `attribute` to the JSON `value`.
    static func body(setting attribute: String, to value: String, replica: UUID, gauge: UUID) -> Data {
        let hlc = (serverNow - 1000) << 16
        return Data("""
            {"base": {}, "changeSets": [
              {"replica": "\(replica.uuidString)", "seq": 1, "hlc": \(hlc), "vector": {"\(replica.uuidString)": 1},
               "operations": [{"op": "create", "entity": "Gauge", "id": "\(gauge.uuidString)"},
                              {"op": "set", "entity": "Gauge", "id": "\(gauge.uuidString)", "attribute": "\(attribute)", "values": [\(value)]}]}
            ]}
            """.utf8)
    }

    @Test(arguments: [
        ("count", "\"not a number\"", "to text 'not a number', but it holds an integer"),
        ("label", "null", "to NULL, but it is not optional"),
        ("reading", "40000", "to integer 40000, but it holds an integer from -32768 to 32767"),
        ("reading", "-32769", "to integer -32769, but it holds an integer from -32768 to 32767"),
        ("ratio", "{\"real\": 1e300}", "to real 1e+300, but it holds a number within Float's range"),
        ("state", "\"stopped\"", "to text 'stopped', but it holds a raw value of GaugeState ('idle', 'running')"),
        ("state", "null", "to NULL, but it is not optional"),
    ])
    func aValueOutsideItsAttributeIs422AndStoresNothing(attribute: String, value: String, complaint: String) throws {
        let server = try PushValueRouteTests.server()
        let replica = UUID(), gauge = UUID()
        let response = server.push(PushValueRouteTests.body(setting: attribute, to: value, replica: replica, gauge: gauge))
        #expect(response.status == .unprocessableContent, "\(response.text)")
        #expect(response.errorCode == "schema_mismatch")
        #expect(response.errorMessage == "change set \(Dot(replica: replica, seq: 1)), operation 1: sets Gauge.\(attribute) of \(gauge.uuidString) \(complaint)")
        #expect(try server.serverVector() == VersionVector())
        #expect(try ServerFixture.entityRows(at: server.service.registry.dataset("main").storePath).isEmpty)
    }

    /// An integer beyond 64 bits is not a SQL value at all: the batch is malformed (400).
    @Test func anIntegerBeyondSixtyFourBitsIs400AndStoresNothing() throws {
        let server = try PushValueRouteTests.server()
        let response = server.push(PushValueRouteTests.body(setting: "count", to: "9223372036854775808", replica: UUID(), gauge: UUID()))
        #expect(response.status == .badRequest, "\(response.text)")
        #expect(response.errorCode == "malformed_change_set")
        #expect(try server.serverVector() == VersionVector())
        #expect(try ServerFixture.entityRows(at: server.service.registry.dataset("main").storePath).isEmpty)
    }

    /// The extremes of each range and a listed case, pushed by the replica that saved them.
    @Test func valuesThatFitAreStored() throws {
        let server = try PushValueRouteTests.server()
        let file = TemporaryStoreFile(prefix: "gauge")
        let clock = TickingClock()
        let replica = try SyncReplica(store: try ObjectStore(path: file.path, entities: [Gauge.self]), wallClock: { clock.read() })
        let context = try replica.store.makeContext()
        let gauge = Gauge()
        gauge.count = Int.max
        gauge.reading = Int16.min
        gauge.ratio = Float.greatestFiniteMagnitude
        gauge.state = .running
        context.insert(gauge)
        try context.save()
        let body = try ChangeSetCoding.encode(try replica.changeSets(missingFrom: VersionVector()), base: VersionVector())
        server.push(body, as: try replica.credentials()).expectOK()
        #expect(try server.serverVector() == replica.versionVector())
        let rows = try ServerFixture.entityRows(at: server.service.registry.dataset("main").storePath)
        #expect(rows.count == 1 && rows[0].contains("'running'") && rows[0].contains("-32768"), "\(rows)")
    }
}

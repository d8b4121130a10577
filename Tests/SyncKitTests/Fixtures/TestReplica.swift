import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import Synchronization
import TestSupport

/// A fake wall clock shared by test replicas: every reading advances it, so runs are repeatable.
final class FakeClock: Sendable {
    private let now = Mutex<UInt64>(1_700_000_000_000)
    func read() -> UInt64 { now.withLock { $0 += 1; return $0 } }
    func set(_ value: UInt64) { now.withLock { $0 = value } }
}

/// One replica in a test: a store file, its sync replica, and a context.
final class TestReplica {
    let file: TemporaryStoreFile
    var path: String { file.path }
    let store: ObjectStore
    let replica: SyncReplica
    private let typedContext: ObjectContext?
    /// A context of the store's Swift types (a replica made from a schema alone has none).
    var context: ObjectContext {
        guard let typedContext else { preconditionFailure("\(path) was opened from a schema alone: it has no context") }
        return typedContext
    }
    /// Whether the replica has Swift types, and so a ``context``.
    var hasContext: Bool { typedContext != nil }
    /// Contexts made by `fetch`, kept alive so their objects can still load relationships.
    private var readContexts: [ObjectContext] = []

    init(clock: FakeClock = FakeClock(), name: String = UUID().uuidString, replicaID: ReplicaID = UUID(),
         entities: [any PersistentEntity.Type] = syncEntities, in location: TemporaryStoreFile.Location = .temporaryDirectory) throws {
        file = TemporaryStoreFile(prefix: "sync-\(name)", in: location)
        store = try ObjectStore(path: file.path, entities: entities)
        replica = try SyncReplica(store: store, wallClock: { clock.read() }, newReplicaID: replicaID)
        typedContext = try store.makeContext()
    }

    /// A replica whose store has `schema` and no Swift types: it edits through ``SyncReplica/edit(_:)``.
    init(clock: FakeClock, name: String, replicaID: ReplicaID, schema: SchemaDocument,
         in location: TemporaryStoreFile.Location = .temporaryDirectory) throws {
        file = TemporaryStoreFile(prefix: "sync-\(name)", in: location)
        store = try ObjectStore(path: file.path, schema: schema)
        replica = try SyncReplica(store: store, wallClock: { clock.read() }, newReplicaID: replicaID)
        typedContext = nil
    }

    /// Pulls everything `other` has that this replica lacks, then refreshes the context.
    @discardableResult
    func pull(from other: TestReplica) throws -> SyncReplica.MergeResult {
        let missing = try other.replica.changeSets(missingFrom: replica.versionVector())
        let result = try replica.apply(missing)
        try context.refresh()
        return result
    }

    /// Exchanges both ways: this replica pulls from `other` first when `pullingFirst`, else after it.
    func exchange(with other: TestReplica, pullingFirst: Bool) throws {
        let (first, second) = pullingFirst ? (self, other) : (other, self)
        try first.pull(from: second)
        try second.pull(from: first)
    }

    /// A fresh context's view of an object.
    func fetch<T: PersistentEntity>(_ type: T.Type, _ id: UUID) throws -> T? {
        let reader = try store.makeContext()
        readContexts.append(reader)
        return try reader.object(type, id: id)
    }

    /// The whole stored graph as text: every row of every entity and join table, sorted.
    func digest() throws -> String {
        try TestReplica.digest(of: path)
    }

    /// The stored graph of any store file as text; see ``storeDigest(_:columnsByName:)``.
    static func digest(of path: String, columnsByName: Bool = false) throws -> String {
        try storeDigest(path, columnsByName: columnsByName)
    }

    /// Checks the graph's integrity; returns the problems found (empty when whole).
    func integrityProblems() throws -> [String] {
        let connection = try SQLiteConnection(path: path)
        var problems: [String] = []
        func ids(_ table: String) throws -> Set<String> {
            Set(try connection.rows("SELECT _object_id FROM \"\(table)\"").compactMap { $0[0].textValue })
        }
        let teams = try ids("Team"), members = try ids("Member"), labels = try ids("Label")
        for row in try connection.rows("SELECT _object_id, team, team_position, leads, manager FROM Member") {
            let id = row[0].textValue ?? "?"
            if let team = row[1].textValue, !teams.contains(team) { problems.append("Member \(id).team -> missing Team \(team)") }
            if row[1].isNull != row[2].isNull { problems.append("Member \(id) has team \(row[1]) but position \(row[2])") }
            if let team = row[3].textValue, !teams.contains(team) { problems.append("Member \(id).leads -> missing Team \(team)") }
            if let manager = row[4].textValue, !members.contains(manager) { problems.append("Member \(id).manager -> missing Member \(manager)") }
        }
        for row in try connection.rows("SELECT _object_id, leader FROM Team") {
            let id = row[0].textValue ?? "?"
            if let leader = row[1].textValue {
                if !members.contains(leader) { problems.append("Team \(id).leader -> missing Member \(leader)") }
                let back = try connection.rows("SELECT leads FROM Member WHERE _object_id = ?", [.text(leader)]).first?.first?.textValue
                if back != id { problems.append("Team \(id).leader = \(leader) but that member leads \(back ?? "nil")") }
            }
            let positions = try connection.rows("SELECT team_position FROM Member WHERE team = ? ORDER BY team_position", [.text(id)])
                .map { row -> Int64 in if case .integer(let value) = row[0] { return value } else { return -1 } }
            if positions != Array(0..<Int64(positions.count)) { problems.append("Team \(id) positions \(positions)") }
        }
        for row in try connection.rows("SELECT _object_id, leads FROM Member WHERE leads IS NOT NULL") {
            let back = try connection.rows("SELECT leader FROM Team WHERE _object_id = ?", [row[1]]).first?.first?.textValue
            if back != row[0].textValue { problems.append("Member \(row[0]).leads = \(row[1]) but that team's leader is \(back ?? "nil")") }
        }
        let joinTable = try connection.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('Label_members', 'Member_labels')").first?.first?.textValue ?? ""
        for row in try connection.rows("SELECT owner, member FROM \"\(joinTable)\"") {
            let owner = row[0].textValue ?? "", member = row[1].textValue ?? ""
            let ownerOK = joinTable == "Label_members" ? labels.contains(owner) : members.contains(owner)
            let memberOK = joinTable == "Label_members" ? members.contains(member) : labels.contains(member)
            if !ownerOK || !memberOK { problems.append("\(joinTable) row \(owner) -> \(member) refers to a missing object") }
        }
        problems += try selfInverseProblems(on: connection)
        return problems
    }

    /// Self-inverse relationships (`Peer`, when the store has it) are symmetric: a partner's
    /// partner is the object itself, and every join row has its mirror row.
    private func selfInverseProblems(on connection: SQLiteConnection) throws -> [String] {
        guard try !connection.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'Peer'").isEmpty else { return [] }
        var problems: [String] = []
        for column in ["partner", "twin"] {
            for row in try connection.rows("SELECT p._object_id, p.\(column), q.\(column) FROM Peer p LEFT JOIN Peer q ON q._object_id = p.\(column) WHERE p.\(column) IS NOT NULL") {
                if row[2] != row[0] { problems.append("Peer \(row[0]).\(column) = \(row[1]) but that peer's \(column) is \(row[2])") }
            }
        }
        for table in ["Peer_friends", "Peer_sponsors"] {
            for row in try connection.rows("SELECT owner, member FROM \(table) j WHERE NOT EXISTS (SELECT 1 FROM \(table) k WHERE k.owner = j.member AND k.member = j.owner) OR NOT EXISTS (SELECT 1 FROM Peer WHERE _object_id = j.owner) OR NOT EXISTS (SELECT 1 FROM Peer WHERE _object_id = j.member)") {
                problems.append("\(table) row \(row[0]) -> \(row[1]) has no mirror row or refers to a missing peer")
            }
        }
        return problems
    }
}

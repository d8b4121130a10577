import Foundation
@testable import SyncEngine
import SyncKit

/// syncd's engine over a temporary file, holding what a trio's replica A has stored so far (the
/// shared base), so that tests push concurrent change sets to it as clients would.
struct SyncdCopy {
    let path: String
    let engine: SQLiteDatasetEngine
    let base: [ChangeSet]

    init(of trio: ReplicaTrio, name: String) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString).sqlite").path
        engine = try SQLiteDatasetEngine.create(at: path, schema: trio.a.store.schemaDocument)
        base = try trio.a.replica.changeSets(missingFrom: VersionVector())
        _ = try engine.apply(base, pushedBy: try trio.a.replica.credentials())
    }

    /// Pushes each replica's own change sets made since the base, one replica after the other.
    func push(from pushers: [TestReplica]) throws {
        for pusher in pushers {
            let concurrent = try pusher.replica.changeSets(missingFrom: VersionVector()).filter { changeSet in
                changeSet.dot.replica == pusher.replica.replicaID && !base.contains { $0.dot == changeSet.dot }
            }
            _ = try engine.apply(concurrent, pushedBy: try pusher.replica.credentials())
        }
    }

    func digest() throws -> String { try TestReplica.digest(of: path) }

    func remove() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

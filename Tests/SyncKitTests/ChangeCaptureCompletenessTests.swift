import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport
import Testing

/// Nothing a save or a merge stores may be missing from the change sets: each replica's graph is
/// rebuilt from its change-set log alone, in a shadow replica that only ever applies that log,
/// and must equal the replica's store after every save and every exchange.
///
/// The schema has every relationship shape the product supports: ordered one-to-many
/// (`Team.members`), one-to-one (`Team.leader`), self-referencing one-to-many (`Member.manager`),
/// many-to-many (`Member.labels`), and self-inverse to-one and to-many (`Peer.partner`, `twin`,
/// `friends`, `sponsors`), each with a delete rule (nullify, cascade, deny). Every relationship
/// has an inverse: the store refuses one without.
@Suite struct ChangeCaptureCompletenessTests {
    static let seeds: ClosedRange<UInt64> = 1...40

    @Test func everyReplicaEqualsItsGraphRebuiltFromItsChangeSets() throws {
        var failures: [String] = []
        for seed in ChangeCaptureCompletenessTests.seeds {
            var simulation = try Simulation(seed: seed)
            if let problem = try simulation.runComparingWithReplays() { failures.append("seed \(seed): \(problem)") }
            if failures.count >= 3 { break }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    /// The check can fail: a store changed behind sync's back differs from its replay.
    @Test func aWriteLeftOutOfTheChangeSetsIsDetected() throws {
        var simulation = try Simulation(seed: 1)
        try simulation.seedSharedGraph()
        let replica = simulation.replicas[0]
        let shadow = try TestReplica(name: "shadow", entities: simulationEntities)
        #expect(try simulation.replayDifference(of: replica, into: shadow) == nil)
        let connection = try SQLiteConnection(path: replica.path)
        try connection.run("UPDATE Peer SET partner = NULL")
        #expect(try simulation.replayDifference(of: replica, into: shadow) != nil)
    }
}

extension Simulation {
    /// Runs edits and exchanges like ``run()``, comparing each replica with its shadow after every step.
    mutating func runComparingWithReplays() throws -> String? {
        try seedSharedGraph()
        let shadows = try replicas.indices.map { index in
            try TestReplica(name: "shadow\(seed)-\(index)", entities: simulationEntities)
        }
        for _ in 0..<Int.random(in: 10...25, using: &random) {
            let index = Int.random(in: 0..<replicas.count, using: &random)
            if random.chance(0.6) {
                try edit(replicas[index])
            } else {
                let from = Int.random(in: 0..<replicas.count, using: &random)
                if from != index { try exchange(from: replicas[from], to: replicas[index]) }
            }
            if let difference = try replayDifference(of: replicas[index], into: shadows[index]) {
                return "replica \(index) differs from its change sets replayed:\n\(difference)"
            }
        }
        return nil
    }

    /// Applies what `shadow` lacks of `replica`'s log; describes how their graphs differ, if they do.
    func replayDifference(of replica: TestReplica, into shadow: TestReplica) throws -> String? {
        _ = try shadow.replica.apply(try replica.replica.changeSets(missingFrom: shadow.replica.versionVector()))
        let stored = Set(try replica.digest().split(separator: "\n")), replayed = Set(try shadow.digest().split(separator: "\n"))
        guard stored != replayed else { return nil }
        return " only in the store: \(stored.subtracting(replayed).sorted())\n only in the replay: \(replayed.subtracting(stored).sorted())"
    }
}

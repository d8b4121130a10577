import Foundation
import Testing
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport

/// Store files shrink after compaction: a client's after ``SyncReplica/compactHistory(stable:droppingDeletedObjects:)``,
/// syncd's after ``SQLiteDatasetEngine/compactLog(stable:)``, the first time by a whole `VACUUM`
/// that switches the file to incremental vacuuming, later by an incremental vacuum.
@Suite struct CompactionFileSizeTests {
    /// `rounds` saves on `replica`, each giving every member of `members` a new 400-character
    /// name: history that outweighs the live data many times.
    private static func rename(_ members: [Member], rounds: Range<Int>, on replica: TestReplica) throws {
        for round in rounds {
            for (index, member) in members.enumerated() { member.name = String(repeating: "\((round + index) % 10)", count: 400) }
            try replica.context.save()
        }
    }

    /// A replica whose ten members were renamed `rounds` times, one save each.
    private static func replicaWithHistory(rounds: Int) throws -> (TestReplica, [Member]) {
        let a = try TestReplica(name: "a")
        let members = (0..<10).map { _ in Member() }
        for member in members { a.context.insert(member) }
        try rename(members, rounds: 0..<rounds, on: a)
        return (a, members)
    }

    private static func autoVacuum(of replica: SyncReplica) throws -> SQLValue? {
        try replica.withConnection { try $0.rows("PRAGMA auto_vacuum").first?.first }
    }

    @Test func aClientCompactionThatDropsManyChangeSetsLeavesASmallerFile() throws {
        let (a, members) = try Self.replicaWithHistory(rounds: 200)
        #expect(try Self.autoVacuum(of: a.replica) == .integer(0), "a new store does not vacuum incrementally")

        for rounds in [200..<400, 400..<600] {
            try HistoryCompactionTests.acknowledgeEverything(of: a)
            let before = StoreFileSpace.fileBytes(of: a.path)
            let report = try a.replica.compactHistory(stable: try a.replica.versionVector())
            let after = StoreFileSpace.fileBytes(of: a.path)
            #expect(report.changeSets >= 199, "\(report)")
            #expect(after < before / 2, "\(before) bytes before the compaction, \(after) after")
            #expect(report.fileBytesFreed == before - after, "\(report)")
            // The first compaction switched the file to incremental vacuuming; the second used it.
            #expect(try Self.autoVacuum(of: a.replica) == .integer(2))
            try Self.rename(members, rounds: rounds, on: a)
        }
    }

    /// An app that clears a journal grown large gets the space back: the file shrinks as after a
    /// compaction that frees as much.
    @Test func clearingALargeJournalLeavesASmallerFile() throws {
        let (a, _) = try Self.replicaWithHistory(rounds: 1)
        let write = Stamp(hlc: HLC(rawValue: 1), replica: UUID(), seq: 1)
        try a.replica.withConnection { connection in
            for row in 1...40 {
                var batch = JournalBatch()
                for _ in 0..<1_000 {
                    try batch.append(.attribute, entity: "Member", object: UUID(), property: "name", winner: nil,
                                     loser: JournalSide(value: .json("\"\(String(repeating: "x", count: 100))\""), stamp: write),
                                     cause: Dot(replica: write.replica, seq: UInt64(row)), detail: .text("a lost write"))
                }
                try ConflictJournal.write(batch, on: connection)
            }
        }
        #expect(try a.replica.conflictCount() == 40_000)
        let before = StoreFileSpace.fileBytes(of: a.path)
        try a.replica.clearConflicts()
        let after = StoreFileSpace.fileBytes(of: a.path)
        #expect(try a.replica.conflictCount() == 0)
        #expect(after < before / 2, "\(before) bytes before clearing the journal, \(after) after")
    }

    /// Freeing pages does not repack the pages deletes left part empty; a whole `VACUUM` does, and
    /// a store that already vacuums incrementally still gets one when a quarter of it is free.
    @Test func aStoreThatVacuumsIncrementallyIsRepackedWhenAQuarterOfItIsFree() throws {
        let (a, _) = try Self.replicaWithHistory(rounds: 50)
        try HistoryCompactionTests.acknowledgeEverything(of: a)
        _ = try a.replica.compactHistory(stable: try a.replica.versionVector())
        #expect(try Self.autoVacuum(of: a.replica) == .integer(2))
        // Rows with random keys, two in three deleted: pages a third full, almost none free.
        let copy = TemporaryStoreFile(prefix: "repacked")
        try a.replica.withConnection { connection in
            try connection.execute("CREATE TABLE scattered (key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID")
            try connection.execute("""
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000)
                INSERT INTO scattered SELECT randomblob(16), zeroblob(40) FROM n;
                DELETE FROM scattered WHERE abs(random()) % 3 > 0;
                """)
            var batch = JournalBatch()
            let write = Stamp(hlc: HLC(rawValue: 1), replica: UUID(), seq: 1)
            for _ in 0..<20_000 {
                try batch.append(.attribute, entity: "Member", object: UUID(), property: "name", winner: nil,
                                 loser: JournalSide(value: .json("\"\(String(repeating: "x", count: 100))\""), stamp: write),
                                 cause: Dot(replica: write.replica, seq: 1), detail: .text("a lost write"))
            }
            try ConflictJournal.write(batch, on: connection)
        }
        try a.replica.clearConflicts()
        try a.replica.withConnection { try $0.run("VACUUM INTO ?", [.text(copy.path)]) }
        let (after, packed) = (StoreFileSpace.fileBytes(of: a.path), StoreFileSpace.fileBytes(of: copy.path))
        #expect(Double(after) <= Double(packed) * 1.05, "\(after) bytes after clearing the journal, \(packed) repacked")
    }

    @Test func aCompactionThatDropsFewRowsLeavesTheFileAsItIs() throws {
        let (a, _) = try Self.replicaWithHistory(rounds: 200)
        try HistoryCompactionTests.acknowledgeEverything(of: a)
        // Only the first change set is stable: a few pages free, which later saves reuse.
        let first = VersionVector([a.replica.replicaID: 1])
        let report = try a.replica.compactHistory(stable: first)
        #expect(report.changeSets == 1)
        #expect(try Self.autoVacuum(of: a.replica) == .integer(0), "no whole VACUUM for a few free pages")
    }

    /// Giving space back waits for the file's readers, and an app may hold a read transaction
    /// open while its client syncs: the compaction must not wait the busy timeout (5 s) for it.
    /// The bound below is under even one such wait (the two waits took 10 s), not a speed claim.
    @Test func anOpenReadTransactionDoesNotHoldACompactionUp() throws {
        let (a, members) = try Self.replicaWithHistory(rounds: 50)
        try HistoryCompactionTests.acknowledgeEverything(of: a)
        let reader = try SQLiteConnection(path: a.path)
        try reader.execute("BEGIN")
        _ = try reader.rows("SELECT count(*) FROM _sync_changeset")
        let clock = ContinuousClock()
        let start = clock.now
        let report = try a.replica.compactHistory(stable: try a.replica.versionVector())
        let waited = clock.now - start
        #expect(report.changeSets >= 49, "\(report)")
        #expect(waited < .seconds(4), "the compaction waited \(waited) for a reader")
        try reader.execute("COMMIT")

        // With the reader gone, the next compaction truncates the WAL again.
        try Self.rename(members, rounds: 50..<60, on: a)
        try HistoryCompactionTests.acknowledgeEverything(of: a)
        #expect(try a.replica.compactHistory(stable: try a.replica.versionVector()).changeSets == 10)
        let walBytes = (try? FileManager.default.attributesOfItem(atPath: a.path + "-wal")[.size] as? NSNumber)?.int64Value
        #expect(walBytes == 0)
    }

    @Test func aServerLogCompactionLeavesASmallerFile() throws {
        let (a, _) = try Self.replicaWithHistory(rounds: 200)
        let file = TemporaryStoreFile(prefix: "compacted-server")
        let engine = try SQLiteDatasetEngine.create(at: file.path, schema: a.store.schemaDocument)
        _ = try engine.apply(try a.replica.changeSets(missingFrom: VersionVector()), pushedBy: try a.replica.credentials())

        let before = StoreFileSpace.fileBytes(of: file.path)
        let report = try engine.compactLog(stable: try engine.versionVector())
        let after = StoreFileSpace.fileBytes(of: file.path)
        #expect(report.entriesRemoved == 200 && report.changeSetsRemoved == 199, "\(report)")
        #expect(after < before / 2, "\(before) bytes before the compaction, \(after) after")
        #expect(report.fileBytesFreed == before - after, "\(report)")
        #expect(try Self.autoVacuum(of: engine.replica) == .integer(2))
    }
}

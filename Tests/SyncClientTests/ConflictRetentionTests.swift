import Foundation
import SyncKit
import Testing

/// A client keeps its whole conflict journal unless configured to keep only the newest entries;
/// then each pull that journals removes the oldest ones and reports how many.
@Suite(.serialized) struct ConflictRetentionTests {
    /// A creates `notes` notes and both replicas take them; then each retitles every one of them
    /// without having seen the other's titles, and B pushes: A's next pull journals one
    /// `attribute` entry per note, whichever title wins.
    static func concurrentRetitles(of notes: Int, a: ClientReplica, b: ClientReplica, server: FakeSyncServer, round: Int,
                                   client: SyncClient) async throws {
        if round == 0 {
            try a.addNotes(notes)
            _ = try await client.sync()
            _ = try await b.client(server).sync()
        }
        for (replica, name) in [(a, "a"), (b, "b")] {
            let context = try replica.store.makeContext()
            for note in try context.fetchAll(Note.self) { note.title = "\(name) \(round) \(note.count)" }
            try context.save()
        }
        _ = try await b.client(server).sync()
    }

    @Test func aClientKeepingTheNewestEntriesRemovesTheOldestAfterEachPullThatJournals() async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica(), b = try ClientReplica()
        let client = a.client(server) { $0.conflictRetention = .newest(4) }

        try await ConflictRetentionTests.concurrentRetitles(of: 6, a: a, b: b, server: server, round: 0, client: client)
        let first = try await client.sync()
        #expect(first.newConflicts == 6 && first.conflictsRemoved == 2, "\(first)")
        #expect(try a.replica.conflicts().map(\.number) == [3, 4, 5, 6])
        #expect(try a.replica.conflicts().allSatisfy { $0.kind == .attribute && $0.property == "title" })

        // A pull that journals nothing removes nothing.
        let quiet = try await client.sync()
        #expect(quiet.newConflicts == 0 && quiet.conflictsRemoved == 0)
        #expect(try a.replica.conflictCount() == 4)

        try await ConflictRetentionTests.concurrentRetitles(of: 6, a: a, b: b, server: server, round: 1, client: client)
        let second = try await client.sync()
        #expect(second.newConflicts == 6 && second.conflictsRemoved == 6, "\(second)")
        #expect(try a.replica.conflicts().map(\.number) == [9, 10, 11, 12])
        #expect(try a.replica.lastConflictNumber() == 12)
    }

    @Test func aTrimmedJournalLeavesItsPagesForTheEntriesOfLaterPulls() async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica(), b = try ClientReplica()
        let client = a.client(server) { $0.conflictRetention = .newest(300) }
        // A store in incremental-vacuum mode, as a compaction's VACUUM leaves it: there, freed
        // pages could go back to the file system at once.
        let connection = try SQLiteConnection(path: a.path)
        try connection.execute("PRAGMA auto_vacuum = INCREMENTAL; VACUUM")
        func pragma(_ name: String) throws -> SQLValue? { try connection.rows("PRAGMA \(name)").first?.first }

        for round in 0..<4 {
            try await ConflictRetentionTests.concurrentRetitles(of: 300, a: a, b: b, server: server, round: round, client: client)
            let report = try await client.sync()
            #expect(report.newConflicts == 300 && report.conflictsRemoved == (round == 0 ? 0 : 300), "\(report)")
            if round > 0 {
                // The previous round's entries went; their pages stayed free in the file.
                #expect(try pragma("freelist_count") != .integer(0))
            }
        }
        #expect(try a.replica.conflicts().map(\.number) == Array(901...1200))
        // Clearing the journal gives everything back.
        try a.replica.clearConflicts()
        #expect(try pragma("freelist_count") == .integer(0))
    }

    @Test func aClientKeepsEveryEntryByDefault() async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica(), b = try ClientReplica()
        let client = a.client(server)
        #expect(client.configuration.conflictRetention == .all)

        try await ConflictRetentionTests.concurrentRetitles(of: 6, a: a, b: b, server: server, round: 0, client: client)
        let report = try await client.sync()
        #expect(report.newConflicts == 6 && report.conflictsRemoved == 0)
        #expect(try a.replica.conflicts().map(\.number) == Array(1...6))
    }

    @Test func keepingTheNewestRemovesOnlyWhatIsBeyondTheCount() async throws {
        let server = FakeSyncServer()
        try server.start()
        let a = try ClientReplica(), b = try ClientReplica()
        try await ConflictRetentionTests.concurrentRetitles(of: 5, a: a, b: b, server: server, round: 0, client: a.client(server))
        _ = try await a.client(server).sync()
        #expect(try a.replica.conflictCount() == 5)

        #expect(try a.replica.clearConflicts(keepingNewest: 5) == 0)
        #expect(try a.replica.clearConflicts(keepingNewest: 9) == 0)
        #expect(try a.replica.clearConflicts(keepingNewest: 2) == 3)
        #expect(try a.replica.conflicts().map(\.number) == [4, 5])
        // A count below zero keeps nothing, as 0 does.
        #expect(try a.replica.clearConflicts(keepingNewest: -1) == 2)
        #expect(try a.replica.conflictCount() == 0)
    }
}

import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import Testing

/// The metadata a local save records (``LocalCapture/record(_:deletedValues:)``): one
/// `_sync_object` row per new object, one `_sync_edge` row per reference, whatever order the
/// objects were inserted in, and a second creation of an object refused as before.
@Suite struct LocalSaveCaptureTests {
    static func count(_ sql: String, on replica: TestReplica) throws -> Int64 {
        try replica.replica.withConnection { connection in
            guard case .integer(let count)? = try connection.rows(sql).first?.first else { return -1 }
            return count
        }
    }

    @Test func aLargeSaveRecordsEveryObjectAndEdgeAndReplicates() throws {
        let a = try TestReplica(name: "a")
        let teams = (0..<3).map { index in
            let team = Team()
            team.name = "Team \(index)"
            return team
        }
        var members: [Member] = []
        for index in 0..<300 {
            let member = Member()
            member.name = "Member \(index)"
            member.level = index
            member.team = teams[index % 3]
            // Some references go to objects of the same save inserted later (and so earlier in
            // id order or not, at random).
            if index >= 10 { member.manager = members[index / 2] }
            a.context.insert(member)
            members.append(member)
        }
        try a.context.save()
        #expect(try LocalSaveCaptureTests.count("SELECT count(*) FROM _sync_object", on: a) == 303)
        #expect(try LocalSaveCaptureTests.count("SELECT count(*) FROM _sync_object WHERE tombstone IS NOT NULL", on: a) == 0)
        // team (300) + manager (290): each reference once, from its canonical side.
        #expect(try LocalSaveCaptureTests.count("SELECT count(*) FROM _sync_edge", on: a) == 590)
        #expect(try LocalSaveCaptureTests.count("SELECT count(*) FROM _sync_edge WHERE hlc = (SELECT hlc FROM _sync_changeset)", on: a) == 590)
        let recorded = try a.replica.localChangeSets(status: .pending)
        #expect(recorded.count == 1)
        #expect(recorded.first?.operations.count { if case .create = $0 { true } else { false } } == 303)

        let b = try TestReplica(name: "b")
        try b.pull(from: a)
        #expect(try b.digest() == a.digest())
        #expect(try b.integrityProblems().isEmpty)
        // Metadata written in bulk reads back like any other: a later edit of a member merges.
        members[7].name = "Renamed"
        members[7].team = teams[0]
        try a.context.save()
        try b.pull(from: a)
        #expect(try b.fetch(Member.self, members[7].objectID)?.name == "Renamed")
        #expect(try b.fetch(Member.self, members[7].objectID)?.team?.objectID == teams[0].objectID)
        #expect(try b.digest() == a.digest())
    }

    @Test func insertingAnIdentifierThatWasEverCreatedIsRefused() throws {
        let a = try TestReplica(name: "a")
        let label = Label()
        label.text = "first"
        a.context.insert(label)
        try a.context.save()
        a.context.delete(label)
        try a.context.save()

        // A new object given the deleted one's identifier: its row is gone, its metadata is not.
        let again = Label()
        again._$entityState.objectID = label.objectID
        again.text = "second"
        a.context.insert(again)
        let error = #expect(throws: SyncError.self) { try a.context.save() }
        #expect(error?.code == .conflictingChangeSet)
        #expect(error?.message.hasSuffix("operation 0: creates Label \(label.objectID), which already exists") == true, "\(error?.message ?? "")")
        // The save rolled back: no row, and the outbox still holds the two earlier change sets.
        #expect(try LocalSaveCaptureTests.count("SELECT count(*) FROM Label", on: a) == 0)
        #expect(try a.replica.localChangeSets(status: .pending).count == 2)
    }
}

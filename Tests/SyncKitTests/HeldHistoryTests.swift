import Foundation
import Testing
@testable import SyncEngine
import SyncKit

/// `SyncReplica.heldHistory()`: what a store file accumulates as it saves and merges.
@Suite struct HeldHistoryTests {
    @Test func countsFollowSavesDeletesAndMerges() throws {
        let a = try TestReplica(name: "a"), b = try TestReplica(name: "b")
        let empty = try a.replica.heldHistory()
        #expect(empty.changeSets == 0 && empty.fieldStamps == 0 && empty.edgeAdditions == 0 && empty.deleteRecords == 0)

        let team = Team(), member = Member()
        team.name = "T"; member.name = "m"
        team.addToMembers(member)
        a.context.insert(team)
        try a.context.save()
        var held = try a.replica.heldHistory()
        // Creation values carry the creation stamp: no field stamp yet; one edge, member → team.
        #expect(held.pending == 1 && held.changeSets == 1)
        #expect(held.fieldStamps == 0 && held.edgeAdditions == 1 && held.edgeRemovals == 0)

        member.level = 3
        team.score = 2
        try a.context.save()
        held = try a.replica.heldHistory()
        #expect(held.pending == 2 && held.fieldStamps == 2)

        member.team = nil
        try a.context.save()
        a.context.delete(member)
        try a.context.save()
        held = try a.replica.heldHistory()
        #expect(held.pending == 4)
        #expect(held.edgeAdditions == 1 && held.edgeRemovals == 1, "the unlink is kept next to the link")
        #expect(held.deleteRecords == 1 && held.tombstones == 1, "the deleted member keeps its last values")
        #expect(held.journalEntries == 0)
        #expect(held.fileBytes > 0)

        try b.pull(from: a)
        let merged = try b.replica.heldHistory()
        #expect(merged.remote == 4 && merged.pending == 0 && merged.changeSets == 4)
        #expect(merged.fieldStamps == held.fieldStamps && merged.edgeAdditions == held.edgeAdditions
                && merged.edgeRemovals == held.edgeRemovals && merged.deleteRecords == held.deleteRecords
                && merged.tombstones == held.tombstones, "a merging replica holds the same history")
    }

    /// Journal entries are counted one by one, though the entries of one cause share a row.
    @Test func journalEntriesAreCountedNotTheirRows() throws {
        let a = try TestReplica(name: "a"), b = try TestReplica(name: "b")
        let member = Member()
        member.name = "m"
        a.context.insert(member)
        try a.context.save()
        try b.pull(from: a)
        // One change set of A loses two writes to B's concurrent later ones: two entries, one cause.
        let onA = try a.object(Member.self, member.objectID), onB = try b.object(Member.self, member.objectID)
        onA.name = "a"; onA.level = 1
        try a.context.save()
        onB.name = "b"; onB.level = 2
        try b.context.save()
        try b.pull(from: a)
        let rows = try b.replica.withConnection { try ConflictTable.rows(on: $0) }
        #expect(rows.count == 1 && rows[0].count == 2)
        #expect(try b.replica.heldHistory().journalEntries == 2)
    }
}

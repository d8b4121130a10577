import Foundation
import SQLiteDatabase
@testable import SyncEngine
import Testing

/// The edge reads of many objects in one statement, which materializing uses to read ahead,
/// against the reads of one object each: the same additions, in the same order, removed ones and
/// additions of several replicas included.
@Suite struct EdgeTableReadTests {
    /// A store where two replicas linked members to teams, one member moved, and one was deleted.
    static func storeWithEdges() throws -> (replica: TestReplica, members: [UUID], teams: [UUID]) {
        let a = try TestReplica(name: "edges-a")
        let b = try TestReplica(name: "edges-b")
        let (rovers, ada) = try StoreFormatTests.savedTeam(in: a)
        let comets = Team()
        comets.name = "Comets"
        a.context.insert(comets)
        let grace = Member()
        grace.name = "Grace"
        grace.team = rovers
        a.context.insert(grace)
        try a.context.save()
        _ = try b.replica.apply(try a.replica.changeSets(missingFrom: VersionVector()))
        let (otherRovers, recruit) = try StoreFormatTests.savedTeam(in: b)
        _ = try a.replica.apply(try b.replica.changeSets(missingFrom: try a.replica.versionVector()))
        grace.team = comets
        a.context.delete(ada)
        try a.context.save()
        return (a, [ada.objectID, grace.objectID, recruit.objectID, UUID()], [rovers.objectID, comets.objectID, otherRovers.objectID, UUID()])
    }

    static func describe(_ edges: [EdgeTable.StoredEdge]) -> [String] {
        edges.map { "\($0.source) \($0.target) \($0.added) removed: \($0.isRemoved) \(String(describing: $0.removalRoot))" }
    }

    @Test func theEdgesOfManySourcesAreEachSourcesOwnReads() throws {
        let (replica, members, _) = try Self.storeWithEdges()
        let connection = try SQLiteConnection(path: replica.path)
        let together = try EdgeTable.edges(fromEach: members[...], of: "Member", "team", on: connection)
        var readOneByOne = 0
        for member in members {
            let alone = try EdgeTable.edges(from: ObjectKey(entity: "Member", id: member), "team", on: connection)
            readOneByOne += alone.count
            #expect(Self.describe(together[member] ?? []) == Self.describe(alone))
        }
        // Grace's move leaves a removed and a live addition; Ada's delete removed hers.
        #expect(readOneByOne == 4)
        #expect(together[members[1]]?.map(\.isRemoved).sorted { !$0 && $1 } == [false, true])
        #expect(together[members[3]] == nil)
    }

    @Test func theEdgesIntoManyTargetsAreEachTargetsOwnReads() throws {
        let (replica, _, teams) = try Self.storeWithEdges()
        let connection = try SQLiteConnection(path: replica.path)
        let together = try EdgeTable.edges(toEach: teams[...], "team", of: "Member", on: connection)
        var readOneByOne = 0
        for team in teams {
            let alone = try EdgeTable.edges(to: team, "team", of: "Member", on: connection)
            readOneByOne += alone.count
            #expect(Self.describe(together[team] ?? []) == Self.describe(alone))
        }
        #expect(readOneByOne == 4)
        #expect(together[teams[3]] == nil)
    }
}

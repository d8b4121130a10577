import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import Testing

/// A merge's work follows the change sets it merges and the objects they touch, not the size of
/// the store: counted in SQLite's virtual machine steps, statement by statement, which are the same
/// on every machine (a statement that reads a whole table, or a whole entity's edges, where it
/// meant one object's, runs more of them in a larger store).
@Suite struct MergeCostTests {
    /// The steps each statement ran on `A` saving the last of `rounds` rounds of its work (the
    /// store's writes and the change set's capture), and on `B` merging that round, after pulling
    /// every round before it. A round creates a team of three ordered members, one
    /// managing the others, and a label on each; unlinks a label of the round before; and
    /// deletes the team of two rounds before (cascading to its members, nullifying their
    /// labels). In the last round `B` also deletes a member of the round before while `A` makes
    /// it a manager, so that merging the round voids `B`'s delete (the deny rule of `reports`):
    /// every kind of edge and delete a merge writes.
    private static func stepsOfLastRound(of rounds: Int) throws -> (save: [String: Int], merge: [String: Int]) {
        let a = try TestReplica(name: "a"), b = try TestReplica(name: "b")
        var teams: [Team] = []
        var save: [String: Int] = [:], merge: [String: Int] = [:]
        for round in 0..<rounds {
            let team = Team()
            team.name = "team \(round)"
            a.context.insert(team)
            let members = (0..<3).map { index in
                let member = Member()
                member.name = "member \(round).\(index)"
                return member
            }
            let label = Label()
            label.text = "label \(round)"
            for member in members {
                a.context.insert(member)
                member.labels.insert(label)
            }
            members[1].manager = members[0]
            members[2].manager = members[0]
            team.members = members
            if teams.count >= 1, let previous = teams.last?.members.first {
                previous.labels.removeAll()
            }
            if teams.count >= 2 { a.context.delete(teams.removeFirst()) }
            let last = round == rounds - 1
            if last, let previous = teams.last?.members.last {
                members[2].manager = previous
                try b.context.delete(#require(try b.context.object(Member.self, id: previous.objectID)))
                try b.context.save()
            }
            teams.append(team)
            if last { _ = a.context.connection.takeStatementSteps() }
            try a.context.save()
            if last { save = a.context.connection.takeStatementSteps() }

            if last { _ = try b.replica.withConnection { $0.takeStatementSteps() } }
            try b.pull(from: a)
            if last { merge = try b.replica.withConnection { $0.takeStatementSteps() } }
        }
        #expect(try a.digest() == b.digest())
        #expect(try b.replica.conflicts().contains { $0.kind == .voidedDelete }, "B's delete is void")
        return (save, merge)
    }

    /// Expects no statement in `large` to have run many more steps than in `small`.
    private static func expectSameWork(_ small: [String: Int], _ large: [String: Int], of work: String) {
        #expect(small.count > 10, "\(work) ran \(small.count) statements")
        for sql in Set(small.keys).union(large.keys).sorted() {
            // A few steps either way: a B-tree's pages split differently around the same rows.
            // A statement that reads what the store holds runs twenty times as many.
            let before = small[sql] ?? 0, after = large[sql] ?? 0
            #expect(after <= before + before / 10 + 2, "\(sql) ran \(before) steps \(work) of 10 rounds and \(after) of 200")
        }
    }

    @Test func mergingIntoALargerStoreRunsTheSameSteps() throws {
        let small = try Self.stepsOfLastRound(of: 10), large = try Self.stepsOfLastRound(of: 200)
        Self.expectSameWork(small.merge, large.merge, of: "merging a round into a store")
    }

    @Test func savingInALargerStoreRunsTheSameSteps() throws {
        let small = try Self.stepsOfLastRound(of: 10), large = try Self.stepsOfLastRound(of: 200)
        Self.expectSameWork(small.save, large.save, of: "saving a round in a store")
    }
}

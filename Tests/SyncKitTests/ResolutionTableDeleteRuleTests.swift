import Foundation
@testable import SyncEngine
import SyncKit
import Testing

/// CONTRACT.md §3.6: a new reference to an object deleted concurrently is decided
/// by the delete rule of the deleted object's relationship.
@Suite struct ResolutionTableDeleteRuleTests {
    // MARK: nullify

    /// Label.members is nullify: B's new label on a member is dropped when A deleted the label.
    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func nullifyDropsTheNewManyToManyReference(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let trio = try ReplicaTrio()
        let member = Member(), label = Label(), kept = Label()
        member.name = "M"; label.text = "doomed"; kept.text = "kept"
        member.addToLabels(kept)
        trio.a.context.insert(member)
        trio.a.context.insert(label)
        try trio.a.context.save()
        try trio.shareBase()

        trio.make(later: later)
        trio.a.context.delete(try trio.a.object(Label.self, label.objectID))
        try trio.a.context.save()
        try trio.b.object(Member.self, member.objectID).addToLabels(try trio.b.object(Label.self, label.objectID))
        try trio.b.context.save()
        let deleteDot = try trio.lastDot(.a), linkDot = try trio.lastDot(.b)

        try trio.exchange(order)

        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try !replica.exists(Label.self, label.objectID), "label on \(name)")
            #expect(try replica.fetch(Member.self, member.objectID)?.labels.map(\.objectID) == [kept.objectID], "labels on \(name)")
        }
        for (name, replica) in trio.both {
            let entries = try replica.replica.conflicts()
            #expect(entries.map(\.kind) == [.referenceDropped], "journal of \(name): \(entries)")
            guard let entry = entries.first else { continue }
            #expect(entry.entity == "Member")
            #expect(entry.objectID == member.objectID)
            #expect(entry.property == "labels")
            #expect(entry.loser.value == journalJSON(label.objectID))
            #expect(entry.loser.dot == linkDot)
            #expect(entry.winner?.dot == deleteDot)
            #expect(entry.cause == deleteDot)
        }
        try trio.expectConverged()
    }

    /// Member.leads is nullify: a team made to follow a member deleted concurrently has no leader.
    @Test(arguments: ExchangeOrder.allCases)
    func nullifyDropsTheNewOneToOneReference(order: ExchangeOrder) throws {
        let trio = try ReplicaTrio()
        let team = Team(), member = Member()
        team.name = "T"; member.name = "M"
        trio.a.context.insert(team)
        trio.a.context.insert(member)
        try trio.a.context.save()
        try trio.shareBase()

        trio.make(later: .b)
        trio.a.context.delete(try trio.a.object(Member.self, member.objectID))
        try trio.a.context.save()
        try trio.b.object(Team.self, team.objectID).leader = try trio.b.object(Member.self, member.objectID)
        try trio.b.context.save()

        try trio.exchange(order)

        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try !replica.exists(Member.self, member.objectID), "member on \(name)")
            #expect(try replica.exists(Team.self, team.objectID), "team on \(name)")
            #expect(try replica.fetch(Team.self, team.objectID)?.leader == nil, "leader on \(name)")
        }
        for (name, replica) in trio.both {
            let entries = try replica.replica.conflicts()
            #expect(entries.map(\.kind) == [.referenceDropped], "journal of \(name): \(entries)")
            #expect(entries.first?.entity == "Team")
            #expect(entries.first?.objectID == team.objectID)
            #expect(entries.first?.property == "leader")
        }
        try trio.expectConverged()
    }

    // MARK: cascade

    /// Team.members is cascade: a member added to a team deleted concurrently is deleted too, and
    /// its nullify relationships let go of it.
    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func cascadeDeletesTheNewlyReferencingObject(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let trio = try ReplicaTrio()
        let team = Team(), old = Member(), other = Team(), label = Label(), stays = Member()
        team.name = "doomed"; old.name = "old"; other.name = "other"; label.text = "L"; stays.name = "stays"
        team.addToMembers(old)
        other.addToMembers(stays)
        trio.a.context.insert(team)
        trio.a.context.insert(other)
        trio.a.context.insert(label)
        try trio.a.context.save()
        try trio.shareBase()

        trio.make(later: later)
        trio.a.context.delete(try trio.a.object(Team.self, team.objectID))
        try trio.a.context.save()
        let newcomer = Member()
        newcomer.name = "newcomer"
        newcomer.team = try trio.b.object(Team.self, team.objectID)
        newcomer.leads = try trio.b.object(Team.self, other.objectID)
        newcomer.manager = try trio.b.object(Member.self, stays.objectID)
        newcomer.addToLabels(try trio.b.object(Label.self, label.objectID))
        trio.b.context.insert(newcomer)
        try trio.b.context.save()
        let deleteDot = try trio.lastDot(.a)

        try trio.exchange(order)

        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try !replica.exists(Team.self, team.objectID), "team on \(name)")
            #expect(try !replica.exists(Member.self, old.objectID), "old member on \(name)")
            #expect(try !replica.exists(Member.self, newcomer.objectID), "newcomer on \(name)")
            #expect(try replica.fetch(Team.self, other.objectID)?.leader == nil, "other team's leader on \(name)")
            #expect(try replica.fetch(Label.self, label.objectID)?.members.isEmpty == true, "label on \(name)")
            #expect(try replica.fetch(Member.self, stays.objectID)?.reports.isEmpty == true, "reports on \(name)")
        }
        for (name, replica) in trio.both {
            let entries = try replica.journal(.cascadedDelete)
            let journal = try replica.replica.conflicts()
            #expect(entries.count == 1, "journal of \(name): \(journal)")
            guard let entry = entries.first else { continue }
            #expect(entry.entity == "Member")
            #expect(entry.objectID == newcomer.objectID)
            #expect(entry.property == nil)
            #expect(entry.winner?.dot == deleteDot)
            #expect(entry.cause == deleteDot)
            #expect(try replica.journal(.voidedDelete).isEmpty)
        }
        try trio.expectConverged()
    }

    /// The cascaded object's own cascades follow: Folder.children is cascade, so a subtree
    /// created under a folder deleted concurrently goes with it.
    @Test(arguments: ExchangeOrder.allCases)
    func cascadedDeleteFollowsTheDeletedObjectsOwnCascades(order: ExchangeOrder) throws {
        let trio = try ReplicaTrio(entities: syncEntities + [Folder.self])
        let root = Folder(), child = Folder(), sibling = Folder()
        root.title = "root"; child.title = "child"; sibling.title = "sibling"
        root.addToChildren(child)
        trio.a.context.insert(root)
        trio.a.context.insert(sibling)
        try trio.a.context.save()
        try trio.shareBase()

        trio.make(later: .b)
        trio.a.context.delete(try trio.a.object(Folder.self, root.objectID))
        try trio.a.context.save()
        let sub = Folder(), grandchild = Folder()
        sub.title = "sub"; grandchild.title = "grandchild"
        sub.parent = try trio.b.object(Folder.self, child.objectID)
        grandchild.parent = sub
        trio.b.context.insert(sub)
        try trio.b.context.save()

        try trio.exchange(order)

        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            for folder in [root, child, sub, grandchild] {
                #expect(try !replica.exists(Folder.self, folder.objectID), "\(folder.title) on \(name)")
            }
            #expect(try replica.exists(Folder.self, sibling.objectID), "sibling on \(name)")
        }
        for (name, replica) in trio.both {
            let cascaded = Set(try replica.journal(.cascadedDelete).map(\.objectID))
            let journal = try replica.replica.conflicts()
            #expect(cascaded == [sub.objectID, grandchild.objectID], "journal of \(name): \(journal)")
        }
        try trio.expectConverged()
    }

    // MARK: deny

    /// Member.reports is deny: A deletes a member while B makes someone report to it. The delete is
    /// void everywhere: the member stays with its last values and its relationships, and the
    /// voided delete is journaled.
    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func denyVoidsTheDeleteAndKeepsTheLastValues(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let trio = try ReplicaTrio()
        let team = Team(), boss = Member(), before = Member(), after = Member(), report = Member(), label = Label()
        team.name = "T"; boss.name = "boss"; before.name = "before"; after.name = "after"; report.name = "report"; label.text = "L"
        for member in [before, boss, after] { team.addToMembers(member) }
        boss.addToLabels(label)
        boss.level = 1
        trio.a.context.insert(team)
        trio.a.context.insert(report)
        try trio.a.context.save()
        try trio.shareBase()

        trio.make(later: later)
        let aBoss = try trio.a.object(Member.self, boss.objectID)
        aBoss.level = 2
        try trio.a.context.save()
        trio.a.context.delete(aBoss)
        try trio.a.context.save()
        let deleteDot = try trio.lastDot(.a)
        try trio.b.object(Member.self, report.objectID).manager = try trio.b.object(Member.self, boss.objectID)
        try trio.b.context.save()

        try trio.exchange(order)

        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            let revived = try #require(try replica.fetch(Member.self, boss.objectID), "boss missing on \(name)")
            #expect(revived.name == "boss", "name on \(name)")
            #expect(revived.level == 2, "last level on \(name)")
            #expect(revived.team?.objectID == team.objectID, "team on \(name)")
            #expect(revived.labels.map(\.objectID) == [label.objectID], "labels on \(name)")
            #expect(revived.reports.map(\.objectID) == [report.objectID], "reports on \(name)")
            #expect(try replica.fetch(Team.self, team.objectID)?.members.map(\.name) == ["before", "boss", "after"], "order on \(name)")
            #expect(try replica.fetch(Member.self, report.objectID)?.manager?.objectID == boss.objectID, "manager on \(name)")
        }
        for (name, replica) in trio.both {
            let entries = try replica.replica.conflicts()
            #expect(entries.map(\.kind) == [.voidedDelete], "journal of \(name): \(entries)")
            guard let entry = entries.first else { continue }
            #expect(entry.entity == "Member")
            #expect(entry.objectID == boss.objectID)
            #expect(entry.property == "reports")
            #expect(entry.loser.dot == deleteDot)
            #expect(entry.cause == deleteDot)
        }
        try trio.expectConverged()

        // The revived member can be edited and deleted again (once nobody reports to it).
        let bReport = try trio.b.object(Member.self, report.objectID)
        bReport.manager = nil
        try trio.b.context.save()
        trio.b.context.delete(try trio.b.object(Member.self, boss.objectID))
        try trio.b.context.save()
        try trio.exchange(order)
        for replica in [trio.a, trio.b, trio.c] { #expect(try !replica.exists(Member.self, boss.objectID)) }
        for (name, replica) in trio.both {
            #expect(try replica.journal(.voidedDelete).count == 1, "the second delete was journaled as void on \(name)")
        }
        try trio.expectConverged()
    }

    /// A delete voided by deny does not take a concurrent update with it: the object comes back
    /// with the update, which is (larger HLC) the latest write of its attribute.
    @Test(arguments: ExchangeOrder.allCases)
    func denyVoidedDeleteKeepsAConcurrentUpdate(order: ExchangeOrder) throws {
        let trio = try ReplicaTrio()
        let boss = Member(), report = Member()
        boss.name = "boss"; report.name = "report"
        trio.a.context.insert(boss)
        trio.a.context.insert(report)
        try trio.a.context.save()
        try trio.shareBase()

        trio.make(later: .b)
        trio.a.context.delete(try trio.a.object(Member.self, boss.objectID))
        try trio.a.context.save()
        let bBoss = try trio.b.object(Member.self, boss.objectID)
        bBoss.level = 8
        try trio.b.object(Member.self, report.objectID).manager = bBoss
        try trio.b.context.save()

        try trio.exchange(order)

        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try replica.fetch(Member.self, boss.objectID)?.level == 8, "level on \(name)")
            #expect(try replica.fetch(Member.self, report.objectID)?.manager?.objectID == boss.objectID, "manager on \(name)")
        }
        for (name, replica) in trio.both {
            #expect(try replica.journal(.voidedDelete).map(\.objectID) == [boss.objectID], "journal of \(name)")
        }
        try trio.expectConverged()
    }

    /// A cascade that reaches a deny voids the whole delete: A deletes a team while B adds a
    /// member to it that someone reports to.
    @Test(arguments: ExchangeOrder.allCases)
    func cascadeReachingADenyVoidsTheWholeDelete(order: ExchangeOrder) throws {
        let trio = try ReplicaTrio()
        let team = Team(), old = Member(), outsider = Member()
        team.name = "T"; old.name = "old"; outsider.name = "outsider"
        team.addToMembers(old)
        trio.a.context.insert(team)
        trio.a.context.insert(outsider)
        try trio.a.context.save()
        try trio.shareBase()

        trio.make(later: .b)
        trio.a.context.delete(try trio.a.object(Team.self, team.objectID))
        try trio.a.context.save()
        let newcomer = Member()
        newcomer.name = "newcomer"
        try trio.b.object(Team.self, team.objectID).addToMembers(newcomer)
        try trio.b.object(Member.self, outsider.objectID).manager = newcomer
        try trio.b.context.save()

        try trio.exchange(order)

        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try replica.fetch(Team.self, team.objectID)?.members.map(\.name) == ["old", "newcomer"], "team on \(name)")
            #expect(try replica.fetch(Member.self, outsider.objectID)?.manager?.objectID == newcomer.objectID, "manager on \(name)")
        }
        for (name, replica) in trio.both {
            let voided = try replica.journal(.voidedDelete)
            let journal = try replica.replica.conflicts()
            #expect(voided.count == 1, "journal of \(name): \(journal)")
            #expect(voided.first?.entity == "Team")
            #expect(voided.first?.objectID == team.objectID)
        }
        try trio.expectConverged()
    }
}

import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import Testing

/// A save's, a merge's, a push's and a pull's work follow the change sets they carry and the
/// objects those touch, not the size of the store: counted in SQLite's virtual machine steps,
/// statement by statement, which are the same on every machine (a statement that reads a whole
/// table, or every edge of an entity, where it meant one object's runs more of them in a larger
/// store).
@Suite struct MergeCostTests {
    /// The steps each statement ran for the last of `rounds` rounds of `A`'s work, after every
    /// round before it went the same way.
    private struct LastRound {
        /// `A` saving it: the store's writes and the change set's capture.
        var save: [String: Int] = [:]
        /// `B` merging it, pulled from `A`.
        var merge: [String: Int] = [:]
        /// A dataset's store applying it, pushed by `A`.
        var push: [String: Int] = [:]
        /// The dataset's store reading it for `B`.
        var pull: [String: Int] = [:]
    }

    /// A round creates a team of three ordered members, one managing the others, and a label on
    /// each; unlinks a label of the round before; and deletes the team of two rounds before
    /// (cascading to its members, nullifying their labels). In the last round `B` also deletes a
    /// member of the round before while `A` makes it a manager, so that merging the round voids
    /// `B`'s delete (the deny rule of `reports`), on `B` and on the server, which `B` pushed its
    /// delete to: every kind of edge and delete a merge writes.
    private static func stepsOfLastRound(of rounds: Int) throws -> LastRound {
        let a = try TestReplica(name: "a"), b = try TestReplica(name: "b")
        let datasetPath = FileManager.default.temporaryDirectory.appendingPathComponent("cost-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: datasetPath + suffix) } }
        let server = try SQLiteDatasetEngine.create(at: datasetPath, schema: a.store.schemaDocument)

        var teams: [Team] = []
        var last = LastRound()
        var cursor: Int64 = 0
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
            if let previous = teams.last?.members.first { previous.labels.removeAll() }
            if teams.count >= 2 { a.context.delete(teams.removeFirst()) }
            let isLast = round == rounds - 1
            if isLast, let previous = teams.last?.members.last {
                members[2].manager = previous
                try b.context.delete(#require(try b.context.object(Member.self, id: previous.objectID)))
                try b.context.save()
                _ = try server.apply(b.replica.changeSets(missingFrom: server.versionVector()), pushedBy: b.replica.credentials())
            }
            teams.append(team)
            let save = try steps(of: a.context.connection) { try a.context.save() }
            let merge = try stepsOfPull(into: b, from: a)
            let pushed = try a.replica.changeSets(missingFrom: server.versionVector())
            let push = try server.replica.withConnection { connection in
                try steps(of: connection) { _ = try server.apply(pushed, pushedBy: a.replica.credentials()) }
            }
            var page: ChangeSetLogPage?
            let pull = try server.replica.withConnection { connection in
                try steps(of: connection) { page = try server.readLog(after: cursor, digest: nil, limit: 100, excluding: b.replica.replicaID) }
            }
            #expect(page?.changeSets.map(\.dot) == pushed.map(\.dot))
            cursor = page?.cursor ?? cursor
            if isLast { last = LastRound(save: save, merge: merge, push: push, pull: pull) }
        }
        #expect(try a.digest() == b.digest())
        #expect(try a.digest() == TestReplica.digest(of: datasetPath))
        #expect(try b.replica.conflicts().contains { $0.kind == .voidedDelete }, "B's delete is void")
        return last
    }

    /// The steps each statement ran on `B` merging the last of `rounds` rounds of `A`'s peers,
    /// where `A` and `B` each created a peer with the same unique tag, each with friends: the
    /// uniqueness merge moves the edges of the peer that goes to the one that stays, and puts
    /// self-inverse edges back in canonical order. A round creates three peers, each a friend of
    /// the next, the first the partner of the last; unlinks a friendship of the round before; and
    /// deletes a peer of two rounds before. Identifiers ascend in the order of creation, so that
    /// which peer stays and which end records a self-inverse edge are the same in every run.
    private static func stepsOfUniquenessMerge(after rounds: Int) throws -> [String: Int] {
        let a = try TestReplica(name: "a", replicaID: UUID(uuidString: "A0000000-0000-0000-0000-000000000000")!, entities: everyShapeEntities)
        let b = try TestReplica(name: "b", replicaID: UUID(uuidString: "B0000000-0000-0000-0000-000000000000")!, entities: everyShapeEntities)
        var created = 0
        func newPeer(_ name: String) -> Peer {
            let peer = Peer()
            created += 1
            peer._$entityState.objectID = UUID(uuidString: String(format: "00000000-0000-0000-0000-%012X", created))!
            peer.name = name
            return peer
        }
        var rings: [[Peer]] = []
        var steps: [String: Int] = [:]
        for round in 0..<rounds {
            let peers = (0..<3).map { index in newPeer("peer \(round).\(index)") }
            for peer in peers { a.context.insert(peer) }
            peers[0].friends.insert(peers[1])
            peers[1].friends.insert(peers[2])
            peers[0].partner = peers[2]
            if let previous = rings.last { previous[0].friends.remove(previous[1]) }
            if rings.count >= 2 { a.context.delete(rings.removeFirst()[1]) }
            rings.append(peers)
            let isLast = round == rounds - 1
            if isLast {
                let ours = newPeer("ours"), theirs = newPeer("theirs")
                (ours.tag, theirs.tag) = ("shared", "shared")
                a.context.insert(ours)
                ours.friends = [peers[0], peers[2]]
                let previous = try #require(try b.context.object(Peer.self, id: rings[rings.count - 2][2].objectID))
                b.context.insert(theirs)
                theirs.friends = [previous]
                try b.context.save()
            }
            try a.context.save()
            let merge = try stepsOfPull(into: b, from: a)
            if isLast { steps = merge }
        }
        try a.pull(from: b)
        #expect(try a.digest() == b.digest())
        #expect(try b.context.fetch(FetchDescriptor<Peer>()).filter { $0.tag == "shared" }.map(\.friends.count) == [3])
        return steps
    }

    /// The steps each statement ran on `B` merging the last of `rounds` rounds of `A`'s boards,
    /// where both replaced the card of one board (`maxCount: 1`) concurrently: the merge keeps
    /// the later card and hides the other. A round creates a board with a card and a deck with
    /// two slides (`maxCount: 2`), takes the card off the board of the round before and gives it
    /// a new one, and deletes the deck of two rounds before.
    private static func stepsOfBoundedMerge(after rounds: Int) throws -> [String: Int] {
        let a = try TestReplica(name: "a", replicaID: UUID(uuidString: "A0000000-0000-0000-0000-000000000000")!, entities: countEntities)
        let b = try TestReplica(name: "b", replicaID: UUID(uuidString: "B0000000-0000-0000-0000-000000000000")!, entities: countEntities)
        var boards: [TaskBoard] = [], decks: [Deck] = []
        var steps: [String: Int] = [:]
        for round in 0..<rounds {
            let board = TaskBoard(), card = TaskCard(), deck = Deck(), slides = [Slide(), Slide()]
            board.name = "board \(round)"
            deck.name = "deck \(round)"
            a.context.insert(board)
            a.context.insert(deck)
            board.cards = [card]
            deck.slides = slides
            let isLast = round == rounds - 1
            if let previous = boards.last {
                let replacement = TaskCard()
                replacement.title = "replacing on A"
                a.context.insert(replacement)
                previous.cards = [replacement]
                if isLast {
                    let onB = try #require(try b.context.object(TaskBoard.self, id: previous.objectID))
                    let theirs = TaskCard()
                    theirs.title = "replacing on B"
                    b.context.insert(theirs)
                    onB.cards = [theirs]
                    try b.context.save()
                }
            }
            if decks.count >= 2 { a.context.delete(decks.removeFirst()) }
            boards.append(board)
            decks.append(deck)
            try a.context.save()
            let merge = try stepsOfPull(into: b, from: a)
            if isLast { steps = merge }
        }
        try a.pull(from: b)
        #expect(try a.digest() == b.digest())
        #expect(try b.context.fetch(FetchDescriptor<TaskBoard>()).allSatisfy { $0.cards.count == 1 })
        return steps
    }

    /// The steps each statement ran on `connection` doing `work`.
    private static func steps(of connection: SQLiteConnection, _ work: () throws -> Void) throws -> [String: Int] {
        _ = connection.takeStatementSteps()
        try work()
        return connection.takeStatementSteps()
    }

    /// The steps each statement ran on `b` pulling from `a`.
    private static func stepsOfPull(into b: TestReplica, from a: TestReplica) throws -> [String: Int] {
        try b.replica.withConnection { connection in try steps(of: connection) { try b.pull(from: a) } }
    }

    /// Expects no statement in `large` to have run many more steps than in `small`.
    private static func expectSameWork(_ small: [String: Int], _ large: [String: Int], of work: String) {
        #expect(small.count > 3, "\(work) ran \(small.count) statements")
        for sql in Set(small.keys).union(large.keys).sorted() {
            // A few steps either way: a B-tree's pages split differently around the same rows.
            // A statement that reads what the store holds runs about ten times as many.
            let before = small[sql] ?? 0, after = large[sql] ?? 0
            #expect(after <= before + before / 10 + 2,
                    "\(sql) ran \(before) steps \(work) of \(smallRounds) rounds and \(after) of \(largeRounds)")
        }
    }

    /// The sizes of the stores compared: a statement that reads what the store holds runs ten
    /// times as many steps in the larger one.
    private static let smallRounds = 10, largeRounds = 100

    /// The last rounds of both sizes, measured once for the tests below.
    private static let measured = Result { (small: try stepsOfLastRound(of: smallRounds), large: try stepsOfLastRound(of: largeRounds)) }

    @Test func savingInALargerStoreRunsTheSameSteps() throws {
        let (small, large) = try Self.measured.get()
        Self.expectSameWork(small.save, large.save, of: "saving a round in a store")
    }

    @Test func mergingIntoALargerStoreRunsTheSameSteps() throws {
        let (small, large) = try Self.measured.get()
        Self.expectSameWork(small.merge, large.merge, of: "merging a round into a store")
    }

    @Test func pushingToAndPullingFromALargerDatasetRunsTheSameSteps() throws {
        let (small, large) = try Self.measured.get()
        Self.expectSameWork(small.push, large.push, of: "applying a pushed round in a dataset")
        Self.expectSameWork(small.pull, large.pull, of: "reading a round from a dataset's log")
    }

    @Test func aMergeAtAMaximumCountInALargerStoreRunsTheSameSteps() throws {
        let small = try Self.stepsOfBoundedMerge(after: Self.smallRounds), large = try Self.stepsOfBoundedMerge(after: Self.largeRounds)
        Self.expectSameWork(small, large, of: "merging a round past a maximum count into a store")
    }

    @Test func aUniquenessMergeInALargerStoreRunsTheSameSteps() throws {
        let small = try Self.stepsOfUniquenessMerge(after: Self.smallRounds), large = try Self.stepsOfUniquenessMerge(after: Self.largeRounds)
        Self.expectSameWork(small, large, of: "merging a round with a uniqueness merge into a store")
    }
}

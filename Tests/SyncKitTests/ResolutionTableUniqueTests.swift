import Foundation
@testable import SyncEngine
import SyncKit
import Testing

/// An account whose handle is unique, referred to through every relationship shape.
@Entity final class Account {
    @Attribute(.unique) var handle: String = ""
    var bio: String = ""
    @Relationship(inverse: "author", deleteRule: .cascade) var posts: [Post] = []
    @Relationship(inverse: "accounts", deleteRule: .nullify) var circles: Set<Circle> = []
    @Relationship(inverse: "friends", deleteRule: .nullify) var friends: Set<Account> = []
    @Relationship(inverse: "ranking", deleteRule: .nullify) var board: Board?
}

@Entity final class Post {
    var title: String = ""
    @Relationship(inverse: "posts", deleteRule: .nullify) var author: Account?
}

@Entity final class Circle {
    var name: String = ""
    @Relationship(inverse: "circles", deleteRule: .nullify) var accounts: Set<Account> = []
}

@Entity final class Board {
    var name: String = ""
    @Relationship(inverse: "board", deleteRule: .nullify) var ranking: [Account] = []
}

/// A composite key: no two players share first and last name.
@Entity final class Athlete {
    #Unique<Athlete>([\.first, \.last])
    var first: String = ""
    var last: String = ""
    var nickname: String? = nil
}

let uniqueEntities: [any PersistentEntity.Type] = syncEntities + [Account.self, Post.self, Circle.self, Board.self, Athlete.self]

/// CONTRACT.md §3.8: objects created concurrently with equal unique values merge into the
/// earliest created, on every replica and in every order.
@Suite struct ResolutionTableUniqueTests {
    func account(_ handle: String, in replica: TestReplica) -> Account {
        let account = Account()
        account.handle = handle
        replica.context.insert(account)
        return account
    }

    func mergeEntries(_ replica: TestReplica) throws -> [ConflictEntry] {
        try replica.replica.conflicts().filter { $0.kind == .uniqueMerged }
    }

    /// On A, B and C, exactly `remaining` objects of `type` show and the merge entries name exactly
    /// `merged`; the three stores are the same.
    func expectOnEveryReplica<T: PersistentEntity>(
        _ trio: ReplicaTrio, _ type: T.Type, remaining: Set<UUID>, merged: [UUID], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(Set(try replica.context.fetchAll(type).map(\.objectID)) == remaining, "\(type) on \(name)", sourceLocation: sourceLocation)
            #expect(try mergeEntries(replica).map(\.objectID) == merged, "journal of \(name)", sourceLocation: sourceLocation)
        }
        try trio.expectConverged(sourceLocation: sourceLocation)
    }

    /// A and B create "ada" concurrently; A's is created first (B is later), so it survives.
    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func twoReplicasCreateTheSameValueAndTheEarliestSurvives(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let trio = try ReplicaTrio(entities: uniqueEntities)
        try trio.shareBase()
        trio.make(later: later)
        let first = account("ada", in: trio.a)
        first.bio = "from A"
        try trio.a.context.save()
        let second = account("ada", in: trio.b)
        second.bio = "from B"
        try trio.b.context.save()

        try trio.exchange(order)

        let (survivor, duplicate) = later == .b ? (first, second) : (second, first)
        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            let accounts = try replica.context.fetchAll(Account.self)
            #expect(accounts.map(\.objectID) == [survivor.objectID], "accounts on \(name)")
            #expect(accounts.first?.bio == survivor.bio, "the survivor keeps its values on \(name)")
            let entries = try mergeEntries(replica)
            #expect(entries.count == 1, "journal of \(name)")
            #expect(entries.first?.objectID == duplicate.objectID)
            #expect(entries.first?.property == "handle")
            #expect(entries.first?.winner?.value == "\"\(survivor.objectID.storageText)\"")
            #expect(entries.first?.loser.value?.contains(duplicate.bio) == true, "the duplicate's values on \(name)")
        }
        try trio.expectConverged()
        // Local saves still refuse a duplicate.
        _ = account("ada", in: trio.a)
        #expect(throws: StoreError.self) { try trio.a.context.save() }
    }

    /// B's duplicate is referred to through a to-one, an ordered to-many (as owner and as
    /// member), a many-to-many and a self-inverse to-many; every reference moves to A's survivor,
    /// and the duplicate's cascade rule does not delete its posts.
    @Test(arguments: ExchangeOrder.allCases)
    func referencesOfEveryShapeMoveToTheSurvivor(order: ExchangeOrder) throws {
        let trio = try ReplicaTrio(entities: uniqueEntities)
        let board = Board(), circle = Circle(), friend = Account()
        board.name = "board"; circle.name = "circle"; friend.handle = "friend"
        for object in [board, circle, friend] as [any PersistentEntity] { trio.a.context.insert(object) }
        try trio.a.context.save()
        try trio.shareBase()
        trio.make(later: .b)

        let survivor = account("ada", in: trio.a)
        let kept = Post()
        kept.title = "A's post"
        survivor.posts = [kept]
        try trio.a.object(Board.self, board.objectID).ranking.append(survivor)
        try trio.a.context.save()

        let duplicate = account("ada", in: trio.b)
        let moved = Post(), second = Post()
        moved.title = "B's post"; second.title = "B's second post"
        duplicate.posts = [moved, second]
        duplicate.circles = [try trio.b.object(Circle.self, circle.objectID)]
        duplicate.friends = [try trio.b.object(Account.self, friend.objectID)]
        let other = account("bob", in: trio.b)
        try trio.b.object(Board.self, board.objectID).ranking = [other, duplicate]
        try trio.b.context.save()

        try trio.exchange(order)

        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try replica.fetch(Account.self, duplicate.objectID) == nil, "duplicate gone on \(name)")
            let merged = try #require(try replica.fetch(Account.self, survivor.objectID))
            #expect(Set(merged.posts.map(\.objectID)) == [kept.objectID, moved.objectID, second.objectID], "posts on \(name)")
            #expect(try replica.fetch(Post.self, moved.objectID)?.author?.objectID == survivor.objectID, "to-one on \(name)")
            #expect(merged.circles.map(\.objectID) == [circle.objectID], "many-to-many on \(name)")
            #expect(try replica.fetch(Circle.self, circle.objectID)?.accounts.map(\.objectID) == [survivor.objectID], "inverse on \(name)")
            #expect(merged.friends.map(\.objectID) == [friend.objectID], "self-inverse on \(name)")
            #expect(try replica.fetch(Account.self, friend.objectID)?.friends.map(\.objectID) == [survivor.objectID], "other end on \(name)")
            let ranking = try #require(try replica.fetch(Board.self, board.objectID)).ranking.map(\.objectID)
            #expect(Set(ranking) == [other.objectID, survivor.objectID] && ranking.count == 2, "ordered membership on \(name)")
            #expect(merged.board?.objectID == board.objectID)
            #expect(try replica.integrityProblems() == [], "integrity on \(name)")
        }
        try trio.expectConverged()
    }

    /// A composite key merges only when every attribute of it is equal; `nil` never collides.
    @Test(arguments: ExchangeOrder.allCases)
    func aCompositeKeyMergesOnlyWhenEveryValueIsEqual(order: ExchangeOrder) throws {
        let trio = try ReplicaTrio(entities: uniqueEntities)
        try trio.shareBase()
        trio.make(later: .b)
        func athlete(_ first: String, _ last: String, in replica: TestReplica) -> Athlete {
            let athlete = Athlete()
            athlete.first = first
            athlete.last = last
            replica.context.insert(athlete)
            return athlete
        }
        let survivor = athlete("Ada", "Lovelace", in: trio.a)
        let byron = athlete("Ada", "Byron", in: trio.a)
        try trio.a.context.save()
        let duplicate = athlete("Ada", "Lovelace", in: trio.b)
        let king = athlete("Ada", "King", in: trio.b)
        try trio.b.context.save()

        try trio.exchange(order)

        try expectOnEveryReplica(trio, Athlete.self, remaining: [survivor.objectID, byron.objectID, king.objectID], merged: [duplicate.objectID])
        #expect(try mergeEntries(trio.c).first?.property == "(first, last)")
    }

    /// Concurrent objects whose unique attribute is `nil` never merge (as in SQL).
    @Test(arguments: ExchangeOrder.allCases)
    func nilValuesNeverMerge(order: ExchangeOrder) throws {
        let trio = try ReplicaTrio(entities: everyShapeEntities)
        try trio.shareBase()
        trio.make(later: .b)
        var ids: Set<UUID> = []
        for replica in [trio.a, trio.b] {
            let peer = Peer()
            peer.name = "untagged"
            replica.context.insert(peer)
            try replica.context.save()
            ids.insert(peer.objectID)
        }
        try trio.exchange(order)
        try expectOnEveryReplica(trio, Peer.self, remaining: ids, merged: [])
    }

    /// Three replicas create one handle; every order and batching ends with the earliest only.
    @Test(arguments: [[0, 1, 2], [2, 1, 0], [1, 2, 0]])
    func aChainOfThreeMergesIntoTheEarliest(arrival: [Int]) throws {
        let clocks = (0..<3).map { _ in FakeClock() }
        let creators = try clocks.enumerated().map { try TestReplica(clock: $1, name: "creator\($0)", entities: uniqueEntities) }
        let observer = try TestReplica(name: "observer", entities: uniqueEntities)
        var ids: [UUID] = []
        for (index, creator) in creators.enumerated() {
            clocks[index].set(ReplicaTrio.base + UInt64(index + 1) * 10_000)
            let created = account("ada", in: creator)
            try creator.context.save()
            ids.append(created.objectID)
        }
        // The observer takes one creator at a time in `arrival` order; the creators exchange pairwise.
        for index in arrival { _ = try observer.pull(from: creators[index]) }
        for creator in creators {
            for other in creators where other !== creator { _ = try creator.pull(from: other) }
        }
        let everyone = [("observer", observer)] + creators.enumerated().map { ("creator\($0)", $1) }
        for (name, replica) in everyone {
            #expect(try replica.context.fetchAll(Account.self).map(\.objectID) == [ids[0]], "accounts on \(name)")
            #expect(try replica.digest() == observer.digest(), "\(name) equals the observer")
        }
    }

    /// After the merge: B writes to the duplicate it still had (journaled, the survivor keeps its
    /// value), A changes the survivor's handle (the merge stays), then deletes the survivor (the
    /// moved posts follow its cascade rule).
    @Test(arguments: ExchangeOrder.allCases)
    func aMergeIsFinalAndLaterWritesToTheDuplicateAreJournaled(order: ExchangeOrder) throws {
        let trio = try ReplicaTrio(entities: uniqueEntities)
        try trio.shareBase()
        trio.make(later: .b)
        let survivor = account("ada", in: trio.a)
        survivor.bio = "A"
        try trio.a.context.save()
        let duplicate = account("ada", in: trio.b)
        let post = Post()
        duplicate.posts = [post]
        try trio.b.context.save()
        duplicate.bio = "B edited"
        try trio.b.context.save()

        try trio.exchange(order)
        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try replica.fetch(Account.self, survivor.objectID)?.bio == "A", "survivor's value on \(name)")
            #expect(try replica.fetch(Account.self, duplicate.objectID) == nil)
            // The edit is in the journal: in the merge entry's values where it arrived first (B),
            // as an entry of its own where it arrived after the merge (A, C).
            let entries = try mergeEntries(replica)
            #expect(entries.contains { $0.property == "bio" && $0.loser.value == "\"B edited\"" }
                    || entries.contains { $0.property == "handle" && $0.loser.value?.contains("B edited") == true }, "journal of \(name)")
        }
        try trio.expectConverged()

        let renamed = try trio.a.object(Account.self, survivor.objectID)
        renamed.handle = "ada2"
        try trio.a.context.save()
        try trio.exchange(order)
        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try replica.context.fetchAll(Account.self).map(\.objectID) == [survivor.objectID], "the merge stays on \(name)")
        }
        trio.a.context.delete(try trio.a.object(Account.self, survivor.objectID))
        try trio.a.context.save()
        try trio.exchange(order)
        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try replica.context.fetchAll(Account.self).isEmpty, "accounts on \(name)")
            #expect(try replica.context.fetchAll(Post.self).isEmpty, "the moved post followed the survivor's cascade on \(name)")
        }
        try trio.expectConverged()
    }

    /// syncd's engine merges like a client: the same store from the same change sets.
    @Test func syncdsEngineMergesLikeAClient() throws {
        let trio = try ReplicaTrio(entities: uniqueEntities)
        trio.make(later: .b)
        let survivor = account("ada", in: trio.a)
        survivor.posts = [Post()]
        try trio.a.context.save()
        let duplicate = account("ada", in: trio.b)
        duplicate.posts = [Post()]
        try trio.b.context.save()
        try trio.exchange(.bThenA)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("unique-engine-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let engine = try SQLiteDatasetEngine.create(at: path, schema: trio.a.store.schemaDocument)
        _ = try engine.apply(try trio.b.replica.changeSets(missingFrom: VersionVector()).filter { $0.dot.replica == trio.b.replica.replicaID },
                             pushedBy: try trio.b.replica.credentials())
        _ = try engine.apply(try trio.a.replica.changeSets(missingFrom: VersionVector()).filter { $0.dot.replica == trio.a.replica.replicaID },
                             pushedBy: try trio.a.replica.credentials())
        #expect(try TestReplica.digest(of: path) == trio.a.digest())
        #expect(try trio.a.fetch(Account.self, survivor.objectID)?.posts.count == 2)
        #expect(try trio.a.fetch(Account.self, duplicate.objectID) == nil)
    }
}

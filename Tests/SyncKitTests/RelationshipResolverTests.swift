import Foundation
@testable import SyncEngine
import Testing

/// The rules that decide what a relationship shows (`RelationshipResolver`), without a store:
/// edges and stamps in, the chosen target, ranks and order out. The same rules through real
/// merges, in both exchange orders, are in `ResolutionTableToOneTests.swift`,
/// `ResolutionTableToManyTests.swift`, `ResolutionTableCountTests.swift` and
/// `ResolutionTableSelfInverseCountTests.swift`.
@Suite struct RelationshipResolverTests {
    typealias Claim = RelationshipResolver.Claim

    static let a = UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!
    static let b = UUID(uuidString: "00000000-0000-0000-0000-00000000000B")!
    static let c = UUID(uuidString: "00000000-0000-0000-0000-00000000000C")!
    static let d = UUID(uuidString: "00000000-0000-0000-0000-00000000000D")!

    static func stamp(_ hlc: UInt64, _ replica: UUID, _ seq: UInt64 = 1) -> Stamp {
        Stamp(hlc: HLC(rawValue: hlc), replica: replica, seq: seq)
    }

    @Test func aToOneKeepsTheEdgeAddedLastWhateverTheOrderTheyAreListedIn() {
        let claims = [Claim(id: Self.b, added: Self.stamp(20, Self.a)), Claim(id: Self.c, added: Self.stamp(30, Self.a)),
                      Claim(id: Self.d, added: Self.stamp(25, Self.b))]
        #expect(RelationshipResolver.latest(claims)?.id == Self.c)
        #expect(RelationshipResolver.latest(claims.reversed())?.id == Self.c)
        #expect(RelationshipResolver.latest([Claim]()) == nil)
    }

    @Test func equalHLCsAreDecidedByTheReplicaIdentifier() {
        let fromA = Claim(id: Self.c, added: Self.stamp(20, Self.a)), fromB = Claim(id: Self.d, added: Self.stamp(20, Self.b))
        #expect(RelationshipResolver.latest([fromA, fromB]) == fromB)
        #expect(RelationshipResolver.latest([fromB, fromA]) == fromB)
    }

    /// Two concurrent writes of one place: the larger stamp wins whichever arrives first, so every
    /// replica journals the same pair.
    @Test func concurrentWritesOfOnePlaceJournalTheSamePairInEitherOrder() {
        typealias Rival = RelationshipResolver.Rival
        let early = Rival(value: "m", stamp: Self.stamp(20, Self.b)), late = Rival(Self.c, Self.stamp(20, Self.c))
        let first = RelationshipResolver.rivals(early, late), second = RelationshipResolver.rivals(late, early)
        #expect(first.winner == late && first.loser == early)
        #expect(second.winner == late && second.loser == early)
        #expect(late.value == "00000000-0000-0000-0000-00000000000C")
    }

    /// A one-to-one: sources a and b both claim target c; b claimed it last, so c keeps b. Source
    /// d's latest claim is another object, so its older edge to c does not count.
    @Test func aOneToOneTargetKeepsTheSourceThatClaimedItLast() {
        let target = UUID(uuidString: "00000000-0000-0000-0000-0000000000CC")!
        let other = UUID(uuidString: "00000000-0000-0000-0000-0000000000EE")!
        let latestClaims: [(source: UUID, claim: Claim)] = [
            (Self.a, Claim(id: target, added: Self.stamp(20, Self.a))),
            (Self.b, Claim(id: target, added: Self.stamp(30, Self.b))),
            (Self.d, Claim(id: other, added: Self.stamp(40, Self.d))),
        ]
        #expect(RelationshipResolver.keepingSource(of: target, latestClaims) == Self.b)
        #expect(RelationshipResolver.keepingSource(of: target, latestClaims.reversed()) == Self.b)
        #expect(RelationshipResolver.keepingSource(of: other, latestClaims) == Self.d)
        #expect(RelationshipResolver.keepingSource(of: Self.c, latestClaims) == nil)
    }

    /// Ranks count each member once, by its earliest live edge; edges of one change set (one
    /// stamp) rank by identifier.
    @Test func ranksCountEachMemberByItsEarliestEdge() {
        let oneChangeSet = Self.stamp(10, Self.a)
        let claims = [Claim(id: Self.d, added: Self.stamp(50, Self.b)), Claim(id: Self.c, added: oneChangeSet),
                      Claim(id: Self.b, added: oneChangeSet), Claim(id: Self.d, added: Self.stamp(5, Self.c))]
        let ranked = RelationshipResolver.earliestFirst(claims)
        #expect(ranked == [Claim(id: Self.d, added: Self.stamp(5, Self.c)), Claim(id: Self.b, added: oneChangeSet), Claim(id: Self.c, added: oneChangeSet)])
        #expect(RelationshipResolver.earliestFirst(claims.reversed()) == ranked)
    }

    @Test func aMaxCountHidesTheMembersLinkedLast() {
        let ranked = [Claim(id: Self.a, added: Self.stamp(1, Self.a)), Claim(id: Self.b, added: Self.stamp(2, Self.a)),
                      Claim(id: Self.c, added: Self.stamp(3, Self.a))]
        #expect(Array(RelationshipResolver.hidden(ranked, maximum: 2)) == [ranked[2]])
        #expect(RelationshipResolver.hidden(ranked, maximum: 3).isEmpty)
        #expect(RelationshipResolver.shows(Self.b, in: ranked, maximum: 2))
        #expect(!RelationshipResolver.shows(Self.c, in: ranked, maximum: 2))
        #expect(!RelationshipResolver.shows(Self.d, in: ranked, maximum: 2))
    }

    /// Ordered members: by key, then by the stamp that placed them, then by identifier; members
    /// without a key last, by identifier.
    @Test func orderedMembersSortByKeyThenStampThenIdentifier() {
        let keys: [UUID: (key: String, stamp: Stamp)] = [
            Self.a: ("m", Self.stamp(30, Self.b)),
            Self.b: ("m", Self.stamp(20, Self.c)),
            Self.c: ("a", Self.stamp(90, Self.a)),
        ]
        let unplaced = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!
        let expected = [Self.c, Self.b, Self.a, unplaced, Self.d]
        #expect(RelationshipResolver.ordered([Self.d, Self.a, unplaced, Self.b, Self.c], keys: keys) == expected)
        #expect(RelationshipResolver.ordered(expected.reversed(), keys: keys) == expected)
    }
}

import Foundation
@testable import SyncEngine
import Testing

/// What a merge batch keeps of its change sets (`BatchChangeSets`): which one is applied, which
/// dots it has seen, and the coverage answers it caches per replica.
@Suite struct BatchChangeSetsTests {
    static let alice = UUID(uuidString: "AAAAAAAA-0000-4000-8000-000000000001")!
    static let bob = UUID(uuidString: "BBBBBBBB-0000-4000-8000-000000000002")!

    static func changeSet(_ replica: ReplicaID, _ seq: UInt64, seen vector: [ReplicaID: UInt64]) -> ChangeSet {
        ChangeSet(dot: Dot(replica: replica, seq: seq), hlc: HLC(rawValue: seq), vector: VersionVector(vector), operations: [])
    }

    /// ``BatchChangeSets/covers(_:)`` outside `#expect`, which cannot call a mutating method.
    static func answer(_ changeSets: inout BatchChangeSets, _ dot: Dot) -> Bool {
        changeSets.covers(dot)
    }

    @Test func coverageIsAnsweredFromTheCurrentChangeSetsVector() {
        var changeSets = BatchChangeSets()
        changeSets.begin(Self.changeSet(Self.alice, 3, seen: [Self.alice: 3, Self.bob: 5]))
        #expect(Self.answer(&changeSets, Dot(replica: Self.bob, seq: 5)) == true)
        #expect(Self.answer(&changeSets, Dot(replica: Self.bob, seq: 6)) == false)
        #expect(Self.answer(&changeSets, Dot(replica: Self.alice, seq: 1)) == true)
        #expect(Self.answer(&changeSets, Dot(replica: Self.alice, seq: 4)) == false)
    }

    /// The last replica asked is remembered; the next change set must not inherit the answer.
    @Test func theNextChangeSetDoesNotInheritTheLastCoverageAnswer() {
        var changeSets = BatchChangeSets()
        changeSets.begin(Self.changeSet(Self.alice, 3, seen: [Self.alice: 3, Self.bob: 5]))
        #expect(Self.answer(&changeSets, Dot(replica: Self.bob, seq: 4)) == true)
        changeSets.begin(Self.changeSet(Self.alice, 4, seen: [Self.alice: 4]))
        #expect(Self.answer(&changeSets, Dot(replica: Self.bob, seq: 4)) == false)
        // Replacing the operations in view (a slice) starts over too.
        changeSets.current = Self.changeSet(Self.alice, 5, seen: [Self.alice: 5, Self.bob: 9])
        #expect(Self.answer(&changeSets, Dot(replica: Self.bob, seq: 9)) == true)
    }

    @Test func beginningRecordsTheDotAndVectorButReplacingTheViewDoesNot() {
        var changeSets = BatchChangeSets()
        let first = Self.changeSet(Self.alice, 1, seen: [Self.alice: 1])
        changeSets.begin(first)
        changeSets.current = Self.changeSet(Self.bob, 7, seen: [Self.bob: 7])
        #expect(changeSets.applied == [first.dot])
        #expect(changeSets.vectors == [first.dot: first.vector])
        #expect(changeSets.current.dot == Dot(replica: Self.bob, seq: 7))
    }
}

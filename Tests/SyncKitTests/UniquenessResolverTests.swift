import Foundation
@testable import SyncEngine
import Testing

/// The uniqueness rule on its own (`UniquenessResolver`), on creations in memory: recorded key
/// values, creation stamps and vectors in; the group and its survivor out. The same rule through
/// real merges, in both exchange orders, is in `ResolutionTableUniqueTests.swift`.
@Suite struct UniquenessResolverTests {
    static let first = UUID(uuidString: "00000000-0000-0000-0000-0000000000A1")!
    static let second = UUID(uuidString: "00000000-0000-0000-0000-0000000000B2")!
    static let third = UUID(uuidString: "00000000-0000-0000-0000-0000000000C3")!

    static func object(_ number: Int) -> ObjectKey {
        ObjectKey(entity: "Account", id: UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", number))!)
    }

    /// Creations in memory: each object's recorded key values, its creation stamp and vector.
    struct Creations: UniquenessResolver.Creations {
        var values: [ObjectKey: [String]] = [:]
        var creations: [ObjectKey: (stamp: Stamp, vector: VersionVector)] = [:]
        var reversed = false

        func objectsSharingAKeyValue(with object: ObjectKey) -> [ObjectKey] {
            let mine = Set(values[object] ?? [])
            let sharing = values.keys.filter { !mine.isDisjoint(with: values[$0]!) }.sorted()
            return reversed ? sharing.reversed() : sharing
        }

        func creation(of object: ObjectKey) -> (stamp: Stamp, vector: VersionVector)? { creations[object] }

        /// Records `object`, created by `replica`'s change set `seq` at `hlc`, which had seen `saw`.
        mutating func create(_ object: ObjectKey, _ keyValues: [String], hlc: UInt64, by replica: UUID, _ seq: UInt64, saw: [UUID: UInt64] = [:]) {
            values[object] = keyValues
            creations[object] = (Stamp(hlc: HLC(rawValue: hlc), replica: replica, seq: seq), VersionVector(saw.merging([replica: seq]) { max($0, $1) }))
        }
    }

    @Test func concurrentCreationsWithAnEqualKeyAreOneObjectAndTheEarliestSurvives() throws {
        var creations = Creations()
        creations.create(Self.object(1), ["email=a@x"], hlc: 30, by: Self.first, 1)
        creations.create(Self.object(2), ["email=a@x"], hlc: 20, by: Self.second, 1)
        creations.create(Self.object(3), ["email=b@x"], hlc: 10, by: Self.third, 1)
        for reversed in [false, true] {
            creations.reversed = reversed
            let expected = UniquenessResolver.Group(survivor: Self.object(2), duplicates: [Self.object(1)])
            #expect(try UniquenessResolver.group(of: Self.object(1), in: creations) == expected)
            #expect(try UniquenessResolver.group(of: Self.object(2), in: creations) == expected)
            #expect(try UniquenessResolver.group(of: Self.object(3), in: creations) == nil)
        }
    }

    /// A creation whose change set had seen the other one is no collision: its save was checked
    /// against it (and the store refuses a second object with the value).
    @Test func aCreationThatHadSeenTheOtherIsNoCollision() throws {
        var creations = Creations()
        creations.create(Self.object(1), ["email=a@x"], hlc: 20, by: Self.first, 1)
        creations.create(Self.object(2), ["email=a@x"], hlc: 30, by: Self.second, 4, saw: [Self.first: 1])
        #expect(try UniquenessResolver.group(of: Self.object(2), in: creations) == nil)
        #expect(try UniquenessResolver.group(of: Self.object(1), in: creations) == nil)
    }

    /// Collisions chain through different keys: 1 and 2 share an email, 2 and 3 a name.
    @Test func collisionsChainIntoOneGroup() throws {
        var creations = Creations()
        creations.create(Self.object(1), ["email=a@x", "name=Ann"], hlc: 30, by: Self.first, 1)
        creations.create(Self.object(2), ["email=a@x", "name=Bea"], hlc: 40, by: Self.second, 1)
        creations.create(Self.object(3), ["email=c@x", "name=Bea"], hlc: 50, by: Self.third, 1)
        let expected = UniquenessResolver.Group(survivor: Self.object(1), duplicates: [Self.object(2), Self.object(3)])
        for object in 1...3 {
            #expect(try UniquenessResolver.group(of: Self.object(object), in: creations) == expected)
        }
    }

    /// Equal creation stamps (two creations of one change set, which a save never makes) are
    /// decided by identifier, so every replica picks the same survivor.
    @Test func equalCreationStampsAreDecidedByIdentifier() throws {
        var creations = Creations()
        creations.create(Self.object(7), ["email=a@x"], hlc: 20, by: Self.first, 1)
        creations.create(Self.object(5), ["email=a@x"], hlc: 20, by: Self.first, 1)
        creations.creations[Self.object(5)]!.vector = VersionVector([:])
        creations.creations[Self.object(7)]!.vector = VersionVector([:])
        for reversed in [false, true] {
            creations.reversed = reversed
            #expect(try UniquenessResolver.group(of: Self.object(7), in: creations)?.survivor == Self.object(5))
        }
    }
}

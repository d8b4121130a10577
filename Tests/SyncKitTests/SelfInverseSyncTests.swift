import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import Testing

/// CONTRACT.md §3.7: relationships that are their own inverse (`Peer.partner`, `Peer.friends`).
@Suite struct SelfInverseSyncTests {
    /// The two ends of an edge as it travels: the identifier that sorts first is the source.
    private func canonical(_ first: Peer, _ second: Peer) -> (source: UUID, target: UUID) {
        first.objectID.uuidString < second.objectID.uuidString ? (first.objectID, second.objectID) : (second.objectID, first.objectID)
    }

    private func peers(_ names: [String], in replica: TestReplica) throws -> [Peer] {
        let peers = names.map { name -> Peer in
            let peer = Peer()
            peer.name = name
            replica.context.insert(peer)
            return peer
        }
        try replica.context.save()
        return peers
    }

    private func lastOperations(of replica: TestReplica) throws -> [SyncEngine.Operation] {
        try #require(try replica.replica.changeSets(missingFrom: VersionVector()).last).operations
    }

    @Test func aToOneLinkIsInTheChangeSetOnceAndReachesAnotherReplica() throws {
        let a = try TestReplica(name: "a", entities: everyShapeEntities), b = try TestReplica(name: "b", entities: everyShapeEntities)
        let people = try peers(["x", "y"], in: a)
        people[1].partner = people[0]
        try a.context.save()
        let (source, target) = canonical(people[0], people[1])
        #expect(try lastOperations(of: a) == [.link(entity: "Peer", id: source, relationship: "partner", target: target)])

        try b.pull(from: a)
        #expect(try b.fetch(Peer.self, people[0].objectID)?.partner?.name == "y")
        #expect(try b.fetch(Peer.self, people[1].objectID)?.partner?.name == "x")
        #expect(try b.digest() == a.digest())

        // Unset from the other end: the one edge is unlinked, naming the change set that added it.
        let linkDot = try TestReplica.lastDot(of: a)
        people[0].partner = nil
        try a.context.save()
        #expect(try lastOperations(of: a) == [.unlink(entity: "Peer", id: source, relationship: "partner", target: target, observed: [linkDot])])
        try b.pull(from: a)
        #expect(try b.fetch(Peer.self, people[1].objectID)?.partner == nil)
        #expect(try b.digest() == a.digest())
    }

    @Test func aToManyLinkIsInTheChangeSetOnceAndReachesAnotherReplica() throws {
        let a = try TestReplica(name: "a", entities: everyShapeEntities), b = try TestReplica(name: "b", entities: everyShapeEntities)
        let people = try peers(["x", "y", "z"], in: a)
        people[0].addToFriends(people[1])
        people[2].addToFriends(people[0])
        try a.context.save()
        let xy = canonical(people[0], people[1]), xz = canonical(people[0], people[2])
        let links = Set(try lastOperations(of: a))
        #expect(links == [.link(entity: "Peer", id: xy.source, relationship: "friends", target: xy.target),
                          .link(entity: "Peer", id: xz.source, relationship: "friends", target: xz.target)])

        try b.pull(from: a)
        #expect(Set(try b.fetch(Peer.self, people[0].objectID)?.friends.map(\.name) ?? []) == ["y", "z"])
        #expect(try b.fetch(Peer.self, people[2].objectID)?.friends.map(\.name) == ["x"])
        #expect(try b.digest() == a.digest())

        people[1].removeFromFriends(people[0])
        try a.context.save()
        try b.pull(from: a)
        #expect(try b.fetch(Peer.self, people[1].objectID)?.friends.isEmpty == true)
        #expect(try b.fetch(Peer.self, people[0].objectID)?.friends.map(\.name) == ["z"])
        #expect(try b.digest() == a.digest())
    }

    /// A sets x.partner = y while B sets y.partner = z: the pair whose link has the larger
    /// `(HLC, replica ID)` wins, and the third object holds nothing, on every replica.
    @Test(arguments: ExchangeOrder.allCases, [ReplicaTrio.Side.a, .b])
    func concurrentPartnersOfOneObjectKeepTheLaterPairAndTheThirdHoldsNothing(order: ExchangeOrder, later: ReplicaTrio.Side) throws {
        let trio = try ReplicaTrio(entities: everyShapeEntities)
        let people = try peers(["x", "y", "z"], in: trio.a)
        let (x, y, z) = (people[0].objectID, people[1].objectID, people[2].objectID)
        try trio.shareBase()

        trio.make(later: later)
        try trio.a.object(Peer.self, x).partner = try trio.a.object(Peer.self, y)
        try trio.a.context.save()
        try trio.b.object(Peer.self, y).partner = try trio.b.object(Peer.self, z)
        try trio.b.context.save()
        let dotA = try trio.lastDot(.a), dotB = try trio.lastDot(.b)

        try trio.exchange(order)

        let (winner, loser) = later == .a ? (x, z) : (z, x)
        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try replica.fetch(Peer.self, y)?.partner?.objectID == winner, "y's partner on \(name)")
            #expect(try replica.fetch(Peer.self, winner)?.partner?.objectID == y, "winner's partner on \(name)")
            #expect(try replica.fetch(Peer.self, loser)?.partner == nil, "loser's partner on \(name)")
        }
        for (name, replica) in trio.both {
            let entries = try replica.replica.conflicts()
            #expect(entries.map(\.kind) == [.toOne], "journal of \(name): \(entries)")
            guard let entry = entries.first else { continue }
            #expect(entry.objectID == y && entry.property == "partner")
            #expect(entry.winner?.value == journalJSON(winner) && entry.winner?.dot == (later == .a ? dotA : dotB))
            #expect(entry.loser.value == journalJSON(loser) && entry.loser.dot == (later == .a ? dotB : dotA))
        }
        try trio.expectConverged()
    }

    /// A removes x from y's friends while B removes and re-adds y from x's end: B's new edge was
    /// not seen by A's unlink, so it survives (§3.3), seen from both ends.
    @Test(arguments: ExchangeOrder.allCases)
    func aReAddFromTheOtherEndSurvivesAConcurrentRemove(order: ExchangeOrder) throws {
        let trio = try ReplicaTrio(entities: everyShapeEntities)
        let people = try peers(["x", "y"], in: trio.a)
        people[0].addToFriends(people[1])
        try trio.a.context.save()
        let (x, y) = (people[0].objectID, people[1].objectID)
        try trio.shareBase()

        try trio.a.object(Peer.self, y).removeFromFriends(try trio.a.object(Peer.self, x))
        try trio.a.context.save()
        let bx = try trio.b.object(Peer.self, x), by = try trio.b.object(Peer.self, y)
        bx.removeFromFriends(by)
        try trio.b.context.save()
        bx.addToFriends(by)
        try trio.b.context.save()

        try trio.exchange(order)

        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            #expect(try replica.fetch(Peer.self, x)?.friends.map(\.objectID) == [y], "x's friends on \(name)")
            #expect(try replica.fetch(Peer.self, y)?.friends.map(\.objectID) == [x], "y's friends on \(name)")
        }
        try trio.expectConverged()
    }

    enum DeleteCase: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// `partner` (nullify): the new reference is dropped and journaled on the survivor.
        case nullifyToOne
        /// `friends` (nullify): the same for a to-many.
        case nullifyToMany
        /// `twin` (cascade): the newly referenced object is deleted too.
        case cascadeToOne
        /// `sponsors` (deny): the delete is voided and the reference stays.
        case denyToMany
        var testDescription: String { rawValue }
    }

    /// A deletes x while B links y to x through a self-inverse relationship: x's delete rule on
    /// that relationship decides (§3.6), whichever end the link was made from.
    @Test(arguments: ExchangeOrder.allCases, DeleteCase.allCases)
    func aReferenceAddedConcurrentlyWithADeleteFollowsTheDeleteRule(order: ExchangeOrder, rule: DeleteCase) throws {
        let trio = try ReplicaTrio(entities: everyShapeEntities)
        let people = try peers(["x", "y"], in: trio.a)
        let (x, y) = (people[0].objectID, people[1].objectID)
        try trio.shareBase()

        trio.a.context.delete(try trio.a.object(Peer.self, x))
        try trio.a.context.save()
        let bx = try trio.b.object(Peer.self, x), by = try trio.b.object(Peer.self, y)
        switch rule {
        case .nullifyToOne: by.partner = bx
        case .nullifyToMany: by.addToFriends(bx)
        case .cascadeToOne: by.twin = bx
        case .denyToMany: by.addToSponsors(bx)
        }
        try trio.b.context.save()

        try trio.exchange(order)

        for (name, replica) in [("A", trio.a), ("B", trio.b), ("C", trio.c)] {
            switch rule {
            case .nullifyToOne, .nullifyToMany:
                #expect(try !replica.exists(Peer.self, x), "x on \(name)")
                let survivor = try replica.fetch(Peer.self, y)
                #expect(survivor?.partner == nil && survivor?.friends.isEmpty == true, "y's references on \(name)")
                #expect(try replica.journal(.referenceDropped).map(\.objectID) == [y], "journal of \(name)")
            case .cascadeToOne:
                #expect(try !replica.exists(Peer.self, x) && !replica.exists(Peer.self, y), "x and y on \(name)")
                #expect(try replica.journal(.cascadedDelete).map(\.objectID) == [y], "journal of \(name)")
            case .denyToMany:
                #expect(try replica.fetch(Peer.self, x)?.sponsors.map(\.objectID) == [y], "x's sponsors on \(name)")
                #expect(try replica.fetch(Peer.self, y)?.sponsors.map(\.objectID) == [x], "y's sponsors on \(name)")
                #expect(try replica.journal(.voidedDelete).map(\.property) == ["sponsors"], "journal of \(name)")
            }
        }
        try trio.expectConverged()
    }

    /// On the wire a self-inverse edge names the identifier that sorts first as its source; the
    /// other order fails the whole batch with `schema_mismatch`.
    @Test func anEdgeNamedFromTheLargerIdentifierFailsTheBatch() throws {
        let a = try TestReplica(name: "a", entities: everyShapeEntities), b = try TestReplica(name: "b", entities: everyShapeEntities)
        let people = try peers(["x", "y"], in: a)
        people[0].addToFriends(people[1])
        try a.context.save()
        var changeSets = try a.replica.changeSets(missingFrom: VersionVector())
        let (source, target) = canonical(people[0], people[1])
        changeSets[changeSets.count - 1].operations = [.link(entity: "Peer", id: target, relationship: "friends", target: source)]
        let before = try b.digest()
        let error = try #require(throws: SyncError.self) { try b.replica.apply(changeSets) }
        #expect(error.code == .schemaMismatch)
        #expect(error.message.contains("Peer.friends"))
        #expect(try b.digest() == before)
    }

    /// syncd's engine runs the same merge: its copy of the dataset holds the same pairs.
    @Test func syncdsEngineStoresTheSamePairsAsTheClient() throws {
        let client = try TestReplica(name: "client", entities: everyShapeEntities)
        let people = try peers(["x", "y", "z"], in: client)
        people[2].partner = people[0]
        people[1].addToFriends(people[0])
        people[1].addToFriends(people[2])
        try client.context.save()
        people[1].partner = people[0]
        try client.context.save()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("self-inverse-engine-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let engine = try SQLiteDatasetEngine.create(at: path, schema: client.store.schemaDocument)
        _ = try engine.apply(try client.replica.changeSets(missingFrom: VersionVector()), pushedBy: try client.replica.credentials())
        #expect(try TestReplica.digest(of: path) == client.digest())
        #expect(try client.fetch(Peer.self, people[2].objectID)?.partner == nil)
    }

    /// A store opened from its schema alone (the `sync` CLI's way) links and unlinks from either end.
    @Test func schemaOnlyEditsLinkAndUnlinkFromEitherEnd() throws {
        let typed = try TestReplica(name: "typed", entities: everyShapeEntities)
        let schemaOnly = try RecordEditorTests.SchemaOnlyReplica(schema: typed.store.schemaDocument)
        var ids: [UUID] = []
        try schemaOnly.replica.edit { editor in
            ids = try ["x", "y", "z"].map { try editor.insert("Peer", values: ["name": .text($0)]) }
        }
        let (x, y, z) = (ids[0], ids[1], ids[2])
        try schemaOnly.replica.edit { editor in
            try editor.link("Peer", id: y, relationship: "partner", target: x)
            try editor.link("Peer", id: z, relationship: "friends", target: x)
        }
        // Taking y as z's partner leaves x without one, as a context's setter would.
        try schemaOnly.replica.edit { try $0.link("Peer", id: z, relationship: "partner", target: y) }
        try schemaOnly.replica.edit { try $0.unlink("Peer", id: x, relationship: "friends", target: z) }
        try schemaOnly.replica.edit { try $0.link("Peer", id: x, relationship: "friends", target: y) }

        _ = try typed.replica.apply(try schemaOnly.replica.changeSets(missingFrom: typed.replica.versionVector()))
        #expect(try typed.fetch(Peer.self, x)?.partner == nil)
        #expect(try typed.fetch(Peer.self, y)?.partner?.objectID == z)
        #expect(try typed.fetch(Peer.self, z)?.partner?.objectID == y)
        #expect(try typed.fetch(Peer.self, x)?.friends.map(\.objectID) == [y])
        #expect(try typed.fetch(Peer.self, z)?.friends.isEmpty == true)
        let record = try #require(try schemaOnly.replica.record("Peer", id: y))
        #expect(record.relationships.first { $0.name == "friends" }?.members == [x])
        #expect(try TestReplica.digest(of: schemaOnly.path) == typed.digest())
    }
}

extension TestReplica {
    /// The dot of the last change set `replica` committed itself.
    static func lastDot(of replica: TestReplica) throws -> Dot {
        Dot(replica: replica.replica.replicaID, seq: try replica.replica.versionVector()[replica.replica.replicaID])
    }
}

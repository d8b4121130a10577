import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport
import Testing

/// The guarantees of CONTRACT.md §2 that single batches must keep: idempotence, causality,
/// refusing malformed batches whole, and the wire form of change sets.
@Suite struct GuaranteeTests {
    /// Everything a replica stores, sync metadata included: what "changes nothing" compares.
    private func snapshot(_ replica: TestReplica) throws -> String {
        let connection = try SQLiteConnection(path: replica.path)
        var lines: [String] = []
        for table in try connection.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' ORDER BY name") {
            guard case .text(let name) = table[0] else { continue }
            for row in try connection.rows("SELECT * FROM \"\(name)\"").map({ $0.map(\.description).joined(separator: " | ") }).sorted() {
                lines.append(name + ": " + row)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// A's history: a team with members and labels, edits, a reorder, a move and a delete.
    private func makeHistory(on a: TestReplica) throws -> (team: Team, members: [Member]) {
        let team = Team()
        team.name = "T"
        let members = (0..<4).map { index -> Member in
            let member = Member()
            member.name = "m\(index)"
            team.addToMembers(member)
            return member
        }
        let label = Label()
        label.text = "L"
        members[0].addToLabels(label)
        members[1].manager = members[0]
        a.context.insert(team)
        try a.context.save()
        members[2].level = 9
        members[2].note = "n"
        team.insertIntoMembers(members[3], at: 0)
        try a.context.save()
        members[1].manager = members[2]
        members[0].removeFromLabels(label)
        team.leader = members[2]
        try a.context.save()
        a.context.delete(members[3])
        try a.context.save()
        return (team, members)
    }

    // MARK: Idempotence

    @Test func applyingABatchTwiceChangesNothing() throws {
        let clock = FakeClock()
        let a = try TestReplica(clock: clock, name: "a")
        let b = try TestReplica(clock: clock, name: "b")
        _ = try makeHistory(on: a)
        // B has a concurrent change that conflicts, so the journal has something to duplicate.
        try b.pull(from: a)
        let bMember = try #require(try b.context.fetchAll(Member.self).first { $0.name == "m2" })
        bMember.level = 1
        try b.context.save()
        let aMember = try a.object(Member.self, bMember.objectID)
        aMember.level = 2
        try a.context.save()

        let batch = try a.replica.changeSets(missingFrom: VersionVector())
        let first = try b.replica.apply(batch)
        #expect(first.applied == [try #require(batch.last).dot])
        let before = try snapshot(b)
        #expect(try b.replica.conflicts().count == 1)

        let second = try b.replica.apply(batch)
        #expect(second.applied.isEmpty)
        #expect(Set(second.alreadyApplied) == Set(batch.map(\.dot)))
        #expect(second.changedObjectIDs.isEmpty)
        #expect(try snapshot(b) == before)

        // Duplicates inside one batch, and a replica's own change sets coming back, apply once / not at all.
        let c = try TestReplica(clock: clock, name: "c")
        let doubled = try c.replica.apply(batch + batch.reversed())
        #expect(doubled.applied.count == batch.count)
        #expect(try c.digest() == a.digest())
        let own = try a.replica.apply(try a.replica.changeSets(missingFrom: VersionVector()))
        #expect(own.applied.isEmpty)
        #expect(try a.replica.conflicts().isEmpty)
    }

    /// `changeSet` with every name it sets replaced: the same dot, other contents.
    static func forged(_ changeSet: ChangeSet) -> ChangeSet {
        var forged = changeSet
        forged.operations = changeSet.operations.map { operation in
            guard case .set(let entity, let id, "name", _) = operation else { return operation }
            return .set(entity: entity, id: id, attribute: "name", values: [.text("forged")])
        }
        return forged
    }

    /// A's history as one batch, and a replica B that has applied none of it.
    private func historyAndEmptyPeer() throws -> (batch: [ChangeSet], b: TestReplica) {
        let clock = FakeClock()
        let a = try TestReplica(clock: clock, name: "a")
        _ = try makeHistory(on: a)
        return (try a.replica.changeSets(missingFrom: VersionVector()), try TestReplica(clock: clock, name: "b"))
    }

    @Test func aStoredDotWithOtherContentsIsRefusedAndChangesNothing() throws {
        let (batch, b) = try historyAndEmptyPeer()
        _ = try b.replica.apply(Array(batch.prefix(1)))
        let before = try snapshot(b)

        let forgedFirst = GuaranteeTests.forged(batch[0])
        #expect(forgedFirst != batch[0])
        let error = #expect(throws: SyncError.self) { try b.replica.apply([forgedFirst] + batch.dropFirst()) }
        #expect(error?.code == .conflictingChangeSet)
        #expect(error?.message.contains("\(batch[0].dot)") == true)
        #expect(try snapshot(b) == before)

        var laterClock = batch[0]
        laterClock.hlc = HLC(rawValue: batch[0].hlc.rawValue + 1)
        #expect(throws: SyncError(.conflictingChangeSet, "change set \(batch[0].dot) was applied before with different contents")) {
            try b.replica.apply([laterClock])
        }
        // The same contents again are still idempotent.
        #expect(try b.replica.apply([batch[0]]).alreadyApplied == [batch[0].dot])
    }

    /// A change set of another replica that creates an object the store holds, or one an earlier
    /// change set of the same batch created, is refused naming the operation, and the batch changes nothing.
    @Test func aCreateOfAnObjectThatExistsIsRefusedAndChangesNothing() throws {
        let (batch, b) = try historyAndEmptyPeer()
        _ = try b.replica.apply(batch)
        let before = try snapshot(b)
        let team = try #require(b.context.fetchAll(Team.self).first)
        let intruder = UUID(uuidString: "CCCCCCCC-0000-4000-8000-000000000003")!
        let seen = try b.replica.versionVector()
        func creating(_ id: UUID, seq: UInt64) -> ChangeSet {
            var vector = seen
            vector[intruder] = seq
            return ChangeSet(dot: Dot(replica: intruder, seq: seq), hlc: HLC(rawValue: batch.last!.hlc.rawValue + seq), vector: vector,
                             operations: [.create(entity: "Team", id: id), .set(entity: "Team", id: id, attribute: "name", values: [.text("again")])])
        }
        let held = #expect(throws: SyncError.self) { try b.replica.apply([creating(team.objectID, seq: 1)]) }
        #expect(held?.code == .conflictingChangeSet)
        #expect(held?.message.contains("operation 0: creates Team \(team.objectID), which already exists") == true, "\(held?.message ?? "")")
        #expect(try snapshot(b) == before)

        let fresh = UUID(uuidString: "DDDDDDDD-0000-4000-8000-000000000004")!
        let twice = #expect(throws: SyncError.self) { try b.replica.apply([creating(fresh, seq: 1), creating(fresh, seq: 2)]) }
        #expect(twice?.code == .conflictingChangeSet)
        #expect(twice?.message.contains("change set \(Dot(replica: intruder, seq: 2)), operation 0: creates Team \(fresh)") == true, "\(twice?.message ?? "")")
        #expect(try snapshot(b) == before)

        var doubled = creating(fresh, seq: 1)
        doubled.operations += [.create(entity: "Team", id: fresh)]
        let inOne = #expect(throws: SyncError.self) { try b.replica.apply([doubled]) }
        #expect(inOne?.message.contains("operation 2: creates Team \(fresh)") == true, "\(inOne?.message ?? "")")
        #expect(try snapshot(b) == before)
    }

    @Test func aDotTwiceInOneBatchWithDifferentContentsIsRefusedAndChangesNothing() throws {
        let (batch, b) = try historyAndEmptyPeer()
        let before = try snapshot(b)

        for doubled in [batch + [GuaranteeTests.forged(batch[0])], [GuaranteeTests.forged(batch[0])] + batch] {
            let error = #expect(throws: SyncError.self) { try b.replica.apply(doubled) }
            #expect(error?.code == .conflictingChangeSet)
            #expect(error?.message.contains("\(batch[0].dot)") == true)
            #expect(try snapshot(b) == before)
        }
    }

    // MARK: Causality

    @Test func aBatchWithAGapIsRefusedAndChangesNothing() throws {
        let clock = FakeClock()
        let a = try TestReplica(clock: clock, name: "a")
        let b = try TestReplica(clock: clock, name: "b")
        let extra = Member()
        extra.name = "b's own"
        b.context.insert(extra)
        try b.context.save()
        _ = try makeHistory(on: a)
        let history = try a.replica.changeSets(missingFrom: VersionVector())
        #expect(history.map(\.dot.seq) == [1, 2, 3, 4])

        let before = try snapshot(b)
        let vectorBefore = try b.replica.versionVector()
        for gap in [[history[0], history[2]], [history[1]], [history[3], history[0], history[1]]] {
            #expect {
                try b.replica.apply(gap)
            } throws: { error in
                (error as? SyncError)?.code == .causalityViolation
            }
            #expect(try snapshot(b) == before, "a refused batch changed the store")
            #expect(try b.replica.versionVector() == vectorBefore)
        }

        // A change set that depends on a third replica's change set the receiver lacks.
        let c = try TestReplica(clock: clock, name: "c")
        try c.pull(from: b)
        try #require(try c.context.fetchAll(Member.self).first).level = 4
        try c.context.save()
        let d = try TestReplica(clock: clock, name: "d")
        let cBefore = try snapshot(d)
        #expect {
            try d.replica.apply([try #require(try c.replica.changeSets(missingFrom: VersionVector()).last)])
        } throws: { error in
            (error as? SyncError)?.code == .causalityViolation
        }
        #expect(try snapshot(d) == cBefore)
        #expect(try d.replica.versionVector() == VersionVector())

        // Out of order within one batch is fine: each applies after what it depends on.
        _ = try b.replica.apply(history.reversed())
        #expect(try b.replica.versionVector()[a.replica.replicaID] == 4)
        #expect(try b.integrityProblems() == [])
    }

    // MARK: Malformed batches

    enum Malformed: String, CaseIterable, Sendable {
        case unknownEntity, unknownAttribute, setOnUnknownObject, wrongColumnCount, unknownRelationship,
             linkToUnknownObject, linkThroughNonCanonicalSide, deleteOfUnknownObject, positionInUnorderedRelationship

        func operation(member: UUID, label: UUID) -> SyncKit.Operation {
            switch self {
            case .unknownEntity: .create(entity: "Ghost", id: UUID())
            case .unknownAttribute: .set(entity: "Member", id: member, attribute: "salary", values: [.integer(1)])
            case .setOnUnknownObject: .set(entity: "Member", id: UUID(), attribute: "name", values: [.text("nobody")])
            case .wrongColumnCount: .set(entity: "Member", id: member, attribute: "name", values: [.text("a"), .text("b")])
            case .unknownRelationship: .link(entity: "Member", id: member, relationship: "friends", target: label)
            case .linkToUnknownObject: .link(entity: "Member", id: member, relationship: "manager", target: UUID())
            case .linkThroughNonCanonicalSide: .link(entity: "Member", id: member, relationship: "reports", target: member)
            case .deleteOfUnknownObject: .delete(entity: "Member", id: UUID(), root: UUID())
            case .positionInUnorderedRelationship: .position(entity: "Label", id: label, relationship: "members", member: member, key: "V")
            }
        }

        /// Whether a newer schema could have written the operation (it names an entity, attribute
        /// or relationship the replicas' schema lacks): a client keeps it, a server refuses it.
        var namesWhatANewerSchemaHas: Bool {
            [.unknownEntity, .unknownAttribute, .unknownRelationship].contains(self)
        }
    }

    /// A well-formed change set, then `malformed`'s in another by the same author, for replica `b`
    /// which holds one member linked to one label.
    struct MalformedBatch {
        let good: ChangeSet
        let bad: ChangeSet
        let member: UUID
        let newcomer: UUID

        init(_ malformed: Malformed, member: UUID, label: UUID, vector: VersionVector) {
            let author = UUID()
            newcomer = UUID()
            self.member = member
            good = ChangeSet(
                dot: Dot(replica: author, seq: 1), hlc: HLC(milliseconds: ReplicaTrio.base + 5_000, counter: 0),
                vector: VersionVector([author: 1]).merging(vector),
                operations: [.create(entity: "Member", id: newcomer), .set(entity: "Member", id: newcomer, attribute: "name", values: [.text("new")]),
                             .set(entity: "Member", id: newcomer, attribute: "level", values: [.integer(0)]),
                             .set(entity: "Member", id: newcomer, attribute: "note", values: [.null]),
                             .set(entity: "Member", id: member, attribute: "level", values: [.integer(3)])])
            bad = ChangeSet(
                dot: Dot(replica: author, seq: 2), hlc: HLC(milliseconds: ReplicaTrio.base + 6_000, counter: 0),
                vector: VersionVector([author: 2]).merging(vector),
                operations: [.set(entity: "Member", id: newcomer, attribute: "level", values: [.integer(1)]),
                             malformed.operation(member: member, label: label)])
        }
    }

    /// What a newer schema wrote is applied for what the client's schema knows and kept whole
    /// (relayed as it came); a server, whose schema is the newest, refuses it and changes nothing.
    @Test(arguments: Malformed.allCases.filter(\.namesWhatANewerSchemaHas))
    func whatANewerSchemaWroteIsKeptByAClientAndRefusedByAServer(_ malformed: Malformed) throws {
        let clock = FakeClock()
        let a = try TestReplica(clock: clock, name: "a")
        let b = try TestReplica(clock: clock, name: "b")
        let member = Member(), label = Label()
        member.addToLabels(label)
        a.context.insert(member)
        try a.context.save()
        try b.pull(from: a)
        let batch = MalformedBatch(malformed, member: member.objectID, label: label.objectID, vector: try b.replica.versionVector())

        let serverFile = TemporaryStoreFile(prefix: "guarantee-server")
        let server = try SyncReplica(serving: try ObjectStore(path: serverFile.path, entities: syncEntities))
        _ = try server.apply(try a.replica.changeSets(missingFrom: VersionVector()))
        let serverVector = try server.versionVector()
        let error = try #require(throws: SyncError.self) { try server.apply([batch.good, batch.bad]) }
        #expect(error.code == .schemaMismatch && error.message.contains("\(batch.bad.dot)"), "\(error)")
        #expect(try server.versionVector() == serverVector)

        #expect(try b.replica.apply([batch.good, batch.bad]).applied == [batch.good.dot, batch.bad.dot])
        #expect(try b.fetch(Member.self, batch.newcomer)?.level == 1)
        #expect(try b.replica.keptChangeSetCount() == 1)
        #expect(try b.replica.changeSets(missingFrom: a.replica.versionVector()).last == batch.bad)
    }

    @Test(arguments: Malformed.allCases.filter { !$0.namesWhatANewerSchemaHas })
    func aMalformedChangeSetIsRefusedWithSchemaMismatchAndNothingChanges(_ malformed: Malformed) throws {
        let clock = FakeClock()
        let a = try TestReplica(clock: clock, name: "a")
        let b = try TestReplica(clock: clock, name: "b")
        let member = Member(), label = Label()
        member.name = "M"
        label.text = "L"
        member.addToLabels(label)
        a.context.insert(member)
        try a.context.save()
        try b.pull(from: a)
        let before = try snapshot(b)
        let vectorBefore = try b.replica.versionVector()

        // A well-formed change set first, so the refusal must undo it too.
        let batch = MalformedBatch(malformed, member: member.objectID, label: label.objectID, vector: vectorBefore)
        let (good, bad, newcomer) = (batch.good, batch.bad, batch.newcomer)
        #expect {
            try b.replica.apply([good, bad])
        } throws: { error in
            (error as? SyncError)?.code == .schemaMismatch
        }
        #expect(try snapshot(b) == before)
        #expect(try b.replica.versionVector() == vectorBefore)
        #expect(try b.fetch(Member.self, member.objectID)?.level == 0)
        // The good one alone still applies.
        #expect(try b.replica.apply([good]).applied == [good.dot])
        #expect(try b.fetch(Member.self, newcomer)?.name == "new")
    }

    // MARK: Wire form

    @Test func changeSetCodingRoundTripsEveryOperationAndValue() throws {
        let a = try TestReplica(clock: FakeClock(), name: "a")
        _ = try makeHistory(on: a)
        var changeSets = try a.replica.changeSets(missingFrom: VersionVector())
        let operations = Set(changeSets.flatMap(\.operations).map { operation -> String in
            switch operation {
            case .create: "create"
            case .set: "set"
            case .delete: "delete"
            case .link: "link"
            case .unlink: "unlink"
            case .position: "position"
            case .increment: "increment"
            }
        })
        #expect(operations == ["create", "set", "delete", "link", "unlink", "position"])
        let author = UUID(), other = UUID()
        changeSets.append(ChangeSet(
            dot: Dot(replica: author, seq: 7), hlc: HLC(milliseconds: 1_800_000_000_000, counter: 65_535),
            vector: VersionVector([author: 7, other: 3, a.replica.replicaID: 4]),
            operations: [.set(entity: "X", id: UUID(), attribute: "values",
                              values: [.null, .integer(.min), .integer(.max), .real(1.5), .real(-0.0), .real(2), .text(""), .text("é\"\\/\n"),
                                       .blob(Data()), .blob(Data([0, 1, 255]))]),
                         .unlink(entity: "X", id: UUID(), relationship: "r", target: UUID(), observed: [])]))
        for base in [VersionVector(), VersionVector([other: 2]), VersionVector([a.replica.replicaID: 4, other: 3, UUID(): 9])] {
            let data = try ChangeSetCoding.encode(changeSets, base: base)
            let decoded = try ChangeSetCoding.decode(data)
            #expect(decoded.base == base)
            #expect(decoded.changeSets == changeSets)
            #expect(try ChangeSetCoding.encode(decoded.changeSets, base: decoded.base) == data)
        }
    }

    /// The bytes one change set takes inside a batch.
    private func encodedSizes(_ changeSets: [ChangeSet], base: VersionVector) throws -> [Int] {
        let data = try ChangeSetCoding.encode(changeSets, base: base)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let elements = try #require(object["changeSets"] as? [Any])
        return try elements.map { try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]).count }
    }

    @Test func anEncodedChangeSetDoesNotGrowWithTheNumberOfReplicas() throws {
        func sizes(replicas: Int) throws -> [Int] {
            let author = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!
            var base = VersionVector([author: 10])
            for index in 1..<replicas {
                base[UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", index + 1))!] = UInt64(index * 3)
            }
            #expect(base.entries.count == replicas)
            let id = UUID(uuidString: "10000000-0000-0000-0000-000000000000")!
            // Three consecutive change sets by one author, the receiver having seen everything before them.
            let changeSets = (11...13).map { seq -> ChangeSet in
                var vector = base
                vector[author] = UInt64(seq)
                return ChangeSet(dot: Dot(replica: author, seq: UInt64(seq)), hlc: HLC(milliseconds: 1_700_000_000_000 + UInt64(seq), counter: 0),
                                 vector: vector, operations: [.set(entity: "Member", id: id, attribute: "level", values: [.integer(Int64(seq))])])
            }
            let decoded = try ChangeSetCoding.decode(try ChangeSetCoding.encode(changeSets, base: base))
            #expect(decoded.changeSets == changeSets)
            return try encodedSizes(changeSets, base: base)
        }
        let few = try sizes(replicas: 2)
        let many = try sizes(replicas: 50)
        #expect(few == many, "bytes per change set with 2 replicas \(few), with 50 \(many)")
        #expect(Set(many).count == 1)
    }
}

private extension VersionVector {
    func merging(_ other: VersionVector) -> VersionVector {
        var result = self
        result.merge(other)
        return result
    }
}

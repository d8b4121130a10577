import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport
import Testing

/// How a rower feels; its cases' raw values are in the schema, so a value outside them is refused.
enum RowerMood: String, CaseIterable, Sendable { case calm, keen, tired }

/// Notes on a rower that replicas with the Swift type join as a set of lines.
struct RowerNotes: MergeableValue, Codable, Equatable, Sendable {
    var lines: [String] = []

    static func merge(_ first: RowerNotes, _ second: RowerNotes) -> RowerNotes {
        RowerNotes(lines: Array(Set(first.lines).union(second.lines)).sorted())
    }
}

/// A rower, known by a unique handle and by first and last name together, with a best and a
/// fastest time merged as extremes and a visit counter.
@Entity final class Rower {
    #Unique<Rower>([\.first, \.last])
    @Attribute(.unique) var handle: String = ""
    var first: String?
    var last: String?
    var level: Int16 = 0
    @Attribute(storage: .raw) var mood: RowerMood = .calm
    @Attribute(merge: .max) var best: Int = 0
    @Attribute(merge: .min) var fastest: Int = 1000
    @Attribute(merge: .counter) var visits: Int = 0
    @Attribute(storage: .codable, merge: .custom(RowerNotes.self)) var notes: RowerNotes = RowerNotes()
    @Relationship(inverse: "rowers", deleteRule: .nullify) var boat: Boat?
}

/// A boat seats one or two rowers and cannot be deleted while it holds any.
@Entity final class Boat {
    var name: String = ""
    @Relationship(inverse: "boat", deleteRule: .deny, minCount: 1, maxCount: 2) var rowers: Set<Rower> = []
}

/// The order in which the three replicas sync, in two rounds; C never edits.
enum ExchangeOrder: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case aFirst, bFirst

    /// Indexes into `[a, b, c]`, one list per round.
    var rounds: [[Int]] {
        switch self {
        case .aFirst: [[0, 1, 2], [2, 1, 0]]
        case .bFirst: [[1, 0, 2], [2, 0, 1]]
        }
    }

    var testDescription: String { rawValue }
}

/// The merge contract's rows for uniqueness (§3.8), merge policies (§3.9), relationship bounds
/// (§3.10) and values on arrival (§2), through three `sync` CLI replicas and a real `syncd`:
/// A and B edit offline, all three sync in either order, and every store ends the same with the
/// journal entries the contract names, as JSON values in `sync conflicts`.
extension EndToEndTests {
    /// Three CLI replicas of the rowing schema, `[a, b, c]`.
    func makeRowingReplicas() throws -> [String] {
        let typed = try ObjectStore(path: directory.file("rowing-typed.sqlite"), entities: [Rower.self, Boat.self])
        return try ["a", "b", "c"].map { try makeCLIReplica("\($0).sqlite", schemaFrom: typed) }
    }

    /// Saves, through the Swift API on the CLI store at `path`, one boat per entry of `crews`
    /// with that many new rowers; returns each boat's ID and its rowers' IDs.
    func seedBoats(in path: String, crews: [Int]) throws -> [(boat: String, rowers: [String])] {
        let store = try ObjectStore(path: path, entities: [Rower.self, Boat.self])
        // The sync replica records the save as a change set, for `sync push` to send.
        let replica = try SyncReplica(store: store)
        let context = try store.makeContext()
        var seeded: [(boat: String, rowers: [String])] = []
        for (boatIndex, size) in crews.enumerated() {
            let boat = Boat()
            boat.name = "boat \(boatIndex)"
            var rowerIDs: [String] = []
            for rowerIndex in 0..<size {
                let rower = Rower()
                rower.handle = "seat \(boatIndex).\(rowerIndex)"
                rower.boat = boat
                rowerIDs.append(rower.objectID.uuidString)
            }
            context.insert(boat)
            seeded.append((boat.objectID.uuidString, rowerIDs))
        }
        try withExtendedLifetime(replica) { try context.save() }
        return seeded
    }

    /// Pushes A's edits and pulls them into B and C, so that all three start alike.
    func shareStart(_ replicas: [String]) throws {
        try cli(replicas[0], "push")
        for replica in replicas.dropFirst() { try cli(replica, "pull") }
    }

    /// Every replica pulls and pushes, round after round in `order`; then every store holds the same rows.
    func exchange(_ replicas: [String], _ order: ExchangeOrder) throws {
        for round in order.rounds {
            for index in round { try cli(replicas[index], "pull", "--push") }
        }
        let digest = try storeDigest(replicas[0])
        for replica in replicas.dropFirst() {
            #expect(try storeDigest(replica) == digest, "\(replica) differs from \(replicas[0])")
        }
    }

    /// `sync conflicts` of `replica` as JSON objects, those of `kind` only.
    func journal(_ replica: String, kind: String) throws -> [[String: Any]] {
        try cli(replica, "conflicts").split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }.filter { $0["kind"] as? String == kind }
    }

    /// `sync get` of one object as a JSON object.
    func object(_ replica: String, _ entity: String, _ id: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(try cli(replica, "get", entity, id).utf8)) as? [String: Any])
    }

    /// The loser's value of a journal entry.
    func loserValue(_ entry: [String: Any]) -> Any? {
        (entry["loser"] as? [String: Any])?["value"]
    }

    @Test(arguments: ExchangeOrder.allCases)
    func concurrentDuplicatesOfAUniqueAttributeAndKeyMergeIntoTheEarliestEverywhere(_ order: ExchangeOrder) throws {
        let replicas = try makeRowingReplicas()
        let (a, b) = (replicas[0], replicas[1])
        let handleKept = try cli(a, "put", "Rower", "handle=ann")
        let nameKept = try cli(a, "put", "Rower", "handle=bo", "first=Bo", "last=Ng")
        let handleMerged = try cli(b, "put", "Rower", "handle=ann", "level=2")
        let nameMerged = try cli(b, "put", "Rower", "handle=bob", "first=Bo", "last=Ng")
        try exchange(replicas, order)

        for replica in replicas {
            let rowers = try cli(replica, "list", "Rower")
            #expect(rowers.contains(handleKept) && rowers.contains(nameKept), "\(replica): \(rowers)")
            #expect(!rowers.contains(handleMerged) && !rowers.contains(nameMerged), "\(replica): \(rowers)")
            // One merge per duplicate on every replica, since each applies both creations; the
            // entry names the entity's keys.
            let merges = try journal(replica, kind: "unique_merged")
            #expect(merges.count == 2, "\(replica): \(merges)")
            for (duplicate, survivor) in [(handleMerged, handleKept), (nameMerged, nameKept)] {
                let entry = try #require(merges.first { $0["object"] as? String == duplicate }, "\(replica): \(merges)")
                #expect(entry["property"] as? String == "handle, (first, last)", "\(entry)")
                #expect((entry["winner"] as? [String: Any])?["value"] as? String == survivor, "\(entry)")
                let values = try #require(loserValue(entry) as? [String: Any], "the duplicate's values as a JSON object: \(entry)")
                #expect(values["id"] as? String == duplicate, "\(values)")
            }
            let handleValues = try #require(merges.first { $0["object"] as? String == handleMerged }.flatMap(loserValue) as? [String: Any])
            #expect(handleValues["handle"] as? String == "ann" && handleValues["level"] as? Int == 2, "\(handleValues)")
            #expect(handleValues["first"] is NSNull, "\(handleValues)")
        }
    }

    @Test(arguments: ExchangeOrder.allCases)
    func concurrentMaximaMinimaAndIncrementsAllCountWithoutAttributeEntries(_ order: ExchangeOrder) throws {
        let replicas = try makeRowingReplicas()
        let (a, b) = (replicas[0], replicas[1])
        let rower = try cli(a, "put", "Rower", "handle=pat", "best=3", "fastest=100", "visits=10")
        try shareStart(replicas)
        try cli(a, "put", "Rower", rower, "best=7", "fastest=50")
        try cli(a, "increment", "Rower", rower, "visits", "2")
        try cli(b, "put", "Rower", rower, "best=5", "fastest=30", "visits=13")
        try cli(b, "increment", "Rower", rower, "visits", "--", "-1")
        try exchange(replicas, order)

        for replica in replicas {
            let merged = try object(replica, "Rower", rower)
            #expect(merged["best"] as? Int == 7 && merged["fastest"] as? Int == 30, "\(replica): \(merged)")
            #expect(merged["visits"] as? Int == 14, "10 + 2 + 3 − 1 on \(replica): \(merged)")
            #expect(try journal(replica, kind: "attribute").isEmpty, "a policy loses no write")
        }
    }

    @Test(arguments: ExchangeOrder.allCases)
    func aCustomPolicyIsMergedByTheLatestWriteWithoutTheSwiftTypeAndStoresAgree(_ order: ExchangeOrder) throws {
        let replicas = try makeRowingReplicas()
        let (a, b) = (replicas[0], replicas[1])
        let rower = try cli(a, "put", "Rower", "handle=lin", #"notes={"lines":["base"]}"#)
        try shareStart(replicas)
        try cli(a, "put", "Rower", rower, #"notes={"lines":["base","from A"]}"#)
        try cli(b, "put", "Rower", rower, #"notes={"lines":["base","from B"]}"#)
        try exchange(replicas, order)

        // The CLI has no `RowerNotes`, so §3.1 decides (§7): B's later write, on every replica.
        for replica in replicas {
            let notes = String(describing: try object(replica, "Rower", rower)["notes"] ?? "none")
            #expect(notes.contains("from B") && !notes.contains("from A"), "\(replica): \(notes)")
        }
    }

    @Test(arguments: ExchangeOrder.allCases)
    func concurrentLinksBeyondMaxCountShowTheEarliestAndJournalTheHiddenOne(_ order: ExchangeOrder) throws {
        let replicas = try makeRowingReplicas()
        let (a, b) = (replicas[0], replicas[1])
        let seeded = try seedBoats(in: a, crews: [1])[0]
        let earlier = try cli(a, "put", "Rower", "handle=early")
        let later = try cli(b, "put", "Rower", "handle=late")
        try shareStart(replicas)
        try cli(a, "link", "Rower", earlier, "boat", seeded.boat)
        try cli(b, "link", "Boat", seeded.boat, "rowers", later)
        try exchange(replicas, order)

        for replica in replicas {
            let boat = try object(replica, "Boat", seeded.boat)
            #expect(Set(boat["rowers"] as? [String] ?? []) == Set(seeded.rowers + [earlier]), "\(replica): \(boat)")
            let hidden = try object(replica, "Rower", later)
            #expect(hidden["boat"] as? String == nil, "a hidden member's to-one is empty: \(hidden)")
            let entries = try journal(replica, kind: "above_max_count")
            #expect(entries.count == 1, "\(replica): \(entries)")
            #expect(entries.first?["object"] as? String == seeded.boat && entries.first?["property"] as? String == "rowers")
            #expect(entries.first.flatMap(loserValue) as? String == later, "\(entries)")
        }
    }

    @Test(arguments: ExchangeOrder.allCases)
    func concurrentUnlinksBelowMinCountStandAndAreJournaled(_ order: ExchangeOrder) throws {
        let replicas = try makeRowingReplicas()
        let (a, b, c) = (replicas[0], replicas[1], replicas[2])
        let seeded = try seedBoats(in: a, crews: [2])[0]
        try shareStart(replicas)
        try cli(a, "unlink", "Boat", seeded.boat, "rowers", seeded.rowers[0])
        try cli(b, "unlink", "Rower", seeded.rowers[1], "boat", seeded.boat)
        try exchange(replicas, order)

        for replica in replicas {
            #expect((try object(replica, "Boat", seeded.boat)["rowers"] as? [String])?.isEmpty == true)
            let entries = try journal(replica, kind: "below_min_count")
            #expect(entries.count == 1, "\(replica): \(entries)")
            #expect(entries.first?["object"] as? String == seeded.boat && entries.first?["property"] as? String == "rowers")
            #expect(entries.first.flatMap(loserValue) is NSNull, "\(entries)")
        }
        // An edit leaving the relationship alone goes through; one changing it must bring it back.
        try cli(c, "put", "Boat", seeded.boat, "name=empty")
        try cli(c, "link", "Rower", seeded.rowers[0], "boat", seeded.boat)
    }

    /// Runs a `sync` command on `replica` that must fail with exit status 1, saying every text of
    /// `expected`, and checks that the store is unchanged.
    func expectRefusal(_ replica: String, _ arguments: [String], saying expected: [String]) throws {
        let before = try storeDigest(replica), log = try cli(replica, "log")
        let result = try ProductProcess.run(product: "sync", ["--store", replica] + arguments)
        #expect(result.status == 1, "sync \(arguments.joined(separator: " ")) exited \(result.status): \(result.standardOutput)")
        for text in expected {
            #expect(result.standardError.contains(text), "sync \(arguments.joined(separator: " ")) said \(result.standardError)")
        }
        #expect(try storeDigest(replica) == before && cli(replica, "log") == log, "a refused edit commits nothing")
    }

    @Test func theCLIRefusesEverySaveTimeRuleWithTheSaveErrorAndCommitsNothing() throws {
        let replicas = try makeRowingReplicas()
        let (a, b) = (replicas[0], replicas[1])
        let seeded = try seedBoats(in: a, crews: [2, 1])
        let (full, single) = (seeded[0], seeded[1])
        try cli(a, "put", "Rower", "handle=ann", "first=Ann", "last=Lee")
        let spare = try cli(a, "put", "Rower", "handle=spare")
        try shareStart(replicas)

        try expectRefusal(a, ["put", "Rower", "handle=ann"], saying: ["uniqueViolation", "Rower.handle must be unique", "'ann'"])
        try expectRefusal(a, ["put", "Rower", spare, "handle=ann"], saying: ["Rower.handle must be unique", "'ann'", spare])
        try expectRefusal(a, ["put", "Rower", "handle=other", "first=Ann", "last=Lee"], saying: ["Rower.(first, last) must be unique", "Ann", "Lee"])
        try expectRefusal(a, ["link", "Rower", spare, "boat", full.boat],
                          saying: ["countViolation", "Boat.rowers of \(full.boat) has 3 member(s), more than its maxCount 2"])
        try expectRefusal(a, ["unlink", "Boat", single.boat, "rowers", single.rowers[0]],
                          saying: ["Boat.rowers of \(single.boat) has 0 member(s), fewer than its minCount 1"])
        try expectRefusal(a, ["delete", "Rower", single.rowers[0]], saying: ["fewer than its minCount 1"])
        try expectRefusal(a, ["delete", "Boat", full.boat],
                          saying: ["deleteDenied", "cannot delete Boat \(full.boat): its relationship 'rowers' (delete rule deny) still holds 2 object(s)"])

        // Nothing refused reaches the server: B pulls nothing new.
        try cli(a, "push")
        let before = try storeDigest(b)
        try cli(b, "pull")
        #expect(try storeDigest(b) == before)
    }

    @Test func valuesThatDoNotFitTheSchemaAre422FromSyncdAndStoreNothing() async throws {
        let replicas = try makeRowingReplicas()
        let a = replicas[0]
        let rower = try #require(UUID(uuidString: try cli(a, "put", "Rower", "handle=val")))
        try cli(a, "push")
        let author = try SyncReplica(store: ObjectStore(existingAt: a)).replicaID
        let stored = try storeDigest(serverStorePath)

        let badValues: [(attribute: String, value: SQLValue)] = [
            ("handle", .integer(5)),          // text attribute, integer value
            ("handle", .null),                // null into a non-optional
            ("level", .integer(40_000)),      // beyond Int16
            ("mood", .text("asleep")),        // no case has this raw value
        ]
        for (attribute, value) in badValues {
            let pusher = ReplicaCredentials(replica: UUID(), key: (0..<32).map { _ in UInt8.random(in: 0...255) })
            var changeSet = ChangeSet(dot: Dot(replica: pusher.replica, seq: 1),
                                      hlc: HLC(rawValue: HybridLogicalClock.wallClockMilliseconds() << 16),
                                      vector: VersionVector([author: 1, pusher.replica: 1]),
                                      operations: [.set(entity: "Rower", id: rower, attribute: attribute, values: [value])])
            changeSet.authenticator = try ChangeSetAuthenticator.authenticator(of: changeSet, key: pusher.key)
            let answer = try await rawPush([changeSet], as: pusher)
            #expect(answer.status == 422 && answer.body.contains(#""code":"schema_mismatch""#), "\(attribute) = \(value): \(answer.status) \(answer.body)")
            #expect(answer.body.contains("Rower") && answer.body.contains(attribute), "\(answer.body)")
            #expect(try storeDigest(serverStorePath) == stored, "nothing of a refused batch is stored")
        }
    }
}

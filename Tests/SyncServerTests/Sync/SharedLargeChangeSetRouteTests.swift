import Codecs
import Foundation
@testable import HTTPServer
import SyncKit
import Testing

@testable import SyncServer

/// Large change sets through two instances on one PostgreSQL database: an upload's parts may
/// arrive through either, either reports them and commits them once, and either serves the parts
/// of a change set a pull handed out by reference ("Large change sets" in Protocol/README.md).
@Suite struct SharedLargeChangeSetRouteTests {
    typealias Routes = LargeChangeSetRouteTests

    /// Two instances on one database, with the limits of ``LargeChangeSetRouteTests`` and one clock.
    static func instances(clock: Routes.MovableClock = Routes.MovableClock()) throws -> (ServerFixture, ServerFixture) {
        let first = try Routes.server(storage: .postgreSQL, clock: clock)
        let second = try ServerFixture(sharingDatabaseWith: first) { Routes.configure(&$0, clock: clock) }
        return (first, second)
    }

    @Test func anUploadResumedThroughAnotherInstanceIsCommittedThereAndAnsweredTheSameThroughBoth() throws {
        let (first, second) = try Self.instances()
        let (client, body) = try Routes.bigSave()
        let id = try Routes.create(first, body)
        let parts = Routes.parts(of: body)
        for (index, part) in parts.enumerated() where index % 2 == 0 { Routes.put(first, id, index + 1, part).expectOK() }
        // The other instance reports what arrived through the first...
        let status = second.send(.get, "/v1/datasets/main/uploads/\(id)")
        #expect(status.status == .ok, "\(status.text)")
        let reported = (status.json["parts"] as? [[String: Any]])?.compactMap { $0["number"] as? Int }
        #expect(reported == Array(stride(from: 1, through: parts.count, by: 2)))
        // ...refuses to commit without the rest, takes the rest out of order, and commits.
        #expect(Routes.commit(second, id, as: try client.credentials).errorCode == "upload_incomplete")
        for (index, part) in parts.enumerated().reversed() where index % 2 == 1 { Routes.put(second, id, index + 1, part).expectOK() }
        #expect(try first.serverVector() == VersionVector())
        let committed = Routes.commit(second, id, as: try client.credentials)
        #expect(committed.status == .ok, "\(committed.text)")
        #expect((committed.json["applied"] as? [Any])?.count == 1)
        #expect(try first.serverVector() == client.replica.versionVector())
        let again = Routes.commit(first, id, as: try client.credentials)
        #expect(again.status == .ok)
        #expect(again.body == committed.body)
        #expect(Routes.put(first, id, 1, parts[0]).errorCode == "upload_committed")
        #expect(try PullRouteTests.page(first.pull(after: "0")).changeSets.count == 1)
    }

    /// Commits of one upload through both instances at the same moment: one applies it, and
    /// both answer its result (the change set applied, not "already applied").
    @Test func commitsThroughTwoInstancesAtOnceApplyTheUploadOnce() throws {
        let (first, second) = try Self.instances()
        for round in 0..<3 {
            let client = try ClientReplica()
            try client.addBoard("Big \(round)", cards: 60)
            let body = try client.batch()
            let id = try Routes.create(first, body)
            for (index, part) in Routes.parts(of: body).enumerated() { Routes.put(index % 2 == 0 ? first : second, id, index + 1, part).expectOK() }
            let answers = Collector<HTTPResponse>()
            let credentials = try client.credentials
            DispatchQueue.concurrentPerform(iterations: 4) { index in
                answers.append(Routes.commit(index % 2 == 0 ? first : second, id, as: credentials))
            }
            let all = answers.values
            #expect(all.count == 4)
            for answer in all {
                #expect(answer.status == .ok, "\(answer.text)")
                #expect(answer.body == all[0].body)
            }
            #expect((all[0].json["applied"] as? [Any])?.count == 1)
            #expect((all[0].json["alreadyApplied"] as? [Any])?.isEmpty == true)
        }
        #expect(try PullRouteTests.page(second.pull(after: "0")).changeSets.count == 3)
    }

    @Test func uploadsAndDownloadsExpireWhenUntouchedWhicheverInstanceStagedThem() throws {
        let clock = Routes.MovableClock()
        let (first, second) = try Self.instances(clock: clock)
        let (client, body) = try Routes.bigSave()
        let id = try Routes.create(first, body)
        Routes.put(first, id, 1, Routes.parts(of: body)[0]).expectOK()
        let committedID = try Routes.create(first, body)
        for (index, part) in Routes.parts(of: body).enumerated() { Routes.put(first, committedID, index + 1, part).expectOK() }
        Routes.commit(first, committedID, as: try client.credentials).expectOK()
        let page = first.send(.get, "/v1/datasets/main/changesets", query: [("after", "0"), ("largeChangeSets", "byReference")])
        #expect(page.json["largeChangeSet"] != nil, "\(page.text)")
        second.send(.get, "/v1/datasets/main/changesets/1/parts/1").expectOK()

        clock.advance(seconds: 3601)
        // Expired staging is removed when the next upload is created, through either instance.
        _ = try Routes.create(second, body)
        #expect(first.send(.get, "/v1/datasets/main/uploads/\(id)").errorCode == "upload_not_found")
        #expect(Routes.put(second, id, 2, Routes.parts(of: body)[1]).errorCode == "upload_not_found")
        #expect(second.send(.get, "/v1/datasets/main/changesets/1/parts/1").errorCode == "transfer_not_found")
        // Pulling the page again stages the change set again.
        let again = second.send(.get, "/v1/datasets/main/changesets", query: [("after", "0"), ("largeChangeSets", "byReference")])
        #expect((again.json["largeChangeSet"] as? [String: Any])?["sha256"] as? String
                == (page.json["largeChangeSet"] as? [String: Any])?["sha256"] as? String)
        first.send(.get, "/v1/datasets/main/changesets/1/parts/1").expectOK()
    }

    /// A page through one instance names a large change set by reference; its parts come from
    /// both instances, alternately, and join to the change set.
    @Test func thePartsOfAChangeSetHandedOutByOneInstanceAreServedByEither() throws {
        let (first, second) = try Self.instances()
        let (client, body) = try Routes.bigSave()
        let id = try Routes.create(first, body)
        for (index, part) in Routes.parts(of: body).enumerated() { Routes.put(first, id, index + 1, part).expectOK() }
        Routes.commit(first, id, as: try client.credentials).expectOK()

        let page = second.send(.get, "/v1/datasets/main/changesets", query: [("after", "0"), ("largeChangeSets", "byReference")])
        let reference = try #require(page.json["largeChangeSet"] as? [String: Any], "\(page.text)")
        #expect(page.json["cursor"] as? String == "1")
        let partCount = try #require(reference["parts"] as? Int)
        #expect(partCount >= 3)
        var fetched = Data()
        for number in 1...partCount {
            let part = (number % 2 == 0 ? first : second).send(.get, "/v1/datasets/main/changesets/1/parts/\(number)")
            #expect(part.status == .ok, "\(part.text)")
            fetched.append(part.body)
        }
        #expect(Routes.hex(fetched) == reference["sha256"] as? String)
        #expect(try ChangeSetCoding.decode(fetched).changeSets == client.replica.changeSets(missingFrom: VersionVector()))
        // The same page through the other instance names the same staged bytes.
        let through = first.send(.get, "/v1/datasets/main/changesets", query: [("after", "0"), ("largeChangeSets", "byReference")])
        #expect((through.json["largeChangeSet"] as? [String: Any])?["sha256"] as? String == reference["sha256"] as? String)
    }
}

import Foundation
import Testing
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport

/// Log compaction of the SQLite engine: exactly the stable prefix leaves the log, pulls from
/// before the compaction point are answered only when the puller provably has what was
/// compacted, merges after it decide as before, a snapshot plus the tail equals the store that
/// was never compacted, and re-pushes of compacted change sets stay idempotent.
@Suite struct LogCompactionTests {
    /// Two engines fed the same pushes: `compacted` is compacted, `whole` never is.
    private final class Engines {
        let compactedFile = TemporaryStoreFile(prefix: "compacted"), wholeFile = TemporaryStoreFile(prefix: "whole")
        let compacted: SQLiteDatasetEngine, whole: SQLiteDatasetEngine

        init(schema: SchemaDocument) throws {
            compacted = try SQLiteDatasetEngine.create(at: compactedFile.path, schema: schema)
            whole = try SQLiteDatasetEngine.create(at: wholeFile.path, schema: schema)
        }

        /// Pushes what `author` has that the engines lack, as `author`, to both.
        @discardableResult
        func push(from author: TestReplica) throws -> [ChangeSet] {
            let changeSets = try author.replica.changeSets(missingFrom: compacted.versionVector())
            for engine in [compacted, whole] { _ = try engine.apply(changeSets, pushedBy: try author.replica.credentials()) }
            return changeSets
        }

        func storedChangeSetCount() throws -> Int {
            try compacted.replica.withConnection { connection in
                guard case .integer(let count) = try connection.rows("SELECT count(*) FROM _sync_changeset")[0][0] else { return -1 }
                return Int(count)
            }
        }
    }

    /// The history the tests compact: `a` creates a team and a member; `b`, having pulled them,
    /// adds a member while `a` deletes the team (so the delete and `b`'s change set are
    /// concurrent). The log holds a1, a2, b1, a3 in that order.
    private struct History {
        let a: TestReplica, b: TestReplica, engines: Engines
        let team: UUID
        var a1: ChangeSet, a2: ChangeSet, b1: ChangeSet, a3: ChangeSet
    }

    /// b, which has not seen the delete of the team, adds another member to it and pushes to
    /// both engines; the compacted store must then equal the one never compacted.
    private func addAMemberOnBAndPush(_ history: History, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let third = Member()
        third.name = "Cy"
        third.team = try history.b.context.object(Team.self, id: history.team)
        history.b.context.insert(third)
        try history.b.context.save()
        try history.engines.push(from: history.b)
        #expect(try storeDigest(history.engines.compacted.path) == storeDigest(history.engines.whole.path), sourceLocation: sourceLocation)
    }

    private func history() throws -> History {
        let clock = FakeClock()
        let a = try TestReplica(clock: clock, name: "a"), b = try TestReplica(clock: clock, name: "b")
        let engines = try Engines(schema: a.store.schemaDocument)
        let team = Team()
        team.name = "Rovers"
        a.context.insert(team)
        try a.context.save()
        let first = Member()
        first.name = "Ada"
        first.team = team
        a.context.insert(first)
        try a.context.save()
        let pushedByA = try engines.push(from: a)
        try b.pull(from: a)
        let second = Member()
        second.name = "Bo"
        second.team = try b.context.object(Team.self, id: team.id)
        b.context.insert(second)
        try b.context.save()
        let pushedByB = try engines.push(from: b)
        a.context.delete(team)
        try a.context.save()
        let deleted = try engines.push(from: a)
        return History(a: a, b: b, engines: engines, team: team.id, a1: pushedByA[0], a2: pushedByA[1], b1: pushedByB[0], a3: deleted[0])
    }

    @Test func compactionRemovesExactlyTheStablePrefix() throws {
        let history = try history()
        let engine = history.engines.compacted
        let aID = history.a.replica.replicaID
        // b1 is not below the vector, so the prefix ends before it, although a3 after it is.
        let report = try engine.compactLog(stable: VersionVector([aID: 3]))
        #expect(report.entriesRemoved == 2 && report.changeSetsRemoved == 2 && report.changeSetsKept == 0, "\(report)")
        #expect(report.payloadBytesRemoved > 0)
        let whole = try history.engines.whole.readLog(after: 0, limit: 10, excluding: nil)
        let atPoint = try history.engines.whole.readLog(after: 0, limit: 2, excluding: nil)
        #expect(report.logStart == LogPosition(cursor: 2, digest: atPoint.digest))
        #expect(try history.engines.storedChangeSetCount() == 2)
        // The tail is read as before, and the end of the log is where it was.
        #expect(try engine.readLog(after: 2, limit: 10, excluding: nil).changeSets == Array(whole.changeSets.suffix(2)))
        #expect(try engine.logEnd() == LogPosition(cursor: whole.cursor, digest: whole.digest))
        // The same vector again compacts nothing.
        let again = try engine.compactLog(stable: VersionVector([aID: 3]))
        #expect(again.entriesRemoved == 0 && again.logStart == report.logStart)

        // A vector covering everything compacts the rest of the log, but both change sets stay:
        // the merge judges later references to the team against the delete's vector, and b1 is
        // b's latest, whose vector proves what b has.
        let all = try engine.compactLog(stable: try engine.versionVector())
        #expect(all.entriesRemoved == 2 && all.changeSetsRemoved == 0 && all.changeSetsKept == 2, "\(all)")
        #expect(all.logStart == LogPosition(cursor: whole.cursor, digest: whole.digest))
        #expect(try engine.logEnd() == all.logStart)
        let stored = try engine.replica.withConnection { try ChangeSetTable.changeSet(history.a3.dot, on: $0) }
        #expect(stored == history.a3)
    }

    @Test func aPullFromBeforeTheCompactionPointIsAnsweredOnlyWhenThePullerHasWhatWasCompacted() throws {
        let history = try history()
        let engine = history.engines.compacted, whole = history.engines.whole
        let aID = history.a.replica.replicaID, bID = history.b.replica.replicaID
        _ = try engine.compactLog(stable: VersionVector([aID: 3]))

        // Every compacted entry is a's own: a's pull reads on from the point, as the whole log answers it.
        let byA = try engine.readLog(after: 0, limit: 10, excluding: aID)
        let wholeByA = try whole.readLog(after: 0, limit: 10, excluding: aID)
        #expect(byA.changeSets == wholeByA.changeSets && byA.cursor == wholeByA.cursor && byA.digest == wholeByA.digest)
        #expect(byA.changeSets == [history.b1])
        // b made b1 after it had a1 and a2: b has every compacted entry.
        let byB = try engine.readLog(after: 0, limit: 10, excluding: bID)
        #expect(byB.changeSets == [history.a3] && byB.cursor == 4)
        // Anyone else cannot be shown to have a1.
        for puller in [nil, UUID()] as [ReplicaID?] {
            #expect(throws: DatasetEngineError.historyCompacted(0, logStart: 2, unknown: history.a1.dot)) {
                try engine.readLog(after: 0, limit: 10, excluding: puller)
            }
        }
        // A compacted cursor's digest is still checked.
        let first = try whole.readLog(after: 0, limit: 1, excluding: nil)
        #expect(try engine.readLog(after: 1, digest: first.digest, limit: 10, excluding: aID).changeSets == [history.b1])
        #expect(throws: DatasetEngineError.cursorMismatch(1)) {
            try engine.readLog(after: 1, digest: LogDigest.empty.appending(history.b1.dot), limit: 10, excluding: aID)
        }
        #expect(throws: DatasetEngineError.historyCompacted(1, logStart: 2, unknown: history.a2.dot)) {
            try engine.readLog(after: 1, digest: first.digest, limit: 10, excluding: nil)
        }
        // From the point on, nothing is asked of the puller.
        let fromPoint = try engine.readLog(after: 2, limit: 10, excluding: nil)
        #expect(fromPoint.changeSets == [history.b1, history.a3])

        // Once a3 is compacted too, b (whose last change set had not seen it) must start again.
        _ = try engine.compactLog(stable: try engine.versionVector())
        #expect(throws: DatasetEngineError.historyCompacted(0, logStart: 4, unknown: history.a3.dot)) {
            try engine.readLog(after: 0, limit: 10, excluding: bID)
        }
        #expect(try engine.readLog(after: 3, limit: 10, excluding: aID).cursor == 4)
    }

    /// The cursors of the compacted entries that still have a row of their own.
    private func compactedCursors(of engine: SQLiteDatasetEngine) throws -> [Int64] {
        try engine.replica.withConnection { connection in
            try connection.rows("SELECT cursor FROM _server_log_compacted ORDER BY cursor").map { row -> Int64 in
                guard case .integer(let cursor) = row[0] else { return -1 }
                return cursor
            }
        }
    }

    @Test func compactedEntriesEveryActiveReplicaPulledPastFoldIntoTheFloor() throws {
        let history = try history()
        let engine = history.engines.compacted, whole = history.engines.whole
        let aID = history.a.replica.replicaID, bID = history.b.replica.replicaID
        // b learns of the delete, then makes b2: its latest change set covers a1 to a3.
        try history.b.pull(from: history.a)
        let other = Team()
        other.name = "Comets"
        history.b.context.insert(other)
        try history.b.context.save()
        let b2 = try history.engines.push(from: history.b)[0]
        #expect(b2.vector[aID] == 3)

        // a pulled the whole log, b only up to a2: the floor stops at cursor 2.
        try engine.recordPull(by: aID, after: 5, unpushed: .none, forgotten: nil)
        try engine.recordPull(by: bID, after: 2, unpushed: .none, forgotten: nil)
        let report = try engine.compactLog(stable: try engine.versionVector())
        #expect(report.entriesRemoved == 5 && report.entriesFolded == 2, "\(report)")
        #expect(try compactedCursors(of: engine) == [3, 4, 5])
        let atFloor = try whole.readLog(after: 0, limit: 2, excluding: nil)
        let floor = try engine.replica.withConnection { try ServerCompactedLogTable.floor(on: $0) }
        #expect(floor == LogFloor(position: LogPosition(cursor: 2, digest: atFloor.digest), vector: VersionVector([aID: 2])))

        // At the floor the digest is still checked, and b reads on from the compaction point.
        #expect(throws: DatasetEngineError.cursorMismatch(2)) {
            try engine.readLog(after: 2, digest: LogDigest.empty, limit: 10, excluding: bID)
        }
        #expect(try engine.readLog(after: 2, digest: atFloor.digest, limit: 10, excluding: bID).cursor == 5)
        // Below it no digest is left to check: b's latest change set shows it has every entry.
        let belowByB = try engine.readLog(after: 1, digest: LogDigest.empty, limit: 10, excluding: bID)
        #expect(belowByB.changeSets.isEmpty && belowByB.cursor == 5 && belowByB.digest == report.logStart.digest)
        // A puller without such a change set is sent to a snapshot, naming the first entry of the floor it lacks.
        #expect(throws: DatasetEngineError.historyCompacted(1, logStart: 5, unknown: history.a1.dot)) {
            try engine.readLog(after: 1, limit: 10, excluding: UUID())
        }
        // a's latest change set (a3) had not seen b1: a must not skip it from below the floor either.
        #expect(throws: DatasetEngineError.historyCompacted(0, logStart: 5, unknown: history.b1.dot)) {
            try engine.readLog(after: 0, limit: 10, excluding: aID)
        }

        // Once b pulled to the end, the floor rises to the compaction point and no row is left.
        try engine.recordPull(by: bID, after: 5, unpushed: .none, forgotten: nil)
        let again = try engine.compactLog(stable: try engine.versionVector())
        #expect(again.entriesRemoved == 0 && again.entriesFolded == 3 && again.logStart == report.logStart, "\(again)")
        #expect(try compactedCursors(of: engine).isEmpty)
        #expect(try engine.logEnd() == report.logStart)
        #expect(try engine.readLog(after: 5, digest: report.logStart.digest, limit: 10, excluding: aID).changeSets.isEmpty)
        #expect(try storeDigest(engine.path) == storeDigest(whole.path))
        // Later pushes log and merge as on the server that never compacted.
        try addAMemberOnBAndPushAfterTheDelete(history)
        let tail = try engine.readLog(after: 5, digest: report.logStart.digest, limit: 10, excluding: aID)
        #expect(tail.changeSets == (try whole.readLog(after: 5, limit: 10, excluding: aID)).changeSets && tail.changeSets.count == 1)
    }

    /// b, which has seen the delete, adds a member to a team of its own and pushes to both engines.
    private func addAMemberOnBAndPushAfterTheDelete(_ history: History) throws {
        let member = Member()
        member.name = "Dee"
        history.b.context.insert(member)
        try history.b.context.save()
        try history.engines.push(from: history.b)
        #expect(try storeDigest(history.engines.compacted.path) == storeDigest(history.engines.whole.path))
    }

    @Test func mergesAfterCompactionAndASnapshotPlusTheTailEqualTheStoreNeverCompacted() throws {
        let history = try history()
        let engines = history.engines
        _ = try engines.compacted.compactLog(stable: try engines.compacted.versionVector())
        let snapshotFile = TemporaryStoreFile(prefix: "snapshot")
        let position = try engines.compacted.writeSnapshot(to: snapshotFile.path)

        // b, which has not seen the delete, adds another member to the team: the delete (whose
        // change set was compacted from the log) judges it by its vector as before.
        try addAMemberOnBAndPush(history)

        // A client made from the snapshot pulls the tail after the snapshot's cursor.
        try SyncReplica.adoptSnapshot(at: snapshotFile.path)
        let client = try SyncReplica(store: try ObjectStore(path: snapshotFile.path, entities: syncEntities))
        let tail = try engines.compacted.readLog(after: position.cursor, digest: position.digest, limit: 100, excluding: client.replicaID)
        _ = try client.apply(tail.changeSets)
        #expect(try client.versionVector() == engines.whole.versionVector())
        #expect(try storeDigest(snapshotFile.path) == storeDigest(engines.whole.path))
    }

    /// A delete's change set that is not its author's latest leaves the store with its log
    /// entry, but its HLC and vector stay: a reference added concurrently with the delete, pushed
    /// afterwards, is judged as in the store never compacted.
    @Test func aCompactedDeleteKeepsItsStampsAndJudgesLaterReferencesAsBefore() throws {
        let history = try history()
        let engines = history.engines
        // a writes once more: the delete a3 is no longer a's latest change set.
        history.a.context.insert(Label())
        try history.a.context.save()
        try engines.push(from: history.a)
        let report = try engines.compacted.compactLog(stable: try engines.compacted.versionVector())
        #expect(report.changeSetsKept == 2 && report.changeSetStampsKept == 1 && report.changeSetsRemoved == 3, "\(report)")
        let stored = try engines.compacted.replica.withConnection { connection in
            (try ChangeSetTable.changeSet(history.a3.dot, on: connection), try ChangeSetTable.vector(of: history.a3.dot, on: connection),
             try ChangeSetTable.hlc(of: history.a3.dot, on: connection))
        }
        #expect(stored.0 == nil && stored.1 == history.a3.vector && stored.2 == history.a3.hlc)

        // b, which has not seen the delete, adds another member to the team.
        try addAMemberOnBAndPush(history)
    }

    @Test func aRePushOfACompactedChangeSetIsAlreadyApplied() throws {
        let history = try history()
        let engine = history.engines.compacted
        _ = try engine.compactLog(stable: try engine.versionVector())
        let credentials = try history.a.replica.credentials()
        let again = try engine.apply([history.a1, history.a2], pushedBy: credentials)
        #expect(again.applied.isEmpty && again.alreadyApplied == [history.a1.dot, history.a2.dot])
        // Its contents are gone, so other contents under its dot can no longer be told apart.
        var altered = history.a1
        altered.hlc = HLC(rawValue: altered.hlc.rawValue + 1)
        #expect(try engine.apply([altered], pushedBy: credentials).alreadyApplied == [altered.dot])
        // A change set the merged state keeps (the delete's) is still compared.
        var alteredDelete = history.a3
        alteredDelete.hlc = HLC(rawValue: alteredDelete.hlc.rawValue + 1)
        #expect(throws: SyncError.self) { try engine.apply([alteredDelete], pushedBy: credentials) }
        #expect(try history.engines.whole.readLog(after: 0, limit: 10, excluding: nil).cursor == engine.logEnd().cursor)
    }

    /// syncd's store keeps no conflict journal, and drops with its log what a replica's
    /// compaction drops of its merged state (here a removed edge) when its schema renames
    /// nothing; merges afterwards end as in the store never compacted.
    @Test func compactionDropsWhatNoMergeAsksAboutAndSyncdKeepsNoJournal() throws {
        let clock = FakeClock()
        let a = try TestReplica(clock: clock, name: "a", entities: [Folder.self]), b = try TestReplica(clock: clock, name: "b", entities: [Folder.self])
        let engines = try Engines(schema: a.store.schemaDocument)
        let first = Folder(), second = Folder(), child = Folder()
        first.title = "first"; second.title = "second"; child.title = "child"
        child.parent = first
        for object in [first, second, child] as [any PersistentEntity] { a.context.insert(object) }
        try a.context.save()
        try engines.push(from: a)
        try b.pull(from: a)
        // Concurrent titles, which each client journals; a also moves the child to the second
        // folder, removing its edge to the first.
        let childOnA = try a.object(Folder.self, child.objectID)
        childOnA.title = "a"
        childOnA.parent = try a.object(Folder.self, second.objectID)
        try a.context.save()
        try b.object(Folder.self, child.objectID).title = "b"
        try b.context.save()
        try engines.push(from: a)
        try engines.push(from: b)
        try a.pull(from: b)
        try b.pull(from: a)
        #expect(try a.replica.conflictCount() == 1 && b.replica.conflictCount() == 1, "each client journals the conflict")
        #expect(try engines.compacted.replica.conflictCount() == 0, "syncd keeps no journal")
        let report = try engines.compacted.compactLog(stable: try engines.compacted.versionVector())
        #expect(report.mergedState.removedEdges == 1 && report.mergedState.bytes > 0 && report.journalEntriesRemoved == 0, "\(report)")

        // Later, b moves the child back to the first folder while a deletes that folder (whose
        // children cascade): both merge as in the store never compacted.
        try b.object(Folder.self, child.objectID).parent = try b.object(Folder.self, first.objectID)
        try b.context.save()
        a.context.delete(try a.object(Folder.self, first.objectID))
        try a.context.save()
        try engines.push(from: b)
        try engines.push(from: a)
        #expect(try storeDigest(engines.compacted.path) == storeDigest(engines.whole.path))
    }

    /// A server forgets an object deleted below the stable vector and remembers only its
    /// identifier: a change set creating that identifier again is refused as by the server that
    /// never compacted, and the identifier never reaches a snapshot.
    /// `author` saves a folder inside another, deletes it, and pushes both saves to `engines`;
    /// returns the deleted folder's identifier.
    private static func deleteAFolder(by author: TestReplica, pushingTo engines: Engines) throws -> UUID {
        let kept = Folder(), doomed = Folder()
        kept.title = "kept"; doomed.title = "doomed"
        doomed.parent = kept
        author.context.insert(kept)
        author.context.insert(doomed)
        try author.context.save()
        author.context.delete(try author.object(Folder.self, doomed.objectID))
        try author.context.save()
        try engines.push(from: author)
        return doomed.objectID
    }

    /// `author` saves a new folder titled "again" under the identifier `id` (set by hand);
    /// returns its change sets.
    private static func createAFolder(_ id: UUID, by author: TestReplica) throws -> [ChangeSet] {
        let again = Folder()
        again._$entityState.objectID = id
        again.title = "again"
        author.context.insert(again)
        try author.context.save()
        return try author.replica.changeSets(missingFrom: VersionVector())
    }

    @Test func aForgottenObjectsIdentifierIsNeverCreatedAgain() throws {
        let clock = FakeClock()
        let a = try TestReplica(clock: clock, name: "a", entities: [Folder.self])
        let engines = try Engines(schema: a.store.schemaDocument)
        let doomed = try LogCompactionTests.deleteAFolder(by: a, pushingTo: engines)
        let report = try engines.compacted.compactLog(stable: try engines.compacted.versionVector())
        #expect(report.mergedState.forgottenObjects == 1 && report.mergedState.removedEdges + report.mergedState.forgottenEdges == 1, "\(report)")
        let (creationRows, forgotten) = try engines.compacted.replica.withConnection { connection in
            (try connection.rows("SELECT count(*) FROM _sync_object").first?.first, try ServerForgottenObjectTable.count(on: connection))
        }
        #expect(creationRows == .integer(1) && forgotten == 1)

        // Another replica gives a new folder the forgotten identifier: both servers refuse it.
        let b = try TestReplica(clock: clock, name: "b", entities: [Folder.self])
        let changeSets = try LogCompactionTests.createAFolder(doomed, by: b)
        for engine in [engines.compacted, engines.whole] {
            let error = #expect(throws: SyncError.self) { try engine.apply(changeSets, pushedBy: try b.replica.credentials()) }
            #expect(error?.code == .conflictingChangeSet, "\(String(describing: error))")
        }
        #expect(try storeDigest(engines.compacted.path) == storeDigest(engines.whole.path))

        let snapshotFile = TemporaryStoreFile(prefix: "snapshot-forgotten")
        _ = try engines.compacted.writeSnapshot(to: snapshotFile.path)
        #expect(try !ServerForgottenObjectTable.exists(on: SQLiteConnection(path: snapshotFile.path)))
    }

    /// The identifier of a forgotten object stays while an active replica may still hold a
    /// record of the object, and goes once every active replica reported a forgotten vector at or
    /// above the compaction that forgot it: a create of the identifier then makes a new object
    /// on the server and on replicas, which hold nothing of the old one.
    @Test func aForgottenIdentifierIsReleasedOnceEveryActiveReplicaReportedForgettingItsObject() throws {
        let clock = FakeClock()
        let a = try TestReplica(clock: clock, name: "a", entities: [Folder.self])
        let b = try TestReplica(clock: clock, name: "b", entities: [Folder.self])
        let engines = try Engines(schema: a.store.schemaDocument)
        let engine = engines.compacted
        let doomed = try LogCompactionTests.deleteAFolder(by: a, pushingTo: engines)
        _ = try engine.apply([], pushedBy: try b.replica.credentials())
        _ = try b.replica.apply(try engine.readLog(after: 0, limit: 100, excluding: b.replica.replicaID).changeSets)
        let stable = try engine.versionVector()
        let forgetting = try engine.compactLog(stable: stable)
        #expect(forgetting.mergedState.forgottenObjects == 1 && forgetting.identifiersReleased == 0, "\(forgetting)")
        /// The identifiers and forgetting compactions remembered, or `nil` when their tables are gone.
        func remembered() throws -> (identifiers: Int, compactions: SQLValue?)? {
            try engine.replica.withConnection { connection in
                guard try ServerForgottenObjectTable.exists(on: connection) else { return nil }
                return (try ServerForgottenObjectTable.count(on: connection), try connection.rows("SELECT count(*) FROM _server_forgetting").first?.first)
            }
        }
        #expect(try #require(try remembered()) == (1, .integer(1)))

        // a forgets the folder too and says so; b has not reported: the identifier stays.
        let end = try engine.logEnd().cursor
        try a.replica.compactHistory(stable: stable)
        #expect(try a.replica.forgottenBelow() == stable)
        try engine.recordPull(by: a.replica.replicaID, after: end, unpushed: .none, forgotten: try a.replica.forgottenBelow())
        #expect(try engine.compactLog(stable: stable).identifiersReleased == 0)
        // b reports a vector below the compaction that forgot it: it stays.
        try engine.recordPull(by: b.replica.replicaID, after: end, unpushed: .none, forgotten: VersionVector([a.replica.replicaID: 1]))
        #expect(try engine.compactLog(stable: stable).identifiersReleased == 0)
        #expect(try remembered()?.identifiers == 1)
        // b compacts and reports: no active replica holds the folder, the identifier goes.
        try b.replica.compactHistory(stable: stable)
        try engine.recordPull(by: b.replica.replicaID, after: end, unpushed: .none, forgotten: try b.replica.forgottenBelow())
        #expect(try engine.compactLog(stable: stable).identifiersReleased == 1)
        // The last identifier gone, so are the tables: no page is kept for nothing.
        #expect(try remembered() == nil)

        // A new folder under the identifier is a new object everywhere the old one was forgotten.
        let c = try TestReplica(clock: clock, name: "c", entities: [Folder.self])
        let changeSets = try LogCompactionTests.createAFolder(doomed, by: c)
        _ = try engine.apply(changeSets, pushedBy: try c.replica.credentials())
        _ = try b.replica.apply(changeSets)
        #expect(try b.object(Folder.self, doomed).title == "again")
        #expect(try b.object(Folder.self, doomed).parent == nil)
    }

    /// A compaction that forgets no object leaves no table of forgotten identifiers behind.
    @Test func aCompactionThatForgetsNothingRemembersNothing() throws {
        let a = try TestReplica(clock: FakeClock(), name: "a", entities: [Folder.self])
        let engines = try Engines(schema: a.store.schemaDocument)
        let folder = Folder()
        folder.title = "kept"
        a.context.insert(folder)
        try a.context.save()
        try engines.push(from: a)
        let report = try engines.compacted.compactLog(stable: try engines.compacted.versionVector())
        #expect(report.entriesRemoved == 1 && report.mergedState.forgottenObjects == 0, "\(report)")
        #expect(try engines.compacted.replica.withConnection { try !ServerForgottenObjectTable.exists(on: $0) })
    }

    /// A dataset of sync format 7 remembers forgotten identifiers without the compaction that
    /// forgot them: opening it gives them one at the dataset's vector, which dominates their
    /// deletes, and they are released as any others.
    @Test func identifiersForgottenBeforeTheyNamedTheirCompactionAreReleasedLikeOthers() throws {
        let a = try TestReplica(clock: FakeClock(), name: "a", entities: [Folder.self])
        let engines = try Engines(schema: a.store.schemaDocument)
        _ = try LogCompactionTests.deleteAFolder(by: a, pushingTo: engines)
        let vector = try engines.compacted.versionVector()
        #expect(try engines.compacted.compactLog(stable: vector).mergedState.forgottenObjects == 1)
        let connection = try SQLiteConnection(path: engines.compactedFile.path)
        try connection.inTransaction {
            try connection.execute("""
                CREATE TABLE legacy (entity TEXT NOT NULL, id BLOB NOT NULL, PRIMARY KEY (entity, id)) WITHOUT ROWID;
                INSERT INTO legacy SELECT entity, id FROM _server_forgotten_object;
                DROP TABLE _server_forgotten_object; DROP TABLE _server_forgetting;
                ALTER TABLE legacy RENAME TO _server_forgotten_object;
                UPDATE _sync_format SET version = 7
                """)
        }

        let engine = try #require(try SQLiteDatasetEngine.open(at: engines.compactedFile.path))
        #expect(try connection.rows("SELECT forgetting, count(*) FROM _server_forgotten_object GROUP BY forgetting") == [[.integer(0), .integer(1)]])
        #expect(try connection.rows("SELECT number, stable FROM _server_forgetting") == [[.integer(0), .text(ReplicaRegistry.text(of: vector))]])
        try a.replica.compactHistory(stable: vector)
        try engine.recordPull(by: a.replica.replicaID, after: try engine.logEnd().cursor, unpushed: .none, forgotten: try a.replica.forgottenBelow())
        #expect(try engine.compactLog(stable: vector).identifiersReleased == 1)
        #expect(try !ServerForgottenObjectTable.exists(on: connection))
    }

    /// A dataset whose schema renames something keeps its merged state's history: an app on the
    /// older schema may still link an object deleted under the new name.
    @Test func aRenamingSchemaKeepsTheMergedStatesHistory() throws {
        let history = try history()
        let report = try history.engines.compacted.compactLog(stable: try history.engines.compacted.versionVector())
        #expect(report.entriesRemoved == 4 && report.mergedState.droppedRows == 0, "\(report)")
    }

    /// A journal that a syncd of an earlier release kept goes at the next compaction, and never
    /// into a snapshot: a client made from one starts with an empty journal.
    @Test func aJournalLeftByAnEarlierSyncdIsDroppedAndNeverInASnapshot() throws {
        let history = try history()
        let engine = history.engines.compacted
        var batch = JournalBatch()
        let write = Stamp(hlc: history.b1.hlc, replica: history.b1.dot.replica, seq: history.b1.dot.seq)
        try batch.append(.attribute, entity: "Member", object: UUID(), property: "name", winner: nil,
                         loser: JournalSide(value: .json("\"Bo\""), stamp: write), cause: history.b1.dot, detail: .text("an entry"))
        try engine.replica.withConnection { try ConflictJournal.write(batch, on: $0) }
        #expect(try engine.replica.conflictCount() == 1)
        let snapshotFile = TemporaryStoreFile(prefix: "snapshot-journal")
        _ = try engine.writeSnapshot(to: snapshotFile.path)
        try SyncReplica.adoptSnapshot(at: snapshotFile.path)
        let client = try SyncReplica(store: try ObjectStore(path: snapshotFile.path, entities: syncEntities))
        #expect(try client.conflictCount() == 0)
        let report = try engine.compactLog(stable: try engine.versionVector())
        #expect(report.journalEntriesRemoved == 1, "\(report)")
        #expect(try engine.replica.conflictCount() == 0)
    }
}

import Foundation
import Testing
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport

/// The digest an engine hands out with each cursor names the log up to it, so a log restored
/// from a backup is told apart from the one a client pulled even where both hold the same dot.
@Suite struct LogDigestTests {
    /// One replica with one change set, creating a team named `name`.
    private static func author(_ name: String) throws -> (author: TestReplica, changeSet: ChangeSet) {
        let author = try TestReplica(name: name)
        let team = Team()
        team.name = name
        author.context.insert(team)
        try author.context.save()
        return (author, try #require(author.replica.changeSets(missingFrom: VersionVector()).first))
    }

    /// An engine in a temporary file that logged `changeSets` one push each, in this order.
    private static func engine(logging changeSets: [(author: TestReplica, changeSet: ChangeSet)], file: TemporaryStoreFile) throws -> SQLiteDatasetEngine {
        let engine = try SQLiteDatasetEngine.create(at: file.path, schema: changeSets[0].author.store.schemaDocument)
        for (author, changeSet) in changeSets { _ = try engine.apply([changeSet], pushedBy: try author.replica.credentials()) }
        return engine
    }

    @Test func aCursorIsRefusedWhenTheLogBeforeItDiffersEvenIfItsEntryHoldsTheSameDot() throws {
        let a = try LogDigestTests.author("a"), b = try LogDigestTests.author("b"), c = try LogDigestTests.author("c"), d = try LogDigestTests.author("d")
        let originalFile = TemporaryStoreFile(prefix: "original"), restoredFile = TemporaryStoreFile(prefix: "restored")
        let original = try LogDigestTests.engine(logging: [a, b, c], file: originalFile)
        // Restored from a backup holding `a`: `d` pushes first, then `c`'s change set is re-sent
        // and lands at the cursor it had before; `b`'s is lost.
        let restored = try LogDigestTests.engine(logging: [a, d, c], file: restoredFile)

        let pulled = try original.readLog(after: 0, limit: 3, excluding: nil)
        #expect(pulled.cursor == 3 && pulled.digest == LogDigest.empty.appending(a.changeSet.dot).appending(b.changeSet.dot).appending(c.changeSet.dot))
        #expect(try restored.readLog(after: 3, limit: 1, excluding: nil).changeSets.isEmpty)
        #expect(throws: DatasetEngineError.cursorMismatch(3)) { try restored.readLog(after: 3, digest: pulled.digest, limit: 5, excluding: nil) }

        // Up to the backup both logs are the same, and so are their digests.
        let first = try original.readLog(after: 0, limit: 1, excluding: nil)
        let fromBackup = try restored.readLog(after: 1, digest: first.digest, limit: 5, excluding: nil)
        #expect(fromBackup.changeSets.map(\.dot) == [d.changeSet.dot, c.changeSet.dot] && fromBackup.digest != pulled.digest)
        let atEnd = try original.readLog(after: 3, digest: pulled.digest, limit: 5, excluding: nil)
        #expect(atEnd.changeSets.isEmpty && atEnd.cursor == 3 && atEnd.digest == pulled.digest)
        #expect(try original.readLog(after: 0, digest: .empty, limit: 1, excluding: nil).digest == first.digest)
    }

    @Test func aLogWrittenWithoutDigestsGetsThemWhenOpened() throws {
        let a = try LogDigestTests.author("a"), b = try LogDigestTests.author("b")
        let file = TemporaryStoreFile(prefix: "engine")
        let expected = try LogDigestTests.engine(logging: [a, b], file: file).readLog(after: 0, limit: 5, excluding: nil).digest
        try SQLiteConnection(path: file.path).execute("ALTER TABLE _server_log DROP COLUMN digest")

        let reopened = try #require(try SQLiteDatasetEngine.open(at: file.path))
        #expect(try reopened.readLog(after: 2, digest: expected, limit: 5, excluding: nil).digest == expected)
        let c = try LogDigestTests.author("c")
        let pushed = try reopened.apply([c.changeSet], pushedBy: try c.author.replica.credentials())
        #expect(pushed.cursor == 3 && pushed.digest == expected.appending(c.changeSet.dot))
    }

    @Test func digestsTravelAs32HexDigits() throws {
        let digest = LogDigest.empty.appending(Dot(replica: UUID(), seq: 1))
        #expect(digest.description.count == 32 && LogDigest(hex: digest.description) == digest)
        #expect(LogDigest(hex: digest.description.uppercased()) == digest)
        for malformed in ["", "0", String(repeating: "g", count: 32), String(repeating: "0", count: 64)] { #expect(LogDigest(hex: malformed) == nil) }
    }
}

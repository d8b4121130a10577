import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The schema of Sources/SyncCrashHelper/main.swift: both must stay identical.
@Entity final class CrashBook {
    var title: String = ""
    @Relationship(inverse: "book", deleteRule: .cascade) var notes: [CrashNote] = []
}

@Entity final class CrashNote {
    var index: Int = 0
    var text: String = ""
    @Relationship(inverse: "notes", deleteRule: .nullify) var book: CrashBook?
}

private let crashEntities: [any PersistentEntity.Type] = [CrashBook.self, CrashNote.self]

/// "Nothing a replica committed is dropped because of a crash": the SyncCrashHelper child
/// process is killed with SIGKILL right after reporting commits (before their ack) and in the
/// middle of a merge; the store it leaves must have every reported change set, exactly once.
@Suite(.serialized) struct CrashSafetyTests {
    // MARK: Killed between commit and ack

    @Test(.timeLimit(.minutes(3)))
    func killedBetweenCommitAndAckLosesNoChangeSetAndReusesNoSeq() throws {
        let path = temporaryStorePath("saves")
        defer { TemporaryStoreFile.remove(path) }
        var reported: Set<UInt64> = []
        var acknowledged: Set<UInt64> = []
        // Two runs of the helper on the same store, each killed after some commits.
        for commitsBeforeKill in [12, 25] {
            let child = try HelperProcess(["save", path, "100000"])
            var seen = 0
            while seen < commitsBeforeKill {
                let line = try #require(try child.readLine(timeout: 60), "the helper exited early: \(child.stderrText())")
                let words = line.split(separator: " ")
                guard words.count == 2, let seq = UInt64(words[1]) else { continue }
                switch words[0] {
                case "commit":
                    #expect(!reported.contains(seq), "seq \(seq) was committed twice")
                    reported.insert(seq)
                    seen += 1
                case "ack": acknowledged.insert(seq)
                default: break
                }
            }
            child.kill()
        }
        #expect(reported.count == 37)

        // Restart: reopen the store in this process, with a wall clock far in the past.
        let store = try ObjectStore(path: path, entities: crashEntities)
        let replica = try SyncReplica(store: store, wallClock: { 1 })
        let me = replica.replicaID
        let last = try replica.versionVector()[me]
        #expect(last >= reported.max()!, "the vector (\(last)) is behind a reported commit (\(reported.max()!))")

        // Every committed change set is in the outbox exactly once, in some status, with no gap.
        let outbox = try [OutboxStatus.pending, .sent, .acknowledged].flatMap { try replica.localChangeSets(status: $0) }
        #expect(outbox.map(\.dot.seq).sorted() == Array(1...last))
        #expect(Set(try replica.changeSets(missingFrom: VersionVector()).map(\.dot)) == Set((1...last).map { Dot(replica: me, seq: $0) }))
        let acked = Set(try replica.localChangeSets(status: .acknowledged).map(\.dot.seq))
        #expect(acknowledged.isSubset(of: acked), "acknowledged \(acknowledged.subtracting(acked).sorted()) came back unacknowledged")
        #expect(try rowCount("SELECT count(*) FROM _sync_changeset", path) == Int64(last))
        let hlcs = outbox.sorted { $0.dot.seq < $1.dot.seq }.map(\.hlc)
        #expect(hlcs == hlcs.sorted() && Set(hlcs).count == hlcs.count, "HLCs do not increase with seq")

        // The entity tables hold exactly what the change sets say.
        let context = try store.makeContext()
        let book = try #require(try context.fetchAll(CrashBook.self).first)
        #expect(try context.fetchAll(CrashBook.self).count == 1)
        #expect(book.notes.map(\.index) == Array(1...Int(last)))
        #expect(book.title == "after \(last)")
        let replay = try freshReplica("replay")
        defer { TemporaryStoreFile.remove(replay.store.path) }
        _ = try replay.replica.apply(try replica.changeSets(missingFrom: VersionVector()))
        #expect(try entityDigest(replay.store.path) == entityDigest(path))

        // The next save continues the seq and the HLC, even though the wall clock went back.
        let note = CrashNote()
        note.index = Int(last) + 1
        book.addToNotes(note)
        try context.save()
        let next = try #require(try replica.localChangeSets(status: .pending).last)
        #expect(next.dot == Dot(replica: me, seq: last + 1))
        #expect(next.hlc > hlcs.last!)
        #expect(try replica.versionVector()[me] == last + 1)
    }

    // MARK: Killed during a merge

    @Test(.timeLimit(.minutes(5)))
    func killedDuringAMergeAppliesEachChangeSetExactlyOnce() throws {
        let batchPath = temporaryStorePath("batch") + ".json"
        defer { try? FileManager.default.removeItem(atPath: batchPath) }
        let (changeSets, author) = largeBatch(changeSets: 1_500)
        try ChangeSetCoding.encode(changeSets, base: VersionVector()).write(to: URL(fileURLWithPath: batchPath))

        // What a merge that was never interrupted gives.
        let reference = try freshReplica("reference")
        defer { TemporaryStoreFile.remove(reference.store.path) }
        let started = Date()
        #expect(try reference.replica.apply(changeSets).applied.count == changeSets.count)
        let applyTime = Date().timeIntervalSince(started)

        var interrupted = 0
        // Kill at several moments after the merge started; at least one must land inside it.
        for fraction in [0.3, 0.1, 0.6, 0.02] {
            let path = temporaryStorePath("merge")
            defer { TemporaryStoreFile.remove(path) }
            // The receiver has a change set of its own, which must survive the crash too.
            let ownID: UUID
            do {
                let receiver = try freshReplica("receiver", path: path)
                let context = try receiver.store.makeContext()
                let own = CrashBook()
                own.title = "own"
                context.insert(own)
                try context.save()
                ownID = own.objectID
            }
            let child = try HelperProcess(["apply", path, batchPath])
            let first = try #require(try child.readLine(timeout: 60), "the helper exited early: \(child.stderrText())")
            #expect(first == "applying \(changeSets.count)")
            usleep(UInt32(max(1_000, applyTime * fraction * 1_000_000)))
            child.kill()

            // Restart: the merge happened completely or not at all.
            let restarted = try freshReplica("restarted", path: path)
            let vector = try restarted.replica.versionVector()
            #expect(vector[author] == 0 || vector[author] == UInt64(changeSets.count), "a half-applied merge: \(vector[author])")
            if vector[author] == 0 { interrupted += 1 }
            #expect(try rowCount("SELECT count(*) FROM _sync_changeset WHERE hex(replica) = '\(author.uuidString.replacingOccurrences(of: "-", with: ""))'", path) == Int64(vector[author]))

            // Applying the same batch again applies each change set exactly once.
            let result = try restarted.replica.apply(changeSets)
            #expect(result.applied.count + result.alreadyApplied.count == changeSets.count)
            #expect(Set(result.applied).isDisjoint(with: Set(result.alreadyApplied)))
            #expect(try restarted.replica.apply(changeSets).applied.isEmpty)
            #expect(try rowCount("SELECT count(*) FROM _sync_changeset WHERE hex(replica) = '\(author.uuidString.replacingOccurrences(of: "-", with: ""))'", path) == Int64(changeSets.count))
            #expect(try rowCount("SELECT count(*) FROM (SELECT replica, seq FROM _sync_changeset GROUP BY replica, seq HAVING count(*) > 1)", path) == 0)
            #expect(try restarted.replica.versionVector()[author] == UInt64(changeSets.count))
            #expect(try restarted.replica.versionVector()[restarted.replica.replicaID] == 1)
            #expect(try restarted.replica.localChangeSets(status: .pending).map(\.dot.seq) == [1])

            // The entity tables match the change sets: the reference plus the receiver's own book.
            let merged = try entityDigest(path).filter { !$0.contains(ownID.uuidString) }
            #expect(merged == (try entityDigest(reference.store.path)))
            #expect(try entityDigest(path).count == entityDigest(reference.store.path).count + 1)
        }
        #expect(interrupted > 0, "no kill landed inside the merge (it took \(applyTime)s in process)")
    }

    // MARK: Support

    /// `count` change sets by one new author: a book, then one note per change set, appended, with the title rewritten.
    private func largeBatch(changeSets count: Int) -> ([ChangeSet], ReplicaID) {
        let author = UUID()
        let book = UUID()
        var result: [ChangeSet] = []
        let keys = PositionKey.keys(count: count, between: nil, nil)
        for seq in 1...count {
            let note = UUID()
            var operations: [SyncKit.Operation] = []
            if seq == 1 { operations.append(.create(entity: "CrashBook", id: book)) }
            let text = String(repeating: "note \(seq) ", count: 8)
            operations += [
                .create(entity: "CrashNote", id: note),
                .set(entity: "CrashNote", id: note, attribute: "index", values: [.integer(Int64(seq))]),
                .set(entity: "CrashNote", id: note, attribute: "text", values: [.text(text)]),
                .set(entity: "CrashBook", id: book, attribute: "title", values: [.text("after \(seq)")]),
                .link(entity: "CrashNote", id: note, relationship: "book", target: book),
                .position(entity: "CrashBook", id: book, relationship: "notes", member: note, key: keys[seq - 1]),
            ]
            result.append(ChangeSet(dot: Dot(replica: author, seq: UInt64(seq)), hlc: HLC(milliseconds: 1_700_000_000_000 + UInt64(seq), counter: 0),
                                    vector: VersionVector([author: UInt64(seq)]), operations: operations))
        }
        return (result, author)
    }

    private struct Replica {
        let store: ObjectStore
        let replica: SyncReplica
    }

    private func freshReplica(_ name: String, path: String? = nil) throws -> Replica {
        let store = try ObjectStore(path: path ?? temporaryStorePath(name), entities: crashEntities)
        return Replica(store: store, replica: try SyncReplica(store: store))
    }

    private func temporaryStorePath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("crash-\(name)-\(UUID().uuidString).sqlite").path
    }

    private func rowCount(_ sql: String, _ path: String) throws -> Int64 {
        let connection = try SQLiteConnection(path: path)
        guard case .integer(let count)? = try connection.rows(sql).first?.first else { return -1 }
        return count
    }

    /// The entity tables, row by row, sorted.
    private func entityDigest(_ path: String) throws -> [String] {
        let connection = try SQLiteConnection(path: path)
        var lines: [String] = []
        for table in ["CrashBook", "CrashNote"] {
            for row in try connection.rows("SELECT * FROM \"\(table)\"") {
                lines.append(table + ": " + row.map(\.description).joined(separator: " | "))
            }
        }
        return lines.sorted()
    }
}

/// The SyncCrashHelper executable, run as a child process whose stdout is read line by line with timeouts.
final class HelperProcess {
    private let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private var buffer = Data()
    private var reachedEnd = false

    init(_ arguments: [String]) throws {
        process.executableURL = try BuiltProduct.url(named: "SyncCrashHelper", override: "SYNC_CRASH_HELPER")
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    deinit {
        if process.isRunning { kill() }
    }

    /// The next line of output, `nil` when the helper closed its output; throws after `timeout` seconds.
    func readLine(timeout: TimeInterval) throws -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            if reachedEnd { return nil }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else {
                kill()
                throw HelperError("no output from SyncCrashHelper for \(timeout)s")
            }
            try fill(waitingMilliseconds: Int32(min(remaining, 1) * 1_000))
        }
    }

    private func fill(waitingMilliseconds: Int32) throws {
        var descriptor = pollfd(fd: output.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, waitingMilliseconds) > 0 else { return }
        var bytes = [UInt8](repeating: 0, count: 4_096)
        let count = read(descriptor.fd, &bytes, bytes.count)
        if count <= 0 { reachedEnd = true } else { buffer.append(contentsOf: bytes[0..<count]) }
    }

    /// SIGKILL, then wait for the process to be gone.
    func kill() {
        guard process.isRunning else { return }
        #if canImport(Glibc)
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        #else
        _ = Darwin.kill(process.processIdentifier, SIGKILL)
        #endif
        process.waitUntilExit()
    }

    func stderrText() -> String {
        kill()
        return String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }
}

struct HelperError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

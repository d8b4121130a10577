import Codecs
import Foundation
@testable import SyncServer
import Synchronization
import Testing

/// Commits of one upload run one at a time: a retry that arrives while the first still merges
/// waits for it and answers its recorded result, and the push runs once.
@Suite struct UploadCommitSerializationTests {
    @Test func concurrentCommitsOfOneUploadPushOnceAndAnswerTheSameResult() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("commit-serialization-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let staging = TransferStaging(path: directory.appendingPathComponent("staging.sqlite").path,
                                      lifetimeMilliseconds: 60_000, clock: { 1_000 })
        let body = Data("a body of one part".utf8)
        let upload = try staging.createUpload(totalBytes: Int64(body.count), sha256: LowercaseHex.encode(SHA256.hash(body)))
        try staging.storePart(1, of: upload.id, bytes: body, sha256: LowercaseHex.encode(SHA256.hash(body)))

        let tally = Tally()
        let answers = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try staging.commit(upload.id) {
                        tally.enter()
                        Thread.sleep(forTimeInterval: 0.02)
                        return Data("push \(tally.leave())".utf8)
                    }
                }
            }
            return try await group.reduce(into: [Data]()) { $0.append($1) }
        }
        #expect(tally.counts.withLock { $0.pushes } == 1)
        #expect(tally.counts.withLock { $0.mostInside } == 1)
        #expect(Set(answers) == [Data("push 1".utf8)])
        #expect(try staging.upload(upload.id).result == Data("push 1".utf8))
    }

    /// How many pushes run now, at most at once, and in all.
    final class Tally: Sendable {
        let counts = Mutex((inside: 0, mostInside: 0, pushes: 0))

        func enter() {
            counts.withLock { counts in
                counts.inside += 1
                counts.mostInside = max(counts.mostInside, counts.inside)
            }
        }

        /// Leaves, and returns the number of this push.
        func leave() -> Int {
            counts.withLock { counts in
                counts.inside -= 1
                counts.pushes += 1
                return counts.pushes
            }
        }
    }
}

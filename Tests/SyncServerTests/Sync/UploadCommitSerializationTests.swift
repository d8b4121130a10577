import Foundation
@testable import SyncServer
import Synchronization
import Testing

/// Commits of one upload run one at a time (a retry waits for the first and answers its result);
/// commits of other uploads wait for their own upload only.
@Suite struct UploadCommitSerializationTests {
    @Test func workForOneKeyNeverOverlaps() async {
        let serialization = KeyedSerialization()
        let tally = Tally()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<16 {
                let key = index % 2 == 0 ? "dataset/one" : "dataset/two"
                group.addTask {
                    serialization.serializing(key) {
                        tally.enter(key)
                        Thread.sleep(forTimeInterval: 0.01)
                        tally.leave(key)
                    }
                }
            }
        }
        #expect(tally.mostInside.withLock { $0 } == ["dataset/one": 1, "dataset/two": 1])
    }

    /// How many run inside each key now, and at most.
    final class Tally: Sendable {
        let inside = Mutex<[String: Int]>([:])
        let mostInside = Mutex<[String: Int]>([:])

        func enter(_ key: String) {
            let now = inside.withLock { counts in
                counts[key, default: 0] += 1
                return counts[key]!
            }
            mostInside.withLock { $0[key] = max($0[key] ?? 0, now) }
        }

        func leave(_ key: String) {
            inside.withLock { $0[key, default: 0] -= 1 }
        }
    }
}

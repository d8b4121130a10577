import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import SyncEngine
import Synchronization
import Testing
import TestSupport

/// A client handed a `URLSession` cancels its requests when its sync is cancelled
/// (`SyncClient.stop()`): at any moment, before the request starts, while it waits, or just as
/// the response arrives, the request ends and nothing waits forever (see ``URLSessionRequest``).
@Suite struct URLSessionCancellationTests {
    /// How the requests of one run ended.
    struct Outcomes {
        var responded = 0
        var cancelled = 0
        var unexpected: [String] = []
    }

    @Test func cancellingARequestAtAnyMomentEndsIt() async throws {
        let server = FakeSyncServer()
        try server.start()
        defer { server.stop() }
        let session = URLSession(configuration: .ephemeral)
        let request = URLRequest(url: server.url.appendingPathComponent("v1/datasets/test/changesets"))
        let iterations = 500
        let outcomes = Mutex(Outcomes())
        let finished = Atomic<Int>(0)
        // Unstructured, and awaited with a deadline: a deadlocked request must fail the test, not hang it.
        let requests = Task {
            var random = SeededGenerator(seed: 5412)
            for iteration in 0..<iterations {
                // Every tenth request is given time to get its answer; the others are cancelled
                // somewhere between not started yet and answered.
                let wait: Duration = iteration % 10 == 0 ? .milliseconds(100) : .microseconds(Int.random(in: 0..<3_000, using: &random))
                let task = Task { try await URLSessionRequest.send(request, in: session) }
                if wait > .microseconds(100) { try? await Task.sleep(for: wait) }
                task.cancel()
                let result = await task.result
                outcomes.withLock { outcomes in
                    switch result {
                    case .success: outcomes.responded += 1
                    case .failure(let error as URLError) where error.code == .cancelled: outcomes.cancelled += 1
                    case .failure(is CancellationError): outcomes.cancelled += 1
                    case .failure(let error): outcomes.unexpected.append("request \(iteration): \(error)")
                    }
                }
                finished.add(1, ordering: .relaxed)
            }
        }
        // A hang is a request that never ends: no progress for a minute, however slow the machine.
        let ended = await finishes(requests, unlessStalledFor: .seconds(60)) { finished.load(ordering: .relaxed) }
        #expect(ended, "only \(finished.load(ordering: .relaxed)) of \(iterations) cancelled requests ended: one waits forever")
        let result = outcomes.withLock { $0 }
        #expect(result.unexpected.isEmpty, "\(result.unexpected)")
        // Every tenth request waits 100 ms for its answer; a loaded machine answers fewer in time.
        #expect(result.responded > 0, "no request was answered")
        #expect(result.cancelled > 0, "no request was cancelled")
    }

    /// Whether `task` finishes before `progress` stops growing for `stall`; if not, it is left running.
    private func finishes(_ task: Task<Void, Never>, unlessStalledFor stall: Duration,
                          progress: @escaping @Sendable () -> Int) async -> Bool {
        let answer = FirstAnswer()
        return await withCheckedContinuation { continuation in
            Task {
                await task.value
                if answer.claim() { continuation.resume(returning: true) }
            }
            Task {
                var last = progress()
                while true {
                    try? await Task.sleep(for: stall)
                    let now = progress()
                    if now == last { break }
                    last = now
                }
                if answer.claim() { continuation.resume(returning: false) }
            }
        }
    }

    /// Lets only the first of several racing answers through.
    private final class FirstAnswer: Sendable {
        private let answered = Mutex(false)

        func claim() -> Bool {
            answered.withLock { answered in
                defer { answered = true }
                return !answered
            }
        }
    }
}

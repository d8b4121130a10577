import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends one request through a `URLSession` an app handed the client, so that cancelling the
/// calling task ends the wait at once and can neither deadlock nor crash.
///
/// FoundationNetworking's `URLSession.data(for:)` cancels its `URLSessionTask` from the
/// cancellation handler, which runs while the Swift task's status lock is held, and waits there
/// for the session's queue; the session's queue meanwhile resumes the same Swift task when a
/// response arrives, which needs that lock, and both wait forever (swift-corelibs-foundation
/// issue 5412). Cancelling the `URLSessionTask` from elsewhere is no cure: a cancel that meets
/// the task's completion stops the process ("a task that is not in the registry").
/// `SyncClient.stop()` cancels an in-flight sync, so a stopping client met both.
///
/// So the `URLSessionTask` is never cancelled: a cancelled caller stops waiting at once and the
/// request finishes, or times out (`SyncClient.Configuration.requestTimeout`), on its own, its
/// answer dropped. That is what a cancel that comes after the request was sent does anyway, and
/// the protocol is built for it: a push the server committed is recognized when it comes again.
enum URLSessionRequest {
    /// Whether someone still waits for the answer.
    private enum State: @unchecked Sendable {
        case notStarted
        case waiting(CheckedContinuation<(Data, URLResponse), any Error>)
        case finished
    }

    /// `session.data(for: request)`; throws `CancellationError` as soon as the calling task is cancelled.
    static func send(_ request: URLRequest, in session: URLSession) async throws -> (Data, URLResponse) {
        let state = Mutex<State>(.notStarted)
        // Hands the continuation to whoever comes first: the answer or the cancellation.
        let takeWaiter: @Sendable () -> CheckedContinuation<(Data, URLResponse), any Error>? = {
            state.withLock { state in
                defer { state = .finished }
                if case .waiting(let continuation) = state { return continuation }
                return nil
            }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let waits = state.withLock { state -> Bool in
                    guard case .notStarted = state else { return false }
                    state = .waiting(continuation)
                    return true
                }
                guard waits else {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                session.dataTask(with: request) { data, response, error in
                    guard let waiter = takeWaiter() else { return }
                    if let error {
                        waiter.resume(throwing: error)
                    } else if let response {
                        waiter.resume(returning: (data ?? Data(), response))
                    } else {
                        waiter.resume(throwing: URLError(.badServerResponse))
                    }
                }.resume()
            }
        } onCancel: {
            takeWaiter()?.resume(throwing: CancellationError())
        }
    }
}

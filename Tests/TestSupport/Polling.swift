import Foundation

/// Polls `condition` every 10 ms until it holds or `timeout` seconds pass; returns whether it held.
public func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return condition()
}

/// ``waitUntil(timeout:_:)`` for async tests: polls with `Task.sleep`, so the wait does not hold
/// one of the concurrency pool's threads, which the work being waited for may need.
public func eventually(timeout: Double, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

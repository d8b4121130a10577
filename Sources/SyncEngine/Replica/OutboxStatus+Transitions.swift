import Codecs
import Foundation
import LocalStoreCore

extension OutboxStatus {
    /// The status a local change set in this one takes when marked `next`: the outbox only moves
    /// forward, `pending` → `sent` → `acknowledged`.
    ///
    /// - `pending` may become `sent`, or `acknowledged` at once (a resend of what the server lacks).
    /// - `sent` may be sent again (its push was never answered) or become `acknowledged`.
    /// - `acknowledged` stays so: acknowledging it again (a server restored from a backup stored
    ///   it a second time) changes nothing.
    /// - Nothing returns to `pending` or becomes `remote`, and `remote` change sets (other
    ///   replicas') are not in the outbox.
    ///
    /// - Throws: ``SyncError`` `.invalidOutboxTransition` naming the change set and both statuses.
    public func moving(to next: OutboxStatus, changeSet dot: Dot) throws -> OutboxStatus {
        switch (self, next) {
        case (.pending, .sent), (.pending, .acknowledged), (.sent, .sent), (.sent, .acknowledged), (.acknowledged, .acknowledged):
            return next
        case (.remote, _):
            throw SyncError(.invalidOutboxTransition, "change set \(dot) came from another replica: it is not in the outbox and cannot become \(next.rawValue)")
        case (_, .pending), (_, .remote):
            throw SyncError(.invalidOutboxTransition, "change set \(dot) is \(rawValue): no change set becomes \(next.rawValue) again")
        case (.acknowledged, _):
            throw SyncError(.invalidOutboxTransition, "change set \(dot) is already acknowledged by the server: it cannot become \(next.rawValue)")
        }
    }
}

/// The counter rule for the `increment`s of one `.counter` attribute: what the counter shows and
/// keeps after each, and when it saturates, decided from what is known of it before. It reads
/// and writes nothing: ``MergeEngine`` reads the counter, asks, and writes the outcome
/// (`MergeEngine+Policies.swift`), for a merged increment as for a local save's.
///
/// The rule (CONTRACT.md §3.9):
/// - The exact total is the creation's value plus every applied change set's delta. Addition
///   commutes and a change set applies once, so every replica reaches the same total in any order.
/// - The row shows the total clamped to the column's range. While the total is outside it, the
///   exact total is kept beside the row (`_sync_counter`), so that later increments count from it
///   and bring the counter back exactly.
/// - The increment that takes the counter out of its range is journaled (`counter_saturated`);
///   increments while it stays out are not.
struct CounterResolver {
    /// What a counter holds between increments.
    struct Counter: Equatable {
        /// The value its row shows.
        var shown: Int64
        /// The exact total while it is outside the column's range; `nil` while the row shows it.
        var saturatedTotal: Int128?

        /// The exact total: the shown value unless the counter is saturated.
        var total: Int128 { saturatedTotal ?? Int128(shown) }
    }

    /// What one increment comes to.
    struct Outcome: Equatable {
        /// The counter after it.
        var counter: Counter
        /// The exact total after it, inside the range or not.
        var total: Int128
        /// Whether it took the counter out of its range: the journal gets a `counter_saturated` entry.
        var saturates: Bool
    }

    /// The values the counter's column can show.
    var range: ClosedRange<Int128>

    /// Adds `delta` to `counter`.
    func adding(_ delta: Int64, to counter: Counter) -> Outcome {
        let total = counter.total + Int128(delta)
        let clamped = Swift.min(Swift.max(total, range.lowerBound), range.upperBound)
        let after = Counter(shown: Int64(clamped), saturatedTotal: clamped == total ? nil : total)
        return Outcome(counter: after, total: total, saturates: after.saturatedTotal != nil && counter.saturatedTotal == nil)
    }
}

import Foundation
@testable import SyncEngine
import Testing

/// The counter rule on its own (`CounterResolver`), without a store: a counter and deltas in,
/// what it shows, keeps and journals out. The same rule through real merges, in both exchange
/// orders, is in `ResolutionTableMergePolicyTests.swift`.
@Suite struct CounterResolverTests {
    typealias Counter = CounterResolver.Counter

    static let int16 = CounterResolver(range: Int128(Int16.min)...Int128(Int16.max))
    static let int64 = CounterResolver(range: Int128(Int64.min)...Int128(Int64.max))

    /// Applies `deltas` in order, returning the counter and how many increments saturated it.
    static func adding(_ deltas: [Int64], to counter: Counter, by resolver: CounterResolver) -> (Counter, saturations: Int) {
        var counter = counter, saturations = 0
        for delta in deltas {
            let outcome = resolver.adding(delta, to: counter)
            counter = outcome.counter
            if outcome.saturates { saturations += 1 }
        }
        return (counter, saturations)
    }

    @Test func anIncrementInsideTheRangeShowsTheSum() {
        let outcome = Self.int16.adding(-7, to: Counter(shown: 100))
        #expect(outcome == CounterResolver.Outcome(counter: Counter(shown: 93), total: 93, saturates: false))
    }

    @Test func anIncrementPastTheRangeShowsItsBoundKeepsTheTotalAndSaturates() {
        let outcome = Self.int16.adding(10, to: Counter(shown: 32_760))
        #expect(outcome == CounterResolver.Outcome(counter: Counter(shown: 32_767, saturatedTotal: 32_770), total: 32_770, saturates: true))
        let below = Self.int16.adding(-10, to: Counter(shown: -32_760))
        #expect(below.counter == Counter(shown: -32_768, saturatedTotal: -32_770) && below.saturates)
    }

    @Test func incrementsWhileSaturatedCountFromTheExactTotalWithoutAnotherEntry() {
        let outcome = Self.int16.adding(5, to: Counter(shown: 32_767, saturatedTotal: 32_770))
        #expect(outcome == CounterResolver.Outcome(counter: Counter(shown: 32_767, saturatedTotal: 32_775), total: 32_775, saturates: false))
    }

    @Test func anIncrementThatBringsTheTotalBackShowsItExactly() {
        // Shown 32,767 but the total is 32,770: -5 gives 32,765, not 32,762.
        let outcome = Self.int16.adding(-5, to: Counter(shown: 32_767, saturatedTotal: 32_770))
        #expect(outcome == CounterResolver.Outcome(counter: Counter(shown: 32_765), total: 32_765, saturates: false))
    }

    @Test func aSixtyFourBitCounterKeepsATotalNoInt64Holds() {
        let outcome = Self.int64.adding(Int64.max, to: Counter(shown: Int64.max))
        #expect(outcome.counter == Counter(shown: Int64.max, saturatedTotal: Int128(Int64.max) * 2) && outcome.saturates)
        let back = Self.int64.adding(Int64.min, to: outcome.counter)
        #expect(back.counter == Counter(shown: Int64.max - 1))
    }

    /// Addition commutes: every order of the same deltas ends with the same counter, in range or not.
    @Test func everyOrderOfTheSameDeltasEndsAlike() {
        let deltas: [Int64] = [30_000, 5_000, -40_000, 12_000]
        var ends: Set<String> = []
        for order in Self.permutations(of: deltas) {
            let (counter, _) = Self.adding(order, to: Counter(shown: 100), by: Self.int16)
            ends.insert("\(counter.shown) \(counter.saturatedTotal.map(String.init) ?? "-")")
        }
        #expect(ends == ["7100 -"])
        let (saturated, saturations) = Self.adding([30_000, 5_000], to: Counter(shown: 100), by: Self.int16)
        #expect(saturated == Counter(shown: 32_767, saturatedTotal: 35_100) && saturations == 1)
    }

    static func permutations(of values: [Int64]) -> [[Int64]] {
        guard let first = values.first else { return [[]] }
        return permutations(of: Array(values.dropFirst())).flatMap { rest in
            (0...rest.count).map { index in var order = rest; order.insert(first, at: index); return order }
        }
    }
}

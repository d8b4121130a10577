import Foundation
import LocalStoreCore
@testable import SyncEngine
import Testing

/// The merge policies' rule on its own (`MergePolicyResolver`), without a store: the current and
/// incoming values in, the merged value out, in both orders. The same rule through real merges
/// is in `ResolutionTableMergePolicyTests.swift`.
@Suite struct MergePolicyResolverTests {
    static func attribute(_ policy: AttributeMergePolicy.Kind, merge: (@Sendable ([SQLValue], [SQLValue]) -> [SQLValue]?)? = nil) -> SyncSchema.Attribute {
        SyncSchema.Attribute(name: "score", columns: ["score"], firstColumnOffset: 0, policy: policy, customMerge: merge)
    }

    @Test func maxAndMinKeepTheExtremeInEitherOrderWhicheverStampIsLarger() {
        let low: [SQLValue] = [.integer(3)], high: [SQLValue] = [.integer(9)]
        for incomingWinsTie in [false, true] {
            #expect(MergePolicyResolver.merged(low, high, by: Self.attribute(.max), incomingWinsTie: incomingWinsTie) == high)
            #expect(MergePolicyResolver.merged(high, low, by: Self.attribute(.max), incomingWinsTie: incomingWinsTie) == high)
            #expect(MergePolicyResolver.merged(low, high, by: Self.attribute(.min), incomingWinsTie: incomingWinsTie) == low)
            #expect(MergePolicyResolver.merged(high, low, by: Self.attribute(.min), incomingWinsTie: incomingWinsTie) == low)
        }
        // SQLite's order: NULL before numbers before text.
        #expect(MergePolicyResolver.merged([.text("a")], [.integer(100)], by: Self.attribute(.max), incomingWinsTie: true) == [.text("a")])
        #expect(MergePolicyResolver.merged([.null], [.integer(-5)], by: Self.attribute(.min), incomingWinsTie: true) == [.null])
    }

    @Test func aCustomMergeJoinsAndFallsBackToTheLargerStampWhenItCannotReadTheValues() {
        let union = Self.attribute(.custom) { current, incoming in
            guard case .text(let left)? = current.first, case .text(let right)? = incoming.first else { return nil }
            return [.text(String(Set(left + right).sorted()))]
        }
        #expect(MergePolicyResolver.merged([.text("ab")], [.text("bc")], by: union, incomingWinsTie: false) == [.text("abc")])
        #expect(MergePolicyResolver.merged([.text("ab")], [.integer(1)], by: union, incomingWinsTie: true) == [.integer(1)])
        #expect(MergePolicyResolver.merged([.text("ab")], [.integer(1)], by: union, incomingWinsTie: false) == [.text("ab")])
        // Without the Swift type (syncd, the CLI), a custom attribute merges by the larger stamp.
        #expect(MergePolicyResolver.merged([.text("ab")], [.text("bc")], by: Self.attribute(.custom), incomingWinsTie: true) == [.text("bc")])
    }
}

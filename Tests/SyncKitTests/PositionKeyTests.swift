import Testing
@testable import SyncEngine

/// Position keys between neighbours, including neighbours another replica wrote that leave no
/// room between them.
@Suite(.timeLimit(.minutes(1))) struct PositionKeyTests {
    @Test(arguments: [
        (nil, nil), ("V", nil), (nil, "V"), ("A", "B"), ("A", "A1"), ("Az", "B"), ("zzz", nil), ("0001", "0002"),
    ] as [(String?, String?)])
    func aKeyFallsStrictlyBetweenItsNeighbours(lower: String?, upper: String?) {
        let key = PositionKey.between(lower, upper)
        if let lower { #expect(lower.utf8.lexicographicallyPrecedes(key.utf8), "\(lower) < \(key)") }
        if let upper { #expect(key.utf8.lexicographicallyPrecedes(upper.utf8), "\(key) < \(upper)") }
        #expect(!key.hasSuffix("0"))
    }

    @Test(arguments: [("B", "B"), ("B", "A"), ("A0", "A~"), ("~", "~~"), ("é", "é"), ("A", "A000")] as [(String, String)])
    func neighboursWithoutRoomBetweenThemStillGetAKey(lower: String, upper: String) {
        let key = PositionKey.between(lower, upper)
        #expect(key.utf8.count <= lower.utf8.count + 2, "a short key, not an endless one: \(key)")
        #expect(PositionKey.keys(count: 5, between: lower, upper).count == 5)
    }
}

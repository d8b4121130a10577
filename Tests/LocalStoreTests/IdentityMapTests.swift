import Foundation
import Testing
@testable import LocalStoreCore

/// The context's identity map against a `Dictionary` doing the same inserts, replacements and
/// removals: removals shift later entries of a probe run back, and a mistake there loses entries.
struct IdentityMapTests {
    @Test func agreesWithADictionaryThroughInsertsReplacementsAndRemovals() {
        var map = IdentityMap()
        var reference: [UUID: HandPlace] = [:]
        var generator = SystemRandomNumberGenerator()
        var ids: [UUID] = []
        for round in 0..<20 {
            // Grow, replace some entries, then remove about half, in random order.
            for _ in 0..<(200 + round * 50) {
                let id = UUID.random()
                let place = HandPlace()
                ids.append(id)
                map[id] = place
                reference[id] = place
            }
            for id in ids.shuffled(using: &generator).prefix(ids.count / 10) {
                let replacement = HandPlace()
                map[id] = replacement
                reference[id] = replacement
            }
            for id in ids.shuffled(using: &generator).prefix(ids.count / 2) {
                map[id] = nil
                reference[id] = nil
            }
            ids = Array(reference.keys)
            for (id, place) in reference {
                #expect(map[id] as? HandPlace === place, "round \(round): \(id) lost or wrong")
            }
            #expect(map.values.count == reference.count, "round \(round)")
            #expect(map[UUID.random()] == nil)
        }
        for id in ids { map[id] = nil }
        #expect(map.values.isEmpty)
    }

    /// Growing moves each entry without retaining or releasing it: objects only the map holds
    /// survive every doubling, and are freed once the map goes, none leaked.
    @Test func growingKeepsEveryObjectOnceAndLeaksNone() {
        var references: [(id: UUID, object: Weak)] = []
        do {
            var map = IdentityMap()
            for _ in 0..<5_000 {
                let id = UUID.random()
                let place = HandPlace()
                references.append((id, Weak(place)))
                map[id] = place
            }
            #expect(references.allSatisfy { map[$0.id] as? HandPlace === $0.object.value })
            #expect(references.allSatisfy { $0.object.value != nil })
            #expect(map.values.count == references.count)
        }
        #expect(references.allSatisfy { $0.object.value == nil })
    }

    final class Weak {
        weak var value: HandPlace?
        init(_ value: HandPlace) { self.value = value }
    }
}

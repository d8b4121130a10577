import Foundation
import SyncKit

/// A grow-only set of tags, kept sorted so its JSON is the same on every replica.
struct TagUnion: MergeableValue, Codable, Equatable, Sendable {
    var tags: [String] = []

    static func merge(_ first: TagUnion, _ second: TagUnion) -> TagUnion {
        TagUnion(tags: Array(Set(first.tags).union(second.tags)).sorted())
    }
}

/// The simulation's attributes with merge policies: one per policy, the counter narrow enough
/// (`Int16`) that concurrent increments saturate it.
@Entity final class Tally {
    var name: String = ""
    @Attribute(merge: .max) var peak: Int = 0
    @Attribute(merge: .min) var low: Int = 100
    @Attribute(merge: .counter) var hits: Int16 = 0
    @Attribute(storage: .codable, merge: .custom(TagUnion.self)) var marks: TagUnion = TagUnion()
}

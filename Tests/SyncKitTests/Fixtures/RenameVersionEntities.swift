import Foundation
import SyncKit

/// A deck of cards, before the renames.
enum RenameVersion1 {
    @Entity final class Deck {
        var title: String = ""
        @Relationship(inverse: "deck", deleteRule: .cascade) var cards: [Card] = []
        @Relationship(inverse: "cover", deleteRule: .nullify) var front: Card?
    }

    @Entity final class Card {
        var text: String = ""
        var points: Int = 0
        @Relationship(inverse: "cards", deleteRule: .nullify) var deck: Deck?
        @Relationship(inverse: "front", deleteRule: .nullify) var cover: Deck?
    }

    static let entities: [any PersistentEntity.Type] = [Deck.self, Card.self]
}

/// The same model with `Card` renamed `Tile`, `Card.text` renamed `body` and `Deck.cards`
/// renamed `tiles`. The one-to-one `Deck.front`/`Tile.cover` is now recorded from `Deck`'s side
/// (its names sort first), where it was recorded from `Card`'s.
enum RenameVersion2 {
    @Entity final class Deck {
        var title: String = ""
        @Relationship(inverse: "deck", deleteRule: .cascade, originalName: "cards") var tiles: [Tile] = []
        @Relationship(inverse: "cover", deleteRule: .nullify) var front: Tile?
    }

    @Entity(originalName: "Card") final class Tile {
        @Attribute(originalName: "text") var body: String = ""
        var points: Int = 0
        @Relationship(inverse: "tiles", deleteRule: .nullify) var deck: Deck?
        @Relationship(inverse: "front", deleteRule: .nullify) var cover: Deck?
    }

    static let entities: [any PersistentEntity.Type] = [Deck.self, Tile.self]
}

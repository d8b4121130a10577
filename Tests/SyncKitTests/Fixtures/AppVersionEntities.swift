import Foundation
import SyncKit

/// The model of the first version of an app.
enum AppVersion1 {
    @Entity final class Board {
        var title: String = ""
        var note: String = ""
        @Relationship(inverse: "board", deleteRule: .cascade) var cards: [Card] = []
    }

    @Entity final class Card {
        var text: String = ""
        var points: Int = 0
        @Relationship(inverse: "cards", deleteRule: .nullify) var board: Board?
    }

    static let entities: [any PersistentEntity.Type] = [Board.self, Card.self]
}

/// The second version: `Board.note` became optional; `Card` has new attributes (one with a
/// default other than zero); a new entity `Label` is linked to boards by a new relationship.
enum AppVersion2 {
    @Entity final class Board {
        var title: String = ""
        var note: String? = nil
        @Relationship(inverse: "board", deleteRule: .cascade) var cards: [Card] = []
        @Relationship(inverse: "boards", deleteRule: .nullify) var labels: Set<Label> = []
    }

    @Entity final class Card {
        var text: String = ""
        var points: Int = 0
        var priority: Int = 3
        var isDone: Bool = false
        @Relationship(inverse: "cards", deleteRule: .nullify) var board: Board?
    }

    @Entity final class Label {
        var name: String = ""
        @Relationship(inverse: "labels", deleteRule: .nullify) var boards: Set<Board> = []
    }

    static let entities: [any PersistentEntity.Type] = [Board.self, Card.self, Label.self]
}

import Foundation
@testable import LocalStoreCore
@testable import SyncEngine
import SyncKit
import TestSupport

// Entities of the end-to-end tests: a team with ordered members (cascade), a self-referencing
// manager/reports pair (deny), and labels many-to-many (nullify).

@Entity final class Squad {
    var name: String = ""
    var score: Int = 0
    @Relationship(inverse: "squad", deleteRule: .cascade) var players: [Player] = []
}

@Entity final class Player {
    var name: String = ""
    @Relationship(inverse: "players", deleteRule: .nullify) var squad: Squad?
    @Relationship(inverse: "reports", deleteRule: .nullify) var coach: Player?
    @Relationship(inverse: "coach", deleteRule: .deny) var reports: Set<Player> = []
    @Relationship(inverse: "players", deleteRule: .nullify) var badges: Set<Badge> = []
}

@Entity final class Badge {
    var title: String = ""
    @Relationship(inverse: "badges", deleteRule: .nullify) var players: Set<Player> = []
}

let endToEndEntities: [any PersistentEntity.Type] = [Squad.self, Player.self, Badge.self]


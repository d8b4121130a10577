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

/// Every row of every entity and join table of a store file, sorted, as text.
func storeDigest(_ path: String) throws -> String {
    let connection = try SQLiteConnection(path: path)
    var lines: [String] = []
    for table in try connection.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite%' ORDER BY name") {
        guard case .text(let name) = table[0] else { continue }
        for row in try connection.rows("SELECT * FROM \"\(name)\" ORDER BY 1, 2") {
            lines.append(name + ": " + row.map(\.description).joined(separator: " | "))
        }
    }
    return lines.joined(separator: "\n")
}

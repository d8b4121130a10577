import Foundation
import SyncKit

// A schema with every relationship shape and every delete rule:
// - Team.members / Member.team: ordered one-to-many, cascade / nullify
// - Team.leader / Member.leads: one-to-one (a second relationship between Team and Member)
// - Member.manager / Member.reports: self-referencing one-to-many, nullify / deny
// - Member.labels / Label.members: many-to-many, nullify both ways

// Team was called Crew, and its score points, in an older version of the model (the simulation
// runs an app on that version): merges translate what that app writes.
@Entity(originalName: "Crew") final class Team {
    var name: String = ""
    @Attribute(originalName: "points") var score: Int = 0
    @Relationship(inverse: "team", deleteRule: .cascade) var members: [Member] = []
    @Relationship(inverse: "leads", deleteRule: .nullify) var leader: Member?
}

@Entity final class Member {
    var name: String = ""
    var level: Int = 0
    var note: String? = nil
    @Relationship(inverse: "members", deleteRule: .nullify) var team: Team?
    @Relationship(inverse: "leader", deleteRule: .nullify) var leads: Team?
    @Relationship(inverse: "reports", deleteRule: .nullify) var manager: Member?
    @Relationship(inverse: "manager", deleteRule: .deny) var reports: Set<Member> = []
    @Relationship(inverse: "members", deleteRule: .nullify) var labels: Set<Label> = []
}

@Entity final class Label {
    var text: String = ""
    @Relationship(inverse: "labels", deleteRule: .nullify) var members: Set<Member> = []
}

let syncEntities: [any PersistentEntity.Type] = [Team.self, Member.self, Label.self]

// An attribute stored in several columns, for merges that must keep the columns together.
@Composition struct GeoPoint: Equatable {
    var latitude: Double = 0
    var longitude: Double = 0
}

@Entity final class Spot {
    var name: String = ""
    @Attribute(storage: .composition) var location: GeoPoint? = nil
    var rating: Int = 0
}

/// Added to `syncEntities` by the tests that need it (the simulation keeps its schema).
let compositionEntities: [any PersistentEntity.Type] = [Spot.self]

enum PeerMood: String, CaseIterable, Sendable { case calm, busy, away }

// Relationships that are their own inverse, one per shape and delete rule:
// - Peer.partner: self-inverse to-one, nullify; Peer.twin: self-inverse to-one, cascade
// - Peer.friends: self-inverse to-many, nullify; Peer.sponsors: self-inverse to-many, deny
// Peer.tag is unique, so that concurrent peers with one tag merge (CONTRACT.md §3.8).
@Entity final class Peer {
    var name: String = ""
    /// A `.raw` attribute whose cases the schema lists, so that every exchange checks its values.
    @Attribute(storage: .raw) var mood: PeerMood = .calm
    @Attribute(.unique) var tag: String? = nil
    @Relationship(inverse: "partner", deleteRule: .nullify) var partner: Peer?
    @Relationship(inverse: "twin", deleteRule: .cascade) var twin: Peer?
    @Relationship(inverse: "friends", deleteRule: .nullify) var friends: Set<Peer> = []
    @Relationship(inverse: "sponsors", deleteRule: .deny) var sponsors: Set<Peer> = []
}

/// Every relationship shape the product supports: `syncEntities` plus the self-inverse ones.
let everyShapeEntities: [any PersistentEntity.Type] = syncEntities + [Peer.self]

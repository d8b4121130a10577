import Foundation
import LocalStoreCore
@testable import SyncEngine
import Testing

/// The delete rules on their own (`DeleteRuleResolver`), on an in-memory graph: the deleted
/// objects, the deleter's vector and the edges in; the cascade, the void and the dropped
/// references out. The same rules through real merges, in both exchange orders, are in
/// `ResolutionTableDeleteRuleTests.swift`.
@Suite struct DeleteRuleResolverTests {
    static let deleter = UUID(uuidString: "00000000-0000-0000-0000-0000000000D0")!
    static let other = UUID(uuidString: "00000000-0000-0000-0000-0000000000E0")!

    static func object(_ entity: String, _ number: Int) -> ObjectKey {
        ObjectKey(entity: entity, id: UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", number))!)
    }

    /// A relationship of `Folder` to `Note` with `rule` (its inverse's rule does not matter here).
    static func relationship(_ name: String, _ rule: DeleteRule, from entity: String = "Folder", to target: String = "Note") -> SyncSchema.Relationship {
        SyncSchema.Relationship(entity: entity, name: name, kind: .toMany, target: target, inverse: "folder", deleteRule: rule, isCanonical: false,
                                storage: .inverseForeignKey(table: target, column: "folder", positionColumn: nil))
    }

    /// Edges in memory: each relationship's live edges and the removed ones, both ways.
    struct Graph: DeleteRuleResolver.Graph {
        var relationships: [String: [SyncSchema.Relationship]] = [:]
        var live: [ObjectKey: [String: [(other: ObjectKey, added: Stamp)]]] = [:]
        var removed: [ObjectKey: [String: [(other: ObjectKey, added: Stamp)]]] = [:]
        /// The deletes in force that delete objects explicitly.
        var explicitDeletes: [ObjectKey: [DeleteRoot]] = [:]
        var reversed = false

        func relationships(of entity: String) -> [SyncSchema.Relationship] { relationships[entity] ?? [] }

        func incidentEdges(of object: ObjectKey, _ relationship: SyncSchema.Relationship) -> [(other: ObjectKey, added: Stamp)] {
            let edges = live[object]?[relationship.name] ?? []
            return reversed ? edges.reversed() : edges
        }

        func everyEdge(of object: ObjectKey, _ relationship: SyncSchema.Relationship) -> [(other: ObjectKey, added: Stamp)] {
            let edges = (live[object]?[relationship.name] ?? []) + (removed[object]?[relationship.name] ?? [])
            return reversed ? edges.reversed() : edges
        }

        func explicitDeletesInForce(of object: ObjectKey) -> [DeleteRoot] { explicitDeletes[object] ?? [] }

        /// Adds a live edge between `object` and `other` through `relationship`, seen from `object`.
        mutating func link(_ object: ObjectKey, _ relationship: String, _ other: ObjectKey, _ added: Stamp) {
            live[object, default: [:]][relationship, default: []].append((other, added))
        }
    }

    /// The deleter's change set is `deleter:5`, having seen its own change sets up to 5 and
    /// nothing of `other`'s.
    static func resolver(_ explicit: Set<ObjectKey>) -> DeleteRuleResolver {
        DeleteRuleResolver(root: DeleteRoot(dot: Dot(replica: deleter, seq: 5), root: explicit.sorted().first?.id ?? deleter), explicit: explicit,
                           deleterVector: VersionVector([deleter: 5]))
    }
    static let seen = Stamp(hlc: HLC(rawValue: 10), replica: deleter, seq: 3)
    static let unseen = Stamp(hlc: HLC(rawValue: 20), replica: other, seq: 1)

    @Test func cascadeDeletesWhatAnUnseenReferenceAddedAndFollowsItsCascades() throws {
        let folder = Self.object("Folder", 1), note = Self.object("Note", 2), attachment = Self.object("Attachment", 3)
        var graph = Graph(relationships: ["Folder": [Self.relationship("notes", .cascade)],
                                          "Note": [Self.relationship("attachments", .cascade, from: "Note", to: "Attachment")]])
        graph.link(folder, "notes", note, Self.unseen)
        // The cascade judges every reference of an object it deletes, seen by the deleter or not.
        graph.link(note, "attachments", attachment, Self.seen)
        for reversed in [false, true] {
            graph.reversed = reversed
            let outcome = try Self.resolver([folder]).judge(on: graph)
            #expect(outcome.implicit == [note, attachment] && outcome.denial == nil && outcome.dropped.isEmpty)
        }
    }

    @Test func aReferenceTheDeleterHadSeenIsNotJudgedAgain() throws {
        let folder = Self.object("Folder", 1), note = Self.object("Note", 2)
        var graph = Graph(relationships: ["Folder": [Self.relationship("notes", .cascade), Self.relationship("pinned", .nullify)]])
        graph.link(folder, "notes", note, Self.seen)
        graph.link(folder, "pinned", note, Self.seen)
        let outcome = try Self.resolver([folder]).judge(on: graph)
        #expect(outcome.implicit.isEmpty && outcome.denial == nil && outcome.dropped.isEmpty)
    }

    @Test func denyVoidsTheRootForAnUnseenReferenceEvenOneRemovedSince() throws {
        let folder = Self.object("Folder", 1), note = Self.object("Note", 2)
        var graph = Graph(relationships: ["Folder": [Self.relationship("locked", .deny), Self.relationship("pinned", .nullify)]])
        graph.removed[folder, default: [:]]["locked", default: []].append((note, Self.unseen))
        graph.link(folder, "pinned", note, Self.unseen)
        let outcome = try Self.resolver([folder]).judge(on: graph)
        #expect(outcome.denial?.relationship.name == "locked" && outcome.denial?.other == note && outcome.denial?.added == Self.unseen)
        #expect(outcome.dropped.isEmpty, "a void root drops nothing")
        // A reference the deleter had seen and removed is no reason to deny.
        graph.removed[folder]?["locked"] = [(note, Self.seen)]
        #expect(try Self.resolver([folder]).judge(on: graph).denial == nil)
    }

    @Test func anObjectDeletedByCascadeIsDeniedByItsCurrentReferencesWhateverTheDeleterSaw() throws {
        let folder = Self.object("Folder", 1), note = Self.object("Note", 2), tag = Self.object("Tag", 3)
        var graph = Graph(relationships: ["Folder": [Self.relationship("notes", .cascade)],
                                          "Note": [Self.relationship("tags", .deny, from: "Note", to: "Tag")]])
        graph.link(folder, "notes", note, Self.unseen)
        graph.link(note, "tags", tag, Self.seen)
        let outcome = try Self.resolver([folder]).judge(on: graph)
        #expect(outcome.implicit == [note] && outcome.denial?.object == note && outcome.denial?.other == tag)
    }

    /// An object the deleter had seen deleted (explicitly, by a delete in force) is out of the
    /// graph: its references neither refuse the root nor are reached by its cascade. A compacted
    /// store has forgotten such an object; one that has not must judge the same.
    @Test func anObjectTheDeleterSawDeletedNeitherDeniesNorIsCascadedInto() throws {
        let folder = Self.object("Folder", 1), note = Self.object("Note", 2), tag = Self.object("Tag", 3), draft = Self.object("Draft", 4)
        var graph = Graph(relationships: ["Folder": [Self.relationship("notes", .cascade)],
                                          "Note": [Self.relationship("tags", .deny, from: "Note", to: "Tag"),
                                                   Self.relationship("drafts", .cascade, from: "Note", to: "Draft")]])
        graph.link(folder, "notes", note, Self.unseen)
        graph.link(note, "tags", tag, Self.unseen)
        graph.link(note, "drafts", draft, Self.seen)
        let seenDelete = DeleteRoot(dot: Dot(replica: Self.deleter, seq: 4), root: tag.id)
        graph.explicitDeletes = [tag: [seenDelete], draft: [DeleteRoot(dot: Dot(replica: Self.deleter, seq: 2), root: draft.id)]]
        let outcome = try Self.resolver([folder]).judge(on: graph)
        #expect(outcome.implicit == [note] && outcome.denial == nil && outcome.dropped.isEmpty)
    }

    /// An object deleted by a delete the deleter had not seen still counts: that delete and the
    /// root are concurrent, and neither store can have forgotten it while the root is not everywhere.
    @Test func anObjectDeletedConcurrentlyWithTheRootStillDenies() throws {
        let folder = Self.object("Folder", 1), note = Self.object("Note", 2), tag = Self.object("Tag", 3)
        var graph = Graph(relationships: ["Folder": [Self.relationship("notes", .cascade)],
                                          "Note": [Self.relationship("tags", .deny, from: "Note", to: "Tag")]])
        graph.link(folder, "notes", note, Self.unseen)
        graph.link(note, "tags", tag, Self.seen)
        graph.explicitDeletes = [tag: [DeleteRoot(dot: Dot(replica: Self.other, seq: 2), root: tag.id)]]
        let outcome = try Self.resolver([folder]).judge(on: graph)
        #expect(outcome.implicit == [note] && outcome.denial?.other == tag)
    }

    @Test func nullifyDropsUnseenReferencesToObjectsTheCascadeKeeps() throws {
        let folder = Self.object("Folder", 1), kept = Self.object("Note", 2), cascaded = Self.object("Note", 3)
        var graph = Graph(relationships: ["Folder": [Self.relationship("notes", .cascade), Self.relationship("pinned", .nullify)]])
        graph.link(folder, "notes", cascaded, Self.unseen)
        graph.link(folder, "pinned", cascaded, Self.unseen)
        graph.link(folder, "pinned", kept, Self.unseen)
        for reversed in [false, true] {
            graph.reversed = reversed
            let outcome = try Self.resolver([folder]).judge(on: graph)
            #expect(outcome.implicit == [cascaded] && outcome.denial == nil)
            #expect(outcome.dropped.map(\.other) == [kept] && outcome.dropped.map(\.relationship.name) == ["pinned"])
        }
    }
}

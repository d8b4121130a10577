import Foundation
import LocalStore
@testable import LocalStoreCore
import TestSupport
import Testing

/// The model before the renames.
enum RenameFixtureV1 {
    @Entity final class Owner {
        var name: String = ""
        @Relationship(inverse: "owner", deleteRule: .cascade) var pets: [Pet] = []
        @Relationship(inverse: "owners", deleteRule: .nullify) var tags: Set<Tag> = []
    }

    @Entity final class Pet {
        var name: String = ""
        @Relationship(inverse: "pets", deleteRule: .nullify) var owner: Owner?
    }

    @Entity final class Tag {
        var text: String = ""
        @Relationship(inverse: "tags", deleteRule: .nullify) var owners: Set<Owner> = []
    }
}

/// The same model with `Owner` renamed `Keeper`, and every relationship renamed.
enum RenameFixtureV2 {
    @Entity(originalName: "Owner") final class Keeper {
        var name: String = ""
        @Relationship(inverse: "keeper", deleteRule: .cascade) var pets: [Pet] = []
        @Relationship(inverse: "keepers", deleteRule: .nullify, originalName: "tags") var labels: Set<Tag> = []
    }

    @Entity final class Pet {
        var name: String = ""
        @Relationship(inverse: "pets", deleteRule: .nullify, persistentName: "keeper_id", originalName: "owner") var keeper: Keeper?
    }

    @Entity final class Tag {
        var text: String = ""
        @Relationship(inverse: "labels", deleteRule: .nullify, originalName: "owners") var keepers: Set<Keeper> = []
    }
}

@Suite struct RenameMigrationTests {
    let file = TemporaryStoreFile()

    func tables() throws -> [String] {
        try SQLiteConnection(path: file.path).rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' ORDER BY name")
            .map { row in if case .text(let name) = row[0] { name } else { "" } }
    }

    func columns(of table: String) throws -> [String] {
        try SQLiteConnection(path: file.path).rows("SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(table)])
            .map { row in if case .text(let name) = row[0] { name } else { "" } }
    }

    @Test func persistentNameNamesTheForeignKeyColumn() throws {
        let store = try ObjectStore(path: file.path, entities: [RenameFixtureV2.Keeper.self, RenameFixtureV2.Pet.self, RenameFixtureV2.Tag.self])
        #expect(try columns(of: "Pet") == ["_object_id", "name", "keeper_id", "keeper_id_position"])
        let context = try store.makeContext()
        let keeper = RenameFixtureV2.Keeper()
        let pet = RenameFixtureV2.Pet()
        pet.keeper = keeper
        context.insert(keeper)
        try context.save()
        let reader = try store.makeContext()
        let fetched = try #require(try reader.fetchAll(RenameFixtureV2.Pet.self).first)
        #expect(fetched.keeper?.objectID == keeper.objectID)
        let count = try reader.fetchCount(FetchDescriptor<RenameFixtureV2.Pet>(predicate: #Predicate { $0.keeper != nil }))
        #expect(count == 1)
    }

    @Test func renamedEntityAndRelationshipsKeepTheirObjectsAndLinks() throws {
        do {
            let store = try ObjectStore(path: file.path, entities: [RenameFixtureV1.Owner.self, RenameFixtureV1.Pet.self, RenameFixtureV1.Tag.self])
            let context = try store.makeContext()
            let owner = RenameFixtureV1.Owner()
            owner.name = "Ada"
            for name in ["Rex", "Tom"] {
                let pet = RenameFixtureV1.Pet()
                pet.name = name
                pet.owner = owner
            }
            let tag = RenameFixtureV1.Tag()
            tag.text = "vip"
            owner.tags = [tag]
            context.insert(owner)
            try context.save()
        }
        #expect(try tables() == ["Owner", "Owner_tags", "Pet", "Tag"])

        let store = try ObjectStore(path: file.path, entities: [RenameFixtureV2.Keeper.self, RenameFixtureV2.Pet.self, RenameFixtureV2.Tag.self])
        #expect(try tables() == ["Keeper", "Keeper_labels", "Pet", "Tag"])
        #expect(try columns(of: "Pet") == ["_object_id", "name", "keeper_id", "keeper_id_position"])
        let context = try store.makeContext()
        let keeper = try #require(try context.fetchAll(RenameFixtureV2.Keeper.self).first)
        #expect(keeper.name == "Ada")
        #expect(keeper.pets.map(\.name) == ["Rex", "Tom"])
        #expect(keeper.pets.allSatisfy { $0.keeper === keeper })
        #expect(keeper.labels.map(\.text) == ["vip"])
        let tag = try #require(try context.fetchAll(RenameFixtureV2.Tag.self).first)
        #expect(tag.keepers == [keeper])
        // The renamed store takes changes, and opens again without further migration.
        context.delete(keeper)
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<RenameFixtureV2.Pet>()) == 0)
        _ = try ObjectStore(path: file.path, entities: [RenameFixtureV2.Keeper.self, RenameFixtureV2.Pet.self, RenameFixtureV2.Tag.self])
        #expect(try tables() == ["Keeper", "Keeper_labels", "Pet", "Tag"])
    }
}

import Foundation
import LocalStore
@testable import LocalStoreCore
import TestSupport
import Testing

@Suite struct ValidationTests {
    let file = TemporaryStoreFile()

    @Test func uniqueViolationNamesEntityAttributeValueAndObject() throws {
        let store = try ObjectStore(path: file.path, entities: [HandPlace.self, HandPerson.self])
        let context = try store.makeContext()
        let first = HandPerson()
        first.email = "same@example.com"
        context.insert(first)
        try context.save()
        let second = HandPerson()
        second.email = "same@example.com"
        context.insert(second)
        let error = try #require(throws: StoreError.self) { try context.save() }
        #expect(error.code == .uniqueViolation)
        #expect(error.entity == "HandPerson")
        #expect(error.attribute == "email")
        #expect(error.objectID == second.objectID)
        #expect(error.message.contains("same@example.com"))
        // The failed save wrote nothing; fixing the value lets it through.
        second.email = "other@example.com"
        try context.save()
        #expect(try store.makeContext().fetchAll(HandPerson.self).count == 2)
    }

    @Test func minCountIsCheckedOnSave() throws {
        let store = try openFolderStore(file)
        let context = try store.makeContext()
        let orphan = File(name: "lost.txt")
        context.insert(orphan)
        let error = try #require(throws: StoreError.self) { try context.save() }
        #expect(error.code == .countViolation)
        #expect(error.entity == "File")
        #expect(error.relationship == "folder")
        #expect(error.objectID == orphan.objectID)
    }

    @Test func maxCountIsCheckedOnSave() throws {
        let store = try openFolderStore(file)
        let context = try store.makeContext()
        let folder = Folder(name: "docs")
        for label in ["a", "b", "c"] { folder.addToTags(Tag(label: label)) }
        context.insert(folder)
        let error = try #require(throws: StoreError.self) { try context.save() }
        #expect(error.code == .countViolation)
        #expect(error.relationship == "tags")
        #expect(error.message.contains("maxCount 2"))
    }
}

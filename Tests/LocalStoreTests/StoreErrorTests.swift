import Foundation
import LocalStore
@testable import LocalStoreCore
import TestSupport
import Testing

@Suite struct StoreErrorTests {
    let file = TemporaryStoreFile()

    @Test func aFileThatIsNotSQLiteIsRefusedAndKept() throws {
        let text = Data("these are my notes, not a database\n".utf8) + Data(repeating: 65, count: 4096)
        try text.write(to: URL(fileURLWithPath: file.path))
        let error = try #require(throws: StoreError.self) {
            _ = try ObjectStore(path: file.path, entities: [HandPlace.self, HandPerson.self])
        }
        #expect(error.code == .notADatabase)
        #expect(error.path == file.path)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file.path)) == text)
    }

    @Test func aReadOnlyFileIsReported() throws {
        _ = try ObjectStore(path: file.path, entities: [HandPlace.self, HandPerson.self])
        // Root ignores permission bits, so as root make the file immutable instead.
        let isRoot = getuid() == 0
        if isRoot {
            #expect(try runTool("/usr/bin/chattr", ["+i", file.path]) == 0)
        } else {
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: file.path)
        }
        defer {
            if isRoot { _ = try? runTool("/usr/bin/chattr", ["-i", file.path]) }
            try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        }
        let error = try #require(throws: StoreError.self) {
            _ = try ObjectStore(path: file.path, entities: [HandPlace.self, HandPerson.self])
        }
        #expect(error.code == .readOnly)
        #expect(error.path == file.path)
    }

    private func runTool(_ path: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test func aLockedDatabaseIsReportedAsLocked() throws {
        let store = try ObjectStore(path: file.path, entities: [HandPlace.self, HandPerson.self])
        let blocker = try SQLiteConnection(path: file.path, busyTimeoutMilliseconds: 0)
        try blocker.execute("BEGIN IMMEDIATE")
        defer { try? blocker.execute("ROLLBACK") }
        let context = try store.makeContext()
        context.connection.setBusyTimeout(milliseconds: 50)
        context.insert(HandPlace())
        let error = try #require(throws: StoreError.self) { try context.save() }
        #expect(error.code == .locked)
        #expect(context.hasChanges)
    }

    @Test func undecodableCodableJSONNamesEntityAttributeAndObject() throws {
        let store = try ObjectStore(path: file.path, entities: [HandPlace.self, HandPerson.self])
        let context = try store.makeContext()
        let person = HandPerson()
        person.prefs = HandPrefs(theme: "x")
        context.insert(person)
        try context.save()
        try context.connection.run("UPDATE HandPerson SET prefs = '{not json' WHERE _object_id = ?", [.text(person.objectID.uuidString)])
        let error = try #require(throws: StoreError.self) { _ = try store.makeContext().fetchAll(HandPerson.self) }
        #expect(error.code == .corruptValue)
        #expect(error.entity == "HandPerson")
        #expect(error.attribute == "prefs")
        #expect(error.objectID == person.objectID)
    }

    @Test func readersSeeCommittedDataWhileAWriterHoldsItsTransaction() throws {
        let store = try ObjectStore(path: file.path, entities: [HandPlace.self, HandPerson.self])
        let writer = try store.makeContext()
        let place = HandPlace()
        place.name = "Before"
        writer.insert(place)
        try writer.save()
        try writer.connection.execute("BEGIN IMMEDIATE")
        try writer.connection.run("UPDATE HandPlace SET name = 'During'")
        let reader = try store.makeContext()
        #expect(try reader.fetchAll(HandPlace.self).map(\.name) == ["Before"])
        try writer.connection.execute("COMMIT")
        #expect(try store.makeContext().fetchAll(HandPlace.self).map(\.name) == ["During"])
    }
}

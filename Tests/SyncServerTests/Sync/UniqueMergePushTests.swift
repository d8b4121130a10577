import Foundation
import SyncKit
import TestSupport
import Testing

@testable import SyncServer

/// A profile whose handle is unique, with a reference to check that it moves.
@Entity final class Profile {
    @Attribute(.unique) var handle: String = ""
    var bio: String = ""
    @Relationship(inverse: "profile", deleteRule: .cascade) var notes: [Note] = []
}

@Entity final class Note {
    var text: String = ""
    @Relationship(inverse: "notes", deleteRule: .nullify) var profile: Profile?
}

/// CONTRACT.md §3.8 through syncd: pushes of concurrent duplicates merge on the server as on a client.
@Suite struct UniqueMergePushTests {
    /// A client with the profile entities and a wall clock starting at `start`.
    final class ProfileClient {
        let file = TemporaryStoreFile(prefix: "syncd-unique")
        let store: ObjectStore
        let replica: SyncReplica

        init(start: UInt64) throws {
            store = try ObjectStore(path: file.path, entities: [Profile.self, Note.self])
            let clock = TickingClock(start: start)
            replica = try SyncReplica(store: store, wallClock: { clock.read() })
        }

        /// Saves a profile with `handle` and one note; returns the profile's identifier.
        func create(_ handle: String) throws -> UUID {
            let context = try store.makeContext()
            let profile = Profile()
            profile.handle = handle
            let note = Note()
            note.text = "\(handle) note"
            profile.notes = [note]
            context.insert(profile)
            try context.save()
            return profile.objectID
        }
    }

    @Test(arguments: [false, true])
    func concurrentDuplicatesPushedInEitherOrderLeaveTheEarliestWithBothNotes(laterFirst: Bool) throws {
        let server = try ServerFixture()
        let earlier = try ProfileClient(start: serverNow - 60_000), later = try ProfileClient(start: serverNow - 30_000)
        try server.registerSchema(try earlier.store.exportSchema())
        let survivor = try earlier.create("ada"), duplicate = try later.create("ada")
        for client in laterFirst ? [later, earlier] : [earlier, later] {
            let body = try ChangeSetCoding.encode(try client.replica.changeSets(missingFrom: server.serverVector()), base: server.serverVector())
            let response = server.push(body, as: try client.replica.credentials())
            #expect(response.status == .ok, "push: \(response.text)")
        }
        _ = try earlier.replica.apply(try later.replica.changeSets(missingFrom: earlier.replica.versionVector()))
        let serverPath = server.service.registry.dataset("main").storePath
        #expect(try ServerFixture.entityRows(at: serverPath) == ServerFixture.entityRows(at: earlier.file.path))
        let context = try earlier.store.makeContext()
        #expect(try context.fetchAll(Profile.self).map(\.objectID) == [survivor])
        #expect(try context.object(Profile.self, id: survivor)?.notes.count == 2)
        #expect(try context.object(Profile.self, id: duplicate) == nil)
    }
}

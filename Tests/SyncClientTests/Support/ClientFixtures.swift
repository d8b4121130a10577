import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SyncKit
import Synchronization
import TestSupport
import Testing

@Entity final class Folder {
    var name: String = ""
    @Relationship(inverse: "folder", deleteRule: .cascade) var notes: [Note] = []
}

@Entity final class Note {
    var title: String = ""
    var count: Int = 0
    @Relationship(inverse: "notes", deleteRule: .nullify) var folder: Folder?
}

let clientEntities: [any PersistentEntity.Type] = [Folder.self, Note.self]

/// A temporary store file with a sync replica, for one side of a client test.
final class ClientReplica {
    let file: TemporaryStoreFile
    var path: String { file.path }
    let store: ObjectStore
    let replica: SyncReplica
    let context: ObjectContext

    init() throws {
        file = TemporaryStoreFile(prefix: "client")
        store = try ObjectStore(path: file.path, entities: clientEntities)
        replica = try SyncReplica(store: store)
        context = try store.makeContext()
    }

    /// Saves `count` notes, one save (one change set) each; returns their IDs.
    @discardableResult
    func addNotes(_ count: Int, prefix: String = "note") throws -> [UUID] {
        var ids: [UUID] = []
        for index in 0..<count {
            let note = Note()
            note.title = "\(prefix) \(index)"
            note.count = index
            context.insert(note)
            try context.save()
            ids.append(note.objectID)
        }
        return ids
    }

    /// The titles of all notes, sorted, as a fresh context sees them.
    func noteTitles() throws -> [String] {
        let reader = try store.makeContext()
        return try reader.fetchAll(Note.self).map(\.title).sorted()
    }

    func client(_ server: FakeSyncServer, through path: RequestPath = .urlSession, token: String? = nil, backoff: Backoff = Backoff(initial: .milliseconds(100), maximum: .seconds(1), maxAttempts: 3, jitter: { 0.5 }),
                sleeper: Sleeper = Sleeper(), configure: (inout SyncClient.Configuration) -> Void = { _ in }) -> SyncClient {
        var configuration = SyncClient.Configuration(serverURL: server.url, dataset: server.dataset, token: token ?? server.token)
        configuration.backoff = backoff
        configuration.requestTimeout = .seconds(10)
        if path == .libcurl { configuration.certificateAuthorities = RequestPath.certificateAuthorities }
        configure(&configuration)
        // Without a session of its own a client on Linux goes through libcurl: the URLSession path is asked for by name.
        let session = path == .urlSession ? URLSession(configuration: .ephemeral) : nil
        return SyncClient(replica: replica, configuration: configuration, session: session, sleep: { try await sleeper.sleep($0) })
    }
}

/// Which HTTP stack a client's requests go through: `URLSession` (a session handed to the
/// client), or libcurl (a client's own on Linux; here with certificate authorities named, a
/// file that plain http never reads).
enum RequestPath: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case urlSession, libcurl
    var testDescription: String { rawValue }

    /// A PEM file for ``SyncClient/Configuration/certificateAuthorities``.
    static let certificateAuthorities: URL = {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("objectsync-test-authorities-\(UUID().uuidString).pem")
        try? Data("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n".utf8).write(to: file)
        return file
    }()
}

/// Records the delays a client asks for and returns at once (or really sleeps, if told to).
final class Sleeper: Sendable {
    private let delays = Mutex<[Duration]>([])
    let real: Bool

    init(real: Bool = false) { self.real = real }

    func sleep(_ duration: Duration) async throws {
        delays.withLock { $0.append(duration) }
        if real { try await Task.sleep(for: duration) } else { try Task.checkCancellation() }
    }

    var recorded: [Duration] { delays.withLock { $0 } }
}

import Foundation
import LocalStoreCore
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension SyncClient {
    /// Creates a store file at `path` from the server's snapshot of the dataset, much faster
    /// than pulling a long log from the start: the file becomes a replica of its own (a fresh
    /// replica ID), remembers `configuration` and starts pulling after the snapshot's cursor,
    /// sending its digest, so a server restored from a backup since cannot make it skip change sets.
    /// Open it afterwards like any store (with its entity types, or `ObjectStore(existingAt:)`).
    ///
    /// Throws ``SyncClientError/local(_:)`` if a file already exists at `path`.
    @discardableResult
    public static func createStoreFromSnapshot(
        at path: String, configuration: Configuration, session: URLSession? = nil,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) async throws(SyncClientError) -> HTTPTransport.Snapshot {
        guard !FileManager.default.fileExists(atPath: path) else { throw .local("a file already exists at \(path)") }
        let ownSession = session == nil ? HTTPTransport.ownSession() : nil
        defer { ownSession?.finishTasksAndInvalidate() }
        let transport = HTTPTransport(configuration, session: session ?? ownSession, sleep: sleep)
        let snapshot = try await transport.snapshot()
        // Writing and opening the store blocks on file and SQLite calls: off the cooperative pool.
        try await run(on: DispatchQueue(label: "SyncClient.snapshot", qos: .utility)) { () throws(SyncClientError) in
            do {
                // Created owner-only before any byte is written: it will hold the token.
                try OwnerOnlyFile.create(atPath: path)
                try snapshot.data.write(to: URL(fileURLWithPath: path))
                try SyncReplica.adoptSnapshot(at: path)
                let replica = try SyncReplica(store: try ObjectStore(existingAt: path))
                try configuration.save(in: replica)
                try replica.setPullCursor(snapshot.cursor, digest: snapshot.cursorDigest)
                try replica.setSetting(SettingKey.cursorSource, configuration.source)
                try replica.setSetting(SettingKey.schema, configuration.source + " " + replica.store.schemaDocument.versionHash)
            } catch {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
                throw .local("cannot set up the snapshot as a store at \(path): \(error)")
            }
        }
        return snapshot
    }
}

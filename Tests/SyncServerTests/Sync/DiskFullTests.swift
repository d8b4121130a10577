import Foundation
@testable import HTTPServer
import SyncKit
import TestSupport
import Testing

@testable import SyncServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A data directory on a small tmpfs that a filler file can fill up: the server's answers when
/// the disk is full, and its recovery once space is freed.
///
/// Needs root (tests run as root locally and in CI); without it the test fails rather than skips.
final class SmallFileSystem {
    let mountPoint: TemporaryDirectory
    var url: URL { mountPoint.url }
    private var fillerPath: String { mountPoint.file("filler") }

    init(megabytes: Int) throws {
        mountPoint = try TemporaryDirectory(prefix: "syncd-small-disk")
        let mount = try ProductProcess.run(URL(fileURLWithPath: "/bin/mount"),
                                           ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", mountPoint.path], timeout: 20)
        guard mount.status == 0 else {
            throw ProductProcessError("cannot mount a \(megabytes) MiB tmpfs at \(mountPoint.path) (the disk-full tests need root): \(mount.standardError)")
        }
    }

    deinit {
        // Lazily: the server under test may still hold its files open.
        _ = try? ProductProcess.run(URL(fileURLWithPath: "/bin/umount"), ["-l", mountPoint.path], timeout: 20)
    }

    /// Writes a filler file until the file system has no space left.
    func fill() throws {
        let descriptor = open(fillerPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard descriptor >= 0 else { throw ProductProcessError("cannot create \(fillerPath)") }
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0xA5, count: 4096)
        while true {
            let written = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            // A short write takes the last few bytes; the next one reports ENOSPC.
            if written < 0 {
                guard errno == ENOSPC else { throw ProductProcessError("filling failed: errno \(errno)") }
                return
            }
        }
    }

    /// Removes the filler file.
    func free() throws {
        try FileManager.default.removeItem(atPath: fillerPath)
    }
}

@Suite(.serialized, .timeLimit(.minutes(2))) struct DiskFullTests {
    /// A client with a board of cards big enough (about 2 MiB) to need new pages on any disk.
    static func largeBatch() throws -> (body: Data, pusher: ReplicaCredentials) {
        let client = try ClientReplica()
        let board = Board()
        board.title = "large"
        client.context.insert(board)
        var generator = SeededGenerator(seed: 7)
        for index in 0..<32 {
            let card = Card()
            card.text = "card \(index)"
            card.payload = Data((0..<65_536).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
            card.board = board
        }
        try client.context.save()
        return (try client.batch(), try client.credentials)
    }

    @Test func aFullDiskIs507AndTheDatasetRecoversOnceSpaceIsFreed() throws {
        let disk = try SmallFileSystem(megabytes: 24)
        let server = try ServerFixture(dataDirectory: disk.url.appendingPathComponent("data"))
        try server.registerSchema()
        let small = try ClientReplica()
        try small.addBoard("small", cards: 3)
        #expect(server.push(try small.batch(), as: try small.credentials).status == .ok)
        let vectorBefore = try server.serverVector()
        let rowsBefore = try ServerFixture.entityRows(at: server.directory.appendingPathComponent("datasets/main/store.sqlite").path)

        try disk.fill()
        let large = try DiskFullTests.largeBatch()
        let push = server.push(large.body, as: large.pusher)
        #expect(push.status.code == 507, "\(push.text)")
        #expect(push.errorCode == "insufficient_storage")
        #expect(try server.serverVector() == vectorBefore, "nothing of the refused push was stored")

        let otherSchema = server.send(.put, "/v1/datasets/other/schema", body: try small.store.exportSchema(), token: server.otherToken)
        #expect(otherSchema.status.code == 507, "\(otherSchema.text)")
        #expect(otherSchema.errorCode == "insufficient_storage")

        try disk.free()
        #expect(try ServerFixture.entityRows(at: server.directory.appendingPathComponent("datasets/main/store.sqlite").path) == rowsBefore)
        let retried = server.push(large.body, as: large.pusher)
        #expect(retried.status == .ok, "\(retried.text)")
        #expect(try server.serverVector() != vectorBefore)
        try server.registerSchema(dataset: "other")
        let check = try SQLiteConnection(path: server.directory.appendingPathComponent("datasets/main/store.sqlite").path, readOnly: true)
        #expect(try check.rows("PRAGMA integrity_check").first?.first == .text("ok"))
    }
}

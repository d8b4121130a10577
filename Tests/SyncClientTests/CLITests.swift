import Foundation
import Testing
import SyncKit

/// The `sync` binary run as a process: usage errors, help, and local edits and reads.
@Suite struct CLIUsageTests {
    let cli: CLIRunner

    init() throws { cli = try CLIRunner() }

    @Test func topLevelHelpListsEveryCommand() throws {
        let result = try cli.run("--help")
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("usage: sync [--store PATH] <command>"))
        for command in ["init", "push", "pull", "status", "put", "link", "unlink", "delete", "get", "list", "conflicts", "log"] {
            #expect(result.stdout.contains("\n  \(command) "), "help lists \(command)")
        }
        #expect(try cli.run("help").stdout == result.stdout)
    }

    @Test(arguments: ["init", "push", "pull", "status", "put", "link", "unlink", "delete", "get", "list", "conflicts", "log"])
    func everyCommandHasHelp(_ command: String) throws {
        let result = try cli.run(command, "--help")
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("usage: sync \(command)"))
        #expect(result.stderr.isEmpty)
        #expect(try cli.run(command, "-h").stdout == result.stdout)
    }

    @Test func missingCommandIsAUsageError() throws {
        let result = try cli.run([])
        #expect(result.status == 2)
        #expect(result.stderr.contains("missing command"))
    }

    @Test func unknownCommandIsNamed() throws {
        let result = try cli.run("frobnicate")
        #expect(result.status == 2)
        #expect(result.stderr.contains("unknown command 'frobnicate'"))
        #expect(result.stderr.contains("sync --help"))
    }

    @Test func unknownOptionIsNamed() throws {
        let result = try cli.run("status", "--verbose")
        #expect(result.status == 2)
        #expect(result.stderr.contains("sync status: unknown option '--verbose'"))
        #expect(result.stderr.contains("Run 'sync status --help' for usage."))
        #expect(try cli.run("--bogus", "status").status == 2)
    }

    @Test func missingOptionValueAndArguments() throws {
        let storeless = try cli.run("--store")
        #expect(storeless.status == 2)
        #expect(storeless.stderr.contains("'--store' needs a value"))
        let extra = try cli.run("status", "extra")
        #expect(extra.status == 2)
        #expect(extra.stderr.contains("unexpected argument 'extra'"))
        let flagValue = try cli.run("conflicts", "--clear=yes")
        #expect(flagValue.status == 2)
        #expect(flagValue.stderr.contains("'--clear' takes no value"))
        let limit = try cli.run("log", "--limit", "many")
        #expect(limit.status == 2)
        #expect(limit.stderr.contains("--limit 'many' is not a count"))
    }

    @Test func missingStoreIsARuntimeError() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("absent-\(UUID().uuidString).sqlite").path
        let result = try cli.run("--store", path, "status")
        #expect(result.status == 1)
        #expect(result.stderr.contains("no store at '\(path)'"))
        #expect(!FileManager.default.fileExists(atPath: path), "reading commands do not create stores")
    }
}

/// `sync` on real store files: init from a schema, then status, log and the sync commands.
@Suite struct CLIStoreTests {
    let cli: CLIRunner
    let directory: URL
    let schemaPath: String

    init() throws {
        cli = try CLIRunner()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // The schema of the test entities, as a typed store exports it.
        let typed = try ClientReplica()
        schemaPath = directory.appendingPathComponent("schema.json").path
        try typed.store.exportSchema().write(to: URL(fileURLWithPath: schemaPath))
    }

    func initStore(_ name: String = "store.sqlite", server: String = "http://127.0.0.1:9") throws -> String {
        let path = directory.appendingPathComponent(name).path
        let result = try cli.run("init", path, "--schema", schemaPath, "--server", server, "--dataset", "notes", "--token", "t0k")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("created store \(path) (replica "))
        return path
    }

    @Test func initCreatesAStoreWithoutContactingTheServer() throws {
        let path = try initStore()
        let status = try cli.run("--store", path, "status", "--json")
        #expect(status.status == 0, "\(status.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        #expect(object["server"] as? String == "http://127.0.0.1:9")
        #expect(object["dataset"] as? String == "notes")
        #expect(object["pending"] as? Int == 0)
        #expect(object["cursor"] as? String == "0")
        #expect(object["lastSync"] is NSNull)
        #expect(object["token"] == nil, "status never prints the token")
        #expect(UUID(uuidString: object["replica"] as? String ?? "") != nil)

        let text = try cli.run("status", in: directory, environment: ["SYNC_STORE": path])
        #expect(text.stdout.contains("last sync: never"))
        #expect(text.stdout.contains("server: http://127.0.0.1:9"))

        // Running init again keeps the replica and updates the configuration.
        let again = try cli.run("init", path, "--schema", schemaPath, "--server", "http://127.0.0.1:10", "--dataset", "notes", "--token", "x")
        #expect(again.status == 0)
        #expect(again.stdout.hasPrefix("updated store"))
        let after = try #require(try JSONSerialization.jsonObject(with: Data(try cli.run("--store", path, "status", "--json").stdout.utf8)) as? [String: Any])
        #expect(after["replica"] as? String == object["replica"] as? String)
        #expect(after["server"] as? String == "http://127.0.0.1:10")
    }

    @Test func statusShowsTheHistoryTheStoreHolds() throws {
        let path = try initStore("history.sqlite")
        func history() throws -> [String: Any] {
            let status = try #require(try JSONSerialization.jsonObject(with: Data(try cli.run("--store", path, "status", "--json").stdout.utf8)) as? [String: Any])
            return try #require(status["history"] as? [String: Any])
        }
        #expect(try history()["changeSets"] as? Int == 0)
        let folder = try cli.run("--store", path, "put", "Folder", "name=Inbox").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let note = try cli.run("--store", path, "put", "Note", "title=a").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try cli.run("--store", path, "put", "Note", note, "title=b").status == 0)
        #expect(try cli.run("--store", path, "link", "Note", note, "folder", folder).status == 0)
        #expect(try cli.run("--store", path, "delete", "Folder", folder).status == 0)
        let held = try history()
        #expect(held["changeSets"] as? Int == 5 && held["pending"] as? Int == 5 && held["remote"] as? Int == 0)
        #expect(held["fieldStamps"] as? Int == 1, "the title written after its creation")
        #expect(held["edgeAdditions"] as? Int == 1 && held["edgeRemovals"] as? Int == 1, "the link, removed by the folder's cascade")
        #expect(held["deleteRecords"] as? Int == 2 && held["tombstones"] as? Int == 2, "the folder and the note it cascaded to")
        #expect((held["fileBytes"] as? Int ?? 0) > 0)
        #expect(try cli.run("--store", path, "status").stdout.contains("history: 5 change sets (own: 5 pending"))
    }

    @Test func statusShowsTheCompactionPointAndWhatTheLastCompactionDropped() throws {
        let path = try initStore("compacted.sqlite")
        let folder = try cli.run("--store", path, "put", "Folder", "name=Inbox").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try cli.run("--store", path, "delete", "Folder", folder).status == 0)
        #expect(try cli.run("--store", path, "status").stdout.contains("last compaction: never"))
        #expect(try cli.run("--store", path, "status").stdout.contains("deleted objects forgotten below: none yet"))
        do {
            let replica = try SyncReplica(store: try ObjectStore(existingAt: path))
            try replica.mark(try replica.localChangeSets(status: .pending).map(\.dot), as: .acknowledged)
            try replica.compactHistory(stable: try replica.versionVector())
        }
        let status = try #require(try JSONSerialization.jsonObject(with: Data(try cli.run("--store", path, "status", "--json").stdout.utf8)) as? [String: Any])
        let history = try #require(status["history"] as? [String: Any])
        let last = try #require(history["lastCompaction"] as? [String: Any])
        #expect(last["changeSets"] as? Int == 2 && last["tombstones"] as? Int == 1, "\(last)")
        #expect(history["compactedThrough"] as? [String: Int] == status["vector"] as? [String: Int])
        // The folder's delete is below the vector: the compaction forgot it, and no other deleted object is held.
        #expect(history["forgottenBelow"] as? [String: Int] == status["vector"] as? [String: Int])
        #expect(history["changeSets"] as? Int == 0)
        #expect(try cli.run("--store", path, "status").stdout.contains("last compaction: 2 change sets (1 keep their stamps), 1 tombstones"))
    }

    @Test func initChecksItsArguments() throws {
        let path = directory.appendingPathComponent("bad.sqlite").path
        let noSchema = try cli.run("init", path, "--server", "http://x", "--dataset", "d", "--token", "t")
        #expect(noSchema.status == 2)
        #expect(noSchema.stderr.contains("missing required option --schema"))
        let badURL = try cli.run("init", path, "--schema", schemaPath, "--server", "ftp://x", "--dataset", "d", "--token", "t")
        #expect(badURL.status == 2)
        #expect(badURL.stderr.contains("--server 'ftp://x' is not an http(s) URL"))
        let badDataset = try cli.run("init", path, "--schema", schemaPath, "--server", "http://x", "--dataset", ".d", "--token", "t")
        #expect(badDataset.status == 2)
        #expect(badDataset.stderr.contains("--dataset '.d' is not a dataset name"))
        let notJSON = directory.appendingPathComponent("not.json").path
        try Data("nope".utf8).write(to: URL(fileURLWithPath: notJSON))
        let badSchema = try cli.run("init", path, "--schema", notJSON, "--server", "http://x", "--dataset", "d", "--token", "t")
        #expect(badSchema.status == 1)
        #expect(badSchema.stderr.contains("is not a store schema"))
        #expect(!FileManager.default.fileExists(atPath: path))
        let missingAuthorities = try cli.run("init", path, "--schema", schemaPath, "--server", "https://x", "--dataset", "d", "--token", "t",
                                             "--ca-file", directory.appendingPathComponent("absent.pem").path)
        #expect(missingAuthorities.status == 1)
        #expect(missingAuthorities.stderr.contains("cannot read the certificate authorities file"))
        let notPEM = try cli.run("init", path, "--schema", schemaPath, "--server", "https://x", "--dataset", "d", "--token", "t", "--ca-file", notJSON)
        #expect(notPEM.status == 1)
        #expect(notPEM.stderr.contains("holds no PEM certificate"), "\(notPEM.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func initRemembersTheCertificateAuthoritiesFile() throws {
        let path = directory.appendingPathComponent("private-ca.sqlite").path
        let authorities = directory.appendingPathComponent("ca.pem")
        try Data("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".utf8).write(to: authorities)
        // A relative path is stored absolute, so later commands find it from any directory.
        let created = try cli.run("init", path, "--schema", schemaPath, "--server", "https://127.0.0.1:9", "--dataset", "notes", "--token", "t",
                                  "--ca-file", "ca.pem", in: directory)
        #expect(created.status == 0, "\(created.stderr)")
        let status = try #require(try JSONSerialization.jsonObject(with: Data(try cli.run("--store", path, "status", "--json").stdout.utf8)) as? [String: Any])
        #expect(status["certificateAuthorities"] as? String == authorities.standardizedFileURL.path)
        let plain = try initStore("system-ca.sqlite")
        let text = try cli.run("--store", plain, "status")
        #expect(text.stdout.contains("certificate authorities: the system's"))
    }

    @Test func pushToAnUnreachableServerFailsWithARuntimeError() throws {
        let path = try initStore()
        let result = try cli.run("--store", path, "push")
        #expect(result.status == 1)
        #expect(result.stderr.contains("sync push: network error"), "\(result.stderr)")
    }

    @Test func pushAndPullThroughAServer() async throws {
        let server = FakeSyncServer(dataset: "notes", token: "t0k")
        try server.start()
        let first = try initStore("first.sqlite", server: server.url.absoluteString)
        let second = try initStore("second.sqlite", server: server.url.absoluteString)
        // A change set made by a typed replica, delivered to the first store through the server.
        let typed = try ClientReplica()
        try typed.addNotes(2)
        let pushed = try cli.run("--store", first, "push", "--json")
        #expect(pushed.status == 0, "\(pushed.stderr)")
        #expect(pushed.stdout.contains(#""registeredSchema":true"#))

        try await typed.client(server).push()

        let pulled = try cli.run("--store", second, "pull")
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(pulled.stdout.contains("pulled 2 change sets in 1 page, 2 objects changed, 0 new conflicts, cursor 2"), "\(pulled.stdout)")
        let log = try cli.run("--store", second, "log")
        let lines = log.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.hasPrefix(typed.replica.replicaID.uuidString + ":") && $0.contains("  remote  ") && $0.hasSuffix("3 ops") })
        let status = try cli.run("--store", second, "status")
        #expect(status.stdout.contains("cursor: 2"))
        #expect(!status.stdout.contains("last sync: never"))
        #expect(try cli.run("--store", second, "conflicts").stdout.isEmpty)

        // The pulled objects read back as JSON, sorted by id, relationships included.
        let list = try cli.run("--store", second, "list", "Note")
        #expect(list.status == 0, "\(list.stderr)")
        let notes = try list.stdout.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(notes.count == 2)
        #expect(notes.map { $0["id"] as? String ?? "" } == notes.map { $0["id"] as? String ?? "" }.sorted())
        #expect(Set(notes.compactMap { $0["title"] as? String }) == ["note 0", "note 1"])
        #expect(notes.allSatisfy { $0["folder"] is NSNull && $0["count"] is Int })
        let id = try #require(notes.first?["id"] as? String)
        let get = try cli.run("--store", second, "get", "Note", id)
        #expect(get.status == 0)
        #expect(get.stdout == list.stdout.split(separator: "\n").first.map { $0 + "\n" })
        #expect(get.stdout.hasPrefix(#"{"count":"#), "keys are sorted")
        let absent = try cli.run("--store", second, "get", "Note", UUID().uuidString)
        #expect(absent.status == 1)
        #expect(absent.stderr.contains("there is no Note with id"))
        let unknown = try cli.run("--store", second, "list", "Nope")
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no entity 'Nope'; it has: Folder, Note"))
        #expect(try cli.run("--store", second, "list", "Folder").stdout.isEmpty)
        #expect(try cli.run("--store", second, "conflicts", "--clear").stdout == "cleared 0 conflict entries\n")
    }

    @Test func initFromASnapshot() async throws {
        let server = FakeSyncServer(dataset: "notes", token: "t0k")
        try server.start()
        let source = try ClientReplica()
        try source.addNotes(2)
        let snapshotPath = directory.appendingPathComponent("snapshot.sqlite").path
        try SQLiteConnection(path: source.path).execute("VACUUM INTO '\(snapshotPath)'")
        server.state.withLock { $0.snapshot = (try? Data(contentsOf: URL(fileURLWithPath: snapshotPath)), "7", nil) }
        let path = directory.appendingPathComponent("cloned.sqlite").path
        let both = try cli.run("init", path, "--snapshot", "--schema", schemaPath, "--server", server.url.absoluteString, "--dataset", "notes", "--token", "t0k")
        #expect(both.status == 2)
        #expect(both.stderr.contains("either --schema or --snapshot"))
        let result = try cli.run("init", path, "--snapshot", "--server", server.url.absoluteString, "--dataset", "notes", "--token", "t0k")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("from the server's snapshot"))
        #expect(result.stdout.hasSuffix("cursor 7)\n"))
        let status = try #require(try JSONSerialization.jsonObject(with: Data(try cli.run("--store", path, "status", "--json").stdout.utf8)) as? [String: Any])
        #expect(status["cursor"] as? String == "7")
        #expect(status["replica"] as? String != source.replica.replicaID.uuidString)
        #expect((status["vector"] as? [String: Int])?[source.replica.replicaID.uuidString] == 2)
        #expect(try cli.run("--store", path, "log").stdout.split(separator: "\n").count == 2)
    }

    @Test func readsShowRelationshipsInOrder() async throws {
        let server = FakeSyncServer(dataset: "notes", token: "t0k")
        try server.start()
        let path = try initStore("relations.sqlite", server: server.url.absoluteString)
        let typed = try ClientReplica()
        let folder = Folder()
        folder.name = "Inbox"
        let second = Note(), first = Note()
        second.title = "second"
        first.title = "first"
        folder.notes = [second, first]
        typed.context.insert(folder)
        try typed.context.save()
        try await typed.client(server).push()
        #expect(try cli.run("--store", path, "pull").status == 0)

        let got = try cli.run("--store", path, "get", "Folder", folder.objectID.uuidString)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(got.stdout.utf8)) as? [String: Any])
        #expect(object["name"] as? String == "Inbox")
        #expect(object["notes"] as? [String] == [second.objectID.uuidString, first.objectID.uuidString])
        let note = try #require(try JSONSerialization.jsonObject(with: Data(try cli.run("--store", path, "get", "Note", first.objectID.uuidString).stdout.utf8)) as? [String: Any])
        #expect(note["folder"] as? String == folder.objectID.uuidString)
    }

    @Test func editsAreChangeSetsThatReachTypedReplicas() async throws {
        let path = try initStore("edits.sqlite")
        func run(_ arguments: String...) throws -> CLIRunner.Result {
            let result = try cli.run(["--store", path] + arguments)
            #expect(result.status == 0, "sync \(arguments.joined(separator: " ")): \(result.stderr)")
            return result
        }
        func object(_ arguments: String...) throws -> [String: Any] {
            let result = try cli.run(["--store", path] + arguments)
            return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stderr)")
        }
        let folder = try run("put", "Folder", "name=Inbox").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(UUID(uuidString: folder) != nil)
        let noteID = UUID().uuidString
        #expect(try run("put", "Note", noteID, "title=first=draft", "count=3").stdout == noteID + "\n")
        let other = try run("put", "Note", "title=second").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try run("link", "Note", noteID, "folder", folder)
        _ = try run("link", "Folder", folder, "notes", other)
        #expect(try object("get", "Folder", folder)["notes"] as? [String] == [noteID, other])
        _ = try run("put", "Note", noteID, "count=5")
        let note = try object("get", "Note", noteID)
        #expect(note["count"] as? Int == 5)
        #expect(note["title"] as? String == "first=draft")
        #expect(note["folder"] as? String == folder)

        let badField = try cli.run("--store", path, "put", "Note", "colour=red")
        #expect(badField.status == 1)
        #expect(badField.stderr.contains("Note has no attribute 'colour'; it has: count, title"))
        let badValue = try cli.run("--store", path, "put", "Note", "count=many")
        #expect(badValue.status == 1)
        #expect(badValue.stderr.contains("Note.count: "))
        #expect(badValue.stderr.contains("'many' is not an integer"))
        let notPair = try cli.run("--store", path, "put", "Note", noteID, "count")
        #expect(notPair.status == 2)
        #expect(notPair.stderr.contains("'count' is not field=value"))
        let badID = try cli.run("--store", path, "link", "Note", "nope", "folder", folder)
        #expect(badID.status == 2)
        #expect(badID.stderr.contains("id 'nope' is not a UUID"))
        let tooFew = try cli.run("--store", path, "link", "Note", noteID, "folder")
        #expect(tooFew.status == 2)
        #expect(tooFew.stderr.contains("missing <targetId>"))

        _ = try run("unlink", "Folder", folder, "notes", other)
        #expect(try object("get", "Note", other)["folder"] is NSNull)
        // Folder.notes cascades: deleting the folder deletes the note still in it.
        _ = try run("delete", "Folder", folder)
        #expect(try run("list", "Note").stdout.split(separator: "\n").count == 1)
        #expect(try cli.run("--store", path, "delete", "Folder", folder).status == 1)

        let log = try run("log").stdout.split(separator: "\n")
        #expect(log.count == 8)
        #expect(log.allSatisfy { $0.contains("  pending  ") })
        #expect(try object("status", "--json")["pending"] as? Int == 8)

        // The CLI's change sets merge into a store with Swift types.
        let server = FakeSyncServer(dataset: "notes", token: "t0k")
        try server.start()
        _ = try run("init", path, "--schema", schemaPath, "--server", server.url.absoluteString, "--dataset", "notes", "--token", "t0k")
        #expect(try object("push", "--json")["pushed"] as? Int == 8)
        let typed = try ClientReplica()
        try await typed.client(server).pull()
        #expect(try typed.noteTitles() == ["second"])
        #expect(try typed.store.makeContext().fetchAll(Folder.self).isEmpty)
    }
}

import Foundation
import LocalStore
import SyncKit

/// A dataset that lives long: three replicas (`SyncReplica` + `SyncClient` in this process,
/// compacting their history as they go and keeping the newest ``conflictsKept`` entries of
/// their conflict journals) make `updates` updates in total to `objects` people
/// (attributes and a place each) through a real `syncd` child process (SQLite storage), with
/// deletes and re-creates, each syncing every `syncEvery` of its updates.
///
/// At each checkpoint (`checkpoint` updates, 100,000 by default, and the end) the replicas converge; then it prints the
/// sizes of syncd's dataset file and of each client store before and after a compaction
/// (`syncd dataset compact`, and a sync that hands the clients the stable vector), and after the
/// clients' next sync and syncd's next compaction (which releases forgotten identifiers), against a
/// store holding only the live objects written fresh, and times a new client's bootstrap
/// (snapshot + pull). At the end the three replicas must hold the same objects.
struct LongRunBenchmark {
    /// Updates of all three replicas together.
    let updates: Int
    /// The people the replicas keep updating; a delete is followed by a re-create elsewhere.
    let objects: Int
    /// Updates each replica makes between two of its syncs.
    let syncEvery: Int
    /// The checkpoint before the end where sizes and the bootstrap are measured too.
    let checkpoint: Int
    /// Where to copy syncd's dataset file and the clients' stores at the end (none: they go with the run).
    var keepDirectory: String?

    /// Updates per save: a save (one change set) groups this many.
    static let updatesPerSave = 10
    /// The places people move between.
    static let places = 10
    /// The conflict journal entries each client keeps (`SyncClient.Configuration.conflictRetention`).
    static let conflictsKept = 10_000
    private static let dataset = "longrun"

    /// One of the three replicas: its store, client and a context of its current view.
    private final class Participant {
        let name: String
        let path: String
        let replica: SyncReplica
        let client: SyncClient
        var context: ObjectContext
        var people: [Person] = []
        var places: [Place] = []
        /// People it creates on its next turns, for people another replica deleted.
        var owedCreates = 0
        /// Change sets and file bytes its compactions dropped and freed so far.
        var compactedChangeSets = 0
        var compactionFileBytesFreed: Int64 = 0

        init(name: String, path: String, configuration: SyncClient.Configuration) throws {
            self.name = name
            self.path = path
            let store = try ObjectStore(path: path, entities: benchEntities)
            replica = try SyncReplica(store: store)
            client = SyncClient(replica: replica, configuration: configuration)
            context = try store.makeContext()
        }

        /// Syncs, then reads its view again in a fresh context (merges changed the store under the old one).
        func sync() throws {
            let report = try blocking { [client] in try await client.sync() }
            if let compaction = report.compaction {
                compactedChangeSets += compaction.changeSets
                compactionFileBytesFreed += compaction.fileBytesFreed
            }
            context = try replica.store.makeContext()
            people = try context.fetchAll(Person.self)
            places = try context.fetchAll(Place.self)
        }
    }

    func run() throws {
        say("")
        say("long run: 3 replicas, \(grouped(updates)) updates to \(grouped(objects)) people (1% deletes, re-created by another replica), "
              + "each syncing every \(grouped(syncEvery)) of its updates, \(Self.updatesPerSave) updates per save, "
              + "each keeping its newest \(grouped(Self.conflictsKept)) conflict journal entries; syncd on SQLite")
        let server = try SyncdProcess.start()
        defer { server.stop() }
        let token = try server.addToken(dataset: Self.dataset)
        var configuration = SyncClient.Configuration(serverURL: server.url, dataset: Self.dataset, token: token)
        configuration.historyCompaction = .changeSetsAndDeletedObjects
        configuration.conflictRetention = .newest(Self.conflictsKept)
        let participants = try ["A", "B", "C"].map {
            try Participant(name: $0, path: server.dataDirectory.appendingPathComponent("\($0.lowercased()).sqlite").path, configuration: configuration)
        }
        try seed(participants)

        var random = SplitMix64(seed: 0x10_46_2a)
        var done = 0
        var turn = 0
        let checkpoints = Set([min(checkpoint, updates), updates])
        let start = Date()
        var nextProgress = updates / 10
        while done < updates {
            let participant = participants[turn % 3]
            let count = min(syncEvery, updates - done)
            try makeUpdates(count, by: participant, next: participants[(turn + 1) % 3], random: &random)
            try participant.sync()
            done += count
            turn += 1
            if done >= nextProgress && done < updates {
                say(String(format: "  %@ updates after %.0f s", grouped(done), Date().timeIntervalSince(start)))
                nextProgress += updates / 10
            }
            // A checkpoint falls on a sync boundary of the replica that reached it.
            if let checkpoint = checkpoints.filter({ $0 <= done }).max(), checkpoint > done - count {
                try measure(at: done, participants: participants, server: server, configuration: configuration,
                            elapsed: Date().timeIntervalSince(start), isLast: done == updates)
            }
        }
    }

    /// A creates the places and people; everyone takes them.
    private func seed(_ participants: [Participant]) throws {
        let first = participants[0]
        let places = (0..<Self.places).map { index in
            let place = Place()
            place.name = "place \(index)"
            first.context.insert(place)
            return place
        }
        for index in 0..<objects {
            let person = Person()
            person.name = "person \(index)"
            person.email = "person\(index)@example.com"
            person.place = places[index % places.count]
            first.context.insert(person)
        }
        try first.context.save()
        for participant in participants { try participant.sync() }
    }

    /// `count` updates by `participant`, `updatesPerSave` per save: mostly attribute and place
    /// changes of a random person; 1% deletes, for each of which `next` creates a person later.
    private func makeUpdates(_ count: Int, by participant: Participant, next: Participant, random: inout SplitMix64) throws {
        var unsaved = 0
        for update in 0..<count {
            if participant.owedCreates > 0 || participant.people.isEmpty {
                let person = Person()
                person.name = "re-created \(update)"
                person.place = participant.places.randomElement(using: &random)
                participant.context.insert(person)
                participant.people.append(person)
                participant.owedCreates = max(0, participant.owedCreates - 1)
            } else {
                let index = Int(random.next() % UInt64(participant.people.count))
                let person = participant.people[index]
                switch random.next() % 100 {
                case 0:
                    participant.context.delete(person)
                    participant.people.remove(at: index)
                    next.owedCreates += 1
                case 1..<30:
                    person.place = participant.places.randomElement(using: &random)
                case 30..<60:
                    person.name = "\(participant.name) \(update) \(random.next() % 1000)"
                default:
                    person.age = Int(random.next() % 100)
                    person.score = Double(random.next() % 10_000) / 100
                    person.isActive.toggle()
                }
            }
            unsaved += 1
            if unsaved == Self.updatesPerSave || update == count - 1 {
                try participant.context.save()
                unsaved = 0
            }
        }
    }

    /// Converges the replicas, prints sizes before and after compaction against a live-only
    /// store, and times a new client's bootstrap.
    private func measure(at done: Int, participants: [Participant], server: SyncdProcess,
                         configuration: SyncClient.Configuration, elapsed: Double, isLast: Bool) throws {
        say("")
        say(String(format: "  at %@ updates (%.0f s):", grouped(done), elapsed))
        // Twice round: everyone has pushed everything, then everyone has pulled everything.
        for _ in 0..<2 { for participant in participants { try participant.sync() } }
        let datasetPath = server.dataDirectory.appendingPathComponent("data/datasets/\(Self.dataset)/store.sqlite").path
        let live = try liveOnlyStoreBytes(of: participants[0], directory: server.dataDirectory, label: "\(done)")
        say("    live-only store (\(grouped(participants[0].people.count)) people, \(Self.places) places, no sync): \(mebibytes(Int(live)))")
        printSizes("before compaction", datasetPath: datasetPath, participants: participants, live: live)
        say("    clients' compactions while syncing so far: "
              + participants.map { "\($0.name) \(grouped($0.compactedChangeSets)) change sets, \(mebibytes(Int($0.compactionFileBytesFreed))) freed" }
                .joined(separator: "; "))
        let compaction = try server.run(["dataset", "compact", "--dataset", Self.dataset])
        say("    syncd dataset compact: \(compaction)")
        // One more round hands every client the stable vector all three now share.
        for participant in participants { try participant.sync() }
        printSizes("after compaction", datasetPath: datasetPath, participants: participants, live: live)
        // The clients compacted below the vector that compaction used, and say so on their next
        // pull; syncd's next compaction (a deployment's runs on its own schedule) then releases
        // the identifiers of the objects every client forgot.
        for participant in participants { try participant.sync() }
        let release = try server.run(["dataset", "compact", "--dataset", Self.dataset])
        say("    syncd dataset compact again: \(release)")
        printSizes("after the clients' next sync and syncd's next compaction", datasetPath: datasetPath, participants: participants, live: live)
        // What stays after compaction and grows with history: the rows to look at when a ratio is high.
        let held = try participants[0].replica.heldHistory()
        say("    A holds: \(grouped(held.changeSets)) change sets, \(grouped(held.deleteRecords)) delete records, "
            + "\(grouped(held.tombstones)) tombstones, \(grouped(held.fieldStamps)) field stamps, \(grouped(held.edgeAdditions)) edge additions, "
            + "\(grouped(held.edgeRemovals)) edge removals, \(grouped(held.journalEntries)) journal entries")
        say("    largest tables: syncd \(Self.largestTables(of: datasetPath)); A \(Self.largestTables(of: participants[0].path))")
        say("    space no row uses (free pages; unused bytes inside the pages of tables and indexes other than the journal): "
              + "syncd \(Self.unusedSpace(of: datasetPath)); A \(Self.unusedSpace(of: participants[0].path))")

        let bootstrapPath = server.dataDirectory.appendingPathComponent("bootstrap-\(done).sqlite").path
        var bootstrapReplica: SyncReplica?
        var pulled = SyncReport()
        var pullSeconds = 0.0
        let seconds = try measureSeconds {
            try blocking { () async throws -> Void in
                _ = try await SyncClient.createStoreFromSnapshot(at: bootstrapPath, configuration: configuration)
            }
            let replica = try SyncReplica(store: try ObjectStore(path: bootstrapPath, entities: benchEntities))
            let client = SyncClient(replica: replica, configuration: configuration)
            pullSeconds = try measureSeconds { pulled = try blocking { try await client.pull() } }
            bootstrapReplica = replica
        }
        guard let bootstrapReplica else { throw BenchmarkFailure("long run: the bootstrap made no replica") }
        say(String(format: "    new client's bootstrap (snapshot + pull of %d change sets): %.2f s (the pull %.2f s), store %@", pulled.pulled, seconds,
                     pullSeconds, mebibytes(Int(Self.fileBytes(bootstrapPath)))))
        let reference = try participants[0].replica.records("Person")
        for replica in participants.map(\.replica) + [bootstrapReplica] where try replica.records("Person") != reference {
            throw BenchmarkFailure("long run: at \(done) updates replica \(replica.replicaID) holds other people than A after converging")
        }
        if isLast {
            say("    converged: A, B, C and the new client hold the same \(grouped(reference.count)) people")
            // What an app that reads and clears its journal keeps: the file gives the pages back.
            for participant in participants { try participant.replica.clearConflicts() }
            printSizes("after each app clears its conflict journal", datasetPath: datasetPath, participants: participants, live: live)
            if let keepDirectory { try keep(datasetPath: datasetPath, participants: participants, in: keepDirectory) }
        } else {
            // A silent replica would hold the stable vector back: the measuring client leaves for good.
            _ = try server.run(["replica", "retire", "--dataset", Self.dataset, "--replica", bootstrapReplica.replicaID.uuidString])
        }
    }

    /// Copies syncd's dataset file and each client's store (checkpointed, so each file is whole) into `directory`.
    private func keep(datasetPath: String, participants: [Participant], in directory: String) throws {
        let files = FileManager.default
        try files.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let copies = [(datasetPath, "syncd-\(Self.dataset).sqlite")] + participants.map { ($0.path, "\($0.name.lowercased()).sqlite") }
        for (source, name) in copies {
            let destination = (directory as NSString).appendingPathComponent(name)
            try? files.removeItem(atPath: destination)
            try SQLiteConnection(path: source).execute("PRAGMA wal_checkpoint(TRUNCATE)")
            try files.copyItem(atPath: source, toPath: destination)
        }
        say("    kept: syncd's dataset and the clients' stores in \(directory)")
    }

    private func printSizes(_ title: String, datasetPath: String, participants: [Participant], live: Int64) {
        func size(_ bytes: Int64) -> String {
            String(format: "%@ (%.1fx)", mebibytes(Int(bytes)), Double(bytes) / Double(max(live, 1)))
        }
        say("    \(title): syncd dataset \(size(Self.fileBytes(datasetPath))); "
              + participants.map { "\($0.name) \(size(Self.fileBytes($0.path)))" }.joined(separator: ", "))
        // A client's conflict journal is its app's to read and clear (`clearConflicts(through:)`),
        // not history: the stores without it, for the run where the apps have cleared theirs.
        say("      clients without their conflict journals: "
              + participants.map { "\($0.name) \(size(Self.fileBytes($0.path) - Self.journalBytes(of: $0.path)))" }.joined(separator: ", "))
    }

    /// The bytes the conflict journal's table and index take in the store file at `path` (SQLite's `dbstat`).
    private static func journalBytes(of path: String) -> Int64 {
        guard let connection = try? SQLiteConnection(path: path),
              case .integer(let bytes)? = try? connection.rows(
                  "SELECT ifnull(sum(pgsize), 0) FROM dbstat WHERE name IN ('_sync_conflict', '_sync_conflict_cause')").first?.first else { return 0 }
        return bytes
    }

    /// The bytes of a plain store (no sync) holding copies of `participant`'s live people and
    /// places, written fresh in one save.
    private func liveOnlyStoreBytes(of participant: Participant, directory: URL, label: String) throws -> Int64 {
        let path = directory.appendingPathComponent("live-only-\(label).sqlite").path
        do {
            let store = try ObjectStore(path: path, entities: benchEntities)
            let context = try store.makeContext()
            let places = participant.places
            let placeIndex = Dictionary(uniqueKeysWithValues: places.enumerated().map { ($0.element.objectID, $0.offset) })
            let people = participant.people.map { person in
                // Every person has a place: they are set on creation and places are never deleted.
                PersonRecord(name: person.name, email: person.email, age: person.age, score: person.score, born: person.born,
                             isActive: person.isActive, mood: person.mood, token: person.token,
                             place: person.place.flatMap { placeIndex[$0.objectID] } ?? 0)
            }
            try StoreBenchmark.insert(people, places.map { PlaceRecord(name: $0.name) }, into: context)
        }
        return Self.fileBytes(path)
    }

    /// The largest tables and indexes of the store file at `path` with their sizes (SQLite's
    /// `dbstat`), largest first.
    private static func largestTables(of path: String, count: Int = 5) -> String {
        guard let connection = try? SQLiteConnection(path: path),
              let rows = try? connection.rows("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT \(count)") else {
            return "(dbstat unavailable)"
        }
        return rows.compactMap { row -> String? in
            guard case .text(let name) = row[0], case .integer(let bytes) = row[1] else { return nil }
            return "\(name) \(mebibytes(Int(bytes)))"
        }.joined(separator: ", ")
    }

    /// The space of the store file at `path` that holds no row: its free pages (reused by later
    /// writes, given back only by a vacuum) and the unused bytes inside the pages of its tables
    /// and indexes other than the conflict journal (SQLite's `dbstat`), which only a whole
    /// `VACUUM` gives back.
    private static func unusedSpace(of path: String) -> String {
        guard let connection = try? SQLiteConnection(path: path),
              case .integer(let free)? = try? connection.rows("SELECT freelist_count * page_size FROM pragma_freelist_count(), pragma_page_size()").first?.first,
              case .integer(let unused)? = try? connection.rows(
                  "SELECT ifnull(sum(unused), 0) FROM dbstat WHERE name NOT IN ('_sync_conflict', '_sync_conflict_cause')").first?.first else {
            return "(dbstat unavailable)"
        }
        return "\(mebibytes(Int(free))) free, \(mebibytes(Int(unused))) unused inside pages"
    }

    /// The bytes of the store file at `path` and its WAL.
    static func fileBytes(_ path: String) -> Int64 {
        ["", "-wal"].reduce(0) { total, suffix in
            total + ((try? FileManager.default.attributesOfItem(atPath: path + suffix)[.size] as? NSNumber)?.int64Value ?? 0)
        }
    }
}

/// Writes `line` to standard output at once (`print` buffers it when the output is a file): a
/// long run's progress shows as it happens.
private func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// A small seeded generator (SplitMix64): the same run every time.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

extension SyncdProcess {
    /// Runs `syncd ARGUMENTS --data DIR` (with `--database` when the server has one) to its end;
    /// its standard output, trimmed.
    ///
    /// - Throws: ``BenchmarkFailure`` when it exits with another status than 0.
    func run(_ arguments: [String]) throws -> String {
        let command = Process()
        command.executableURL = binary
        command.arguments = arguments + ["--data", dataDirectory.appendingPathComponent("data").path]
            + (databaseURL.map { ["--database", $0] } ?? [])
        let output = Pipe(), errors = Pipe()
        command.standardOutput = output
        command.standardError = errors
        try command.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        command.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard command.terminationStatus == 0 else {
            throw BenchmarkFailure("syncd \(arguments.joined(separator: " ")) failed (status \(command.terminationStatus)): \(text) \(String(decoding: errorData, as: UTF8.self))")
        }
        return text
    }
}

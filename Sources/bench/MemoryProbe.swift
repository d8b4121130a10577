import Foundation
import LocalStore

/// Measures how resident memory grows while fetching N objects, LocalStore against raw, and
/// LocalStore's objects once read through their accessors (which gives each its Swift
/// Observation registrar).
///
/// Each reading runs in a child process (this executable with the internal `_rss-probe`
/// subcommand): in the benchmark's own process, memory the allocator kept from earlier
/// workloads would be reused and hide the growth.
///
/// Both sides use the same 16 MiB SQLite page cache, which a full read of the table fills up to
/// the table's size whatever the objects cost. Before the first reading each child fills it with
/// a query that scans every row of the table and makes no object, so the growth measured is
/// that of the fetched objects (and of what the store keeps per object), not of the cache.
enum MemoryProbe {
    /// The internal subcommand a child runs: `_rss-probe localstore|localstore-read|raw <store path>`.
    static let subcommand = "_rss-probe"

    /// Populates a store per count, has children fetch it both ways, and prints the growth.
    static func printFetchGrowth(counts: [Int]) throws {
        print("memory: resident-set growth while fetching every person (each in a fresh process, page cache filled first)")
        print(pad("objects", to: 10, right: false) + pad("LocalStore", to: 14, right: true) + pad("bytes/object", to: 14, right: true)
              + pad("raw C", to: 14, right: true) + pad("bytes/object", to: 14, right: true)
              + pad("LS, read", to: 14, right: true) + pad("bytes/object", to: 14, right: true))
        for count in counts where count > 0 {
            let path = temporaryStorePath("memory")
            defer { removeStoreFile(path) }
            try StoreBenchmark.populatePeople(path, count: count)
            let localStore = try childGrowth(side: "localstore", path: path)
            let raw = try childGrowth(side: "raw", path: path)
            let read = try childGrowth(side: "localstore-read", path: path)
            print(pad(grouped(count), to: 10, right: false)
                  + pad(mebibytes(localStore), to: 14, right: true) + pad(grouped(localStore / count), to: 14, right: true)
                  + pad(mebibytes(raw), to: 14, right: true) + pad(grouped(raw / count), to: 14, right: true)
                  + pad(mebibytes(read), to: 14, right: true) + pad(grouped(read / count), to: 14, right: true))
        }
    }

    /// Runs the probe in a child process and returns the growth in bytes it reports.
    private static func childGrowth(side: String, path: String) throws -> Int {
        guard let executable = Bundle.main.executableURL else { throw BenchmarkFailure("cannot find this executable to run the memory probe") }
        let process = Process()
        process.executableURL = executable
        process.arguments = [subcommand, side, path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let bytes = Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchmarkFailure("the memory probe (\(side)) failed with status \(process.terminationStatus)")
        }
        return bytes
    }

    /// The child's side: opens the store, fetches every person (`localstore-read`: and reads one
    /// attribute of each), keeps them, and prints how many bytes the resident set grew by.
    static func runChild(arguments: [String]) throws {
        guard arguments.count == 2 else { throw BenchmarkFailure("usage: bench \(subcommand) localstore|localstore-read|raw PATH") }
        let path = arguments[1]
        switch arguments[0] {
        case "localstore", "localstore-read":
            let context = try ObjectStore(path: path, entities: benchEntities).makeContext()
            let email = unmatchedEmail
            try expectNoMatch(try context.fetchCount(FetchDescriptor<Person>(predicate: #Predicate { $0.email == email })))
            let before = ProcessMemory.currentBytes()
            let people = try context.fetchAll(Person.self)
            if arguments[0] == "localstore-read" {
                // Reading through the accessor makes each object's registrar; the check keeps the reads.
                let ages = people.reduce(0) { $0 &+ $1.age }
                precondition(ages >= 0, "ages are never negative")
            }
            let after = ProcessMemory.currentBytes()
            withExtendedLifetime(people) { print(after - before) }
        case "raw":
            let database = try RawDatabase(path: path)
            try expectNoMatch(try database.countPeople(email: unmatchedEmail))
            let before = ProcessMemory.currentBytes()
            let people = try database.fetchPeople()
            let after = ProcessMemory.currentBytes()
            withExtendedLifetime(people) { print(after - before) }
        default:
            throw BenchmarkFailure("unknown probe side \(arguments[0])")
        }
    }

    /// An e-mail no person has: counting the people with it reads every row of the table (the
    /// column has no index) and makes no object.
    private static let unmatchedEmail = "nobody@example.com"

    private static func expectNoMatch(_ count: Int) throws {
        if count != 0 { throw BenchmarkFailure("\(count) people have the e-mail that should match none") }
    }
}

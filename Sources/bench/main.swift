import CommandLineArguments
import Foundation

// `bench <subcommand> [--rows N] [--repeat N]`: LocalStore's and SyncKit's benchmarks. Build in release
// mode, or the figures mean nothing: `swift run -c release bench store`.

/// Settings every benchmark takes from the command line.
struct BenchOptions {
    /// Objects (rows) per workload.
    var rows = 100_000
    /// Runs per workload; the table reports the best and the median.
    var repeats = 3
    /// For `sync`: run only this part (`capture`, `merge` or `end-to-end`), e.g. while profiling.
    var only: String?
    /// For `storage`: the PostgreSQL database to compare with SQLite.
    var databaseURL = ProcessInfo.processInfo.environment["OBJECTSYNC_POSTGRES_URL"]
    /// For `longrun`: updates of the three replicas together.
    var updates = 1_000_000
    /// For `longrun`: the objects they update.
    var objects = 1_000
    /// For `longrun`: updates each replica makes between two of its syncs.
    var syncEvery = 1_000
    /// For `longrun`: the updates at which it measures before the end.
    var checkpoint = 100_000
    /// For `longrun`: a directory to copy syncd's dataset and the clients' stores into at the end, for inspection.
    var keepDirectory: String?
}

/// A benchmark the command line can run.
struct Subcommand {
    let name: String
    let summary: String
    let run: (BenchOptions) throws -> Void
}

/// The implemented benchmarks, in the order `all` runs them; usage and `all` pick them up from this list.
let subcommands: [Subcommand] = [
    Subcommand(name: "store", summary: "insert, fetch and traverse with LocalStore and with the raw SQLite C API; memory growth") {
        try StoreBenchmark(rows: $0.rows, repeats: $0.repeats).run()
    },
    // The query benchmark picks its own number of runs; it takes only --rows.
    Subcommand(name: "query", summary: "indexed lookup, indexed range and full-scan queries with LocalStore and with the raw SQLite C API") {
        try printQueryBenchmark(rows: $0.rows)
    },
    Subcommand(name: "observe", summary: "insert and merge with one Swift Observation observer (an observed live query) vs none") {
        try ObservationBenchmark(rows: $0.rows, repeats: $0.repeats).run()
    },
    // Needs the release `syncd` next to the bench binary (`swift build -c release --product syncd`).
    Subcommand(name: "sync", summary: "insert with change capture vs raw C API, merge (applied and stale), end to end through syncd") {
        try SyncBenchmark(rows: $0.rows, repeats: $0.repeats, only: $0.only).run()
    },
    // Needs the release `syncd` too; --rows is the number of objects of the one save (1000000 for the goal).
    Subcommand(name: "large", summary: "one save of --rows small objects pushed and pulled through syncd in parts: time and peak memory") {
        try LargeChangeSetBenchmark(objects: $0.rows).run()
    },
    // Needs the release `syncd` too, and a PostgreSQL database for its PostgreSQL rows.
    Subcommand(name: "storage", summary: "syncd's push and pull rates on SQLite vs PostgreSQL, one and three instances, one and 16 datasets") {
        try StorageBenchmark(databaseURL: $0.databaseURL, repeats: $0.repeats).run()
    },
    // --rows is the number of change sets the store holds before compacting.
    Subcommand(name: "compaction", summary: "history compaction of a store holding --rows change sets of another replica: the first compaction and one with nothing to drop") {
        try CompactionBenchmark(changeSets: $0.rows, repeats: $0.repeats).run()
    },
    // Needs the release `syncd` too. Long: a million updates by default (--updates 100000 while developing).
    Subcommand(name: "longrun", summary: "3 replicas make --updates updates to --objects objects through syncd, compacting: store sizes before and after compaction vs live data, bootstrap time") {
        try LongRunBenchmark(updates: $0.updates, objects: $0.objects, syncEvery: $0.syncEvery, checkpoint: $0.checkpoint,
                             keepDirectory: $0.keepDirectory).run()
    },
]

let program = CommandDescription(
    name: "bench", summary: "LocalStore's and SyncKit's benchmarks",
    discussion: "Build in release mode, or the figures mean nothing: swift run -c release bench store",
    options: [
        .value("rows", valueName: "N", "objects per workload (default 100000)"),
        .value("repeat", valueName: "N", "runs per workload; the best run counts, the median is shown too (default 3)"),
        .value("only", valueName: "PART", "sync only: run one part, \(SyncBenchmark.parts.joined(separator: ", ")) (for profiling)"),
        .value("database", valueName: "URL", "storage only: the PostgreSQL database to compare (default $OBJECTSYNC_POSTGRES_URL)"),
        .value("updates", valueName: "N", "longrun only: updates of the three replicas together (default 1000000)"),
        .value("objects", valueName: "N", "longrun only: objects the replicas update (default 1000)"),
        .value("sync-every", valueName: "N", "longrun only: updates each replica makes between two of its syncs (default 1000)"),
        .value("checkpoint", valueName: "N", "longrun only: also measure sizes and the bootstrap at N updates (default 100000)"),
        .value("keep", valueName: "DIR", "longrun only: copy syncd's dataset and the clients' stores into DIR at the end, for inspection"),
    ],
    subcommands: subcommands.map { CommandDescription(name: $0.name, summary: $0.summary) } + [
        CommandDescription(name: "all", summary: "every subcommand above, in order"),
        // Internal: the child process of the memory measurement.
        CommandDescription(
            name: MemoryProbe.subcommand, summary: "measure memory in a child process",
            positionals: [PositionalDescription("side"), PositionalDescription("PATH")], isHidden: true),
        // Internal: seeds a syncd dataset for scripts/bench-http.sh.
        CommandDescription(
            name: SyncSeed.subcommand, summary: "seed a syncd dataset",
            positionals: [PositionalDescription("URL"), PositionalDescription("DATASET"), PositionalDescription("TOKEN")], isHidden: true),
    ])

/// Reads `--rows`, `--repeat`, the long run's numbers, `--only` and `--database`, checking their values.
func benchOptions(_ command: ParsedCommand) throws(UsageError) -> BenchOptions {
    var options = BenchOptions()
    for name in ["rows", "repeat", "updates", "objects", "sync-every", "checkpoint"] {
        guard let text = command.value(name) else { continue }
        guard let value = Int(text), value > 0 else { throw command.usageError("--\(name) needs a positive whole number, not '\(text)'") }
        switch name {
        case "rows": options.rows = value
        case "repeat": options.repeats = value
        case "updates": options.updates = value
        case "objects": options.objects = value
        case "sync-every": options.syncEvery = value
        default: options.checkpoint = value
        }
    }
    if let part = command.value("only") {
        guard SyncBenchmark.parts.contains(part) else {
            throw command.usageError("--only needs one of \(SyncBenchmark.parts.joined(separator: ", ")), not '\(part)'")
        }
        options.only = part
    }
    if let url = command.value("database") { options.databaseURL = url }
    options.keepDirectory = command.value("keep")
    return options
}

do {
    switch try ArgumentParser(program).parse(Array(CommandLine.arguments.dropFirst())) {
    case .help(let text):
        print(text)
    case .run(let command):
        switch command.name {
        case MemoryProbe.subcommand:
            try MemoryProbe.runChild(arguments: command.positionals)
        case SyncSeed.subcommand:
            try SyncSeed.run(arguments: command.positionals)
        case "all":
            let options = try benchOptions(command)
            for subcommand in subcommands { try subcommand.run(options) }
        default:
            let options = try benchOptions(command)
            try subcommands.first { $0.name == command.name }?.run(options)
        }
    }
} catch let error as UsageError {
    FileHandle.standardError.write(Data((error.description + "\n").utf8))
    exit(UsageError.exitStatus)
} catch {
    FileHandle.standardError.write(Data("bench: \(error)\n".utf8))
    exit(1)
}

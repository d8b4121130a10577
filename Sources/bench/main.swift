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
    // Needs the release `syncd` next to the bench binary (`swift build -c release --product syncd`).
    Subcommand(name: "sync", summary: "insert with change capture vs raw C API, merge (applied and stale), end to end through syncd") {
        try SyncBenchmark(rows: $0.rows, repeats: $0.repeats, only: $0.only).run()
    },
]

let usage = """
    usage: bench <subcommand> [--rows N] [--repeat N] [--only PART]

    subcommands:
    \(subcommands.map { "  " + pad($0.name, to: 8, right: false) + $0.summary }.joined(separator: "\n"))
      all     every subcommand above, in order

    options:
      --rows N     objects per workload (default 100000)
      --repeat N   runs per workload; the best run counts, the median is shown too (default 3)
      --only PART  sync only: run one part, capture, merge or end-to-end (for profiling)

    """

/// Prints `message` and the usage on stderr and exits with status 2 (a usage error).
func exitWithUsage(_ message: String? = nil) -> Never {
    var text = message.map { "bench: \($0)\n" } ?? ""
    text += usage
    FileHandle.standardError.write(Data(text.utf8))
    exit(2)
}

/// Parses `--rows N` and `--repeat N`.
func parseOptions(_ arguments: ArraySlice<String>) -> BenchOptions {
    var options = BenchOptions()
    var remaining = arguments
    while let flag = remaining.popFirst() {
        if flag == "--only" {
            guard let part = remaining.popFirst(), SyncBenchmark.parts.contains(part) else {
                exitWithUsage("--only needs one of \(SyncBenchmark.parts.joined(separator: ", "))")
            }
            options.only = part
            continue
        }
        guard flag == "--rows" || flag == "--repeat" else { exitWithUsage("unknown option \(flag)") }
        guard let text = remaining.popFirst(), let value = Int(text), value > 0 else {
            exitWithUsage("\(flag) needs a positive whole number")
        }
        if flag == "--rows" { options.rows = value } else { options.repeats = value }
    }
    return options
}

let arguments = CommandLine.arguments.dropFirst()
guard let name = arguments.first else { exitWithUsage() }

do {
    if name == MemoryProbe.subcommand {
        // Internal: the child process of the memory measurement; not listed in the usage.
        try MemoryProbe.runChild(arguments: Array(arguments.dropFirst()))
    } else if name == SyncSeed.subcommand {
        // Internal: seeds a syncd dataset for scripts/bench-http.sh; not listed in the usage.
        try SyncSeed.run(arguments: Array(arguments.dropFirst()))
    } else if name == "all" {
        let options = parseOptions(arguments.dropFirst())
        for subcommand in subcommands { try subcommand.run(options) }
    } else if let subcommand = subcommands.first(where: { $0.name == name }) {
        try subcommand.run(parseOptions(arguments.dropFirst()))
    } else if name == "-h" || name == "--help" || name == "help" {
        print(usage, terminator: "")
    } else {
        exitWithUsage("unknown subcommand \(name)")
    }
} catch {
    FileHandle.standardError.write(Data("bench: \(error)\n".utf8))
    exit(1)
}

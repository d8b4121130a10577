import CommandLineArguments
import Foundation
import HTTPServer
import PostgreSQLClient
import SyncServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure while running a valid command: exit status 1.
struct RuntimeError: Error {
    var message: String
}

enum Command {
    static let data = OptionDescription.value("data", valueName: "DIR", "data directory (default ./syncd-data)")
    static let database = OptionDescription.value(
        "database", valueName: "URL",
        "keep datasets and tokens in this PostgreSQL database (postgresql://USER@HOST:PORT/DB), shared by every syncd given it; DIR then holds this instance's caches")

    static let program = CommandDescription(
        name: "syncd", summary: "the sync server",
        discussion: """
            The sync server (sync protocol v1). Data lives in DIR (default ./syncd-data):
            DIR/tokens.sqlite and DIR/datasets/<name>/store.sqlite. With --database URL, datasets and
            tokens live in that PostgreSQL database instead, which several syncd instances may share;
            each instance keeps a cache of the merged state in its own DIR/datasets/<name>/cache.sqlite.
            """,
        subcommands: [
            CommandDescription(
                name: "serve", summary: "serve the sync protocol over HTTP/1.1",
                discussion: """
                    Serves the sync protocol over HTTP/1.1 until SIGTERM or SIGINT (a second signal stops at once).

                    Prints "syncd listening on http://HOST:PORT" to stderr once ready, then one line per request:
                    <ISO8601 time> <remote> <method> <path> <status> <bytes> <ms>ms

                    A request with a body is checked (route, bearer token, dataset) as soon as its head
                    arrives: a refused one is answered 401/403/404 before any of its body is read.
                    Requests too slow to arrive get 408; a body that would push the memory held by
                    unfinished bodies past --max-body-memory gets 503 with Retry-After. At
                    --max-connections a new connection displaces the longest-idle connection, else the
                    one that has been sending its request for longest; connections with a request being
                    handled or a response being written are never displaced.
                    """,
                options: [
                    data,
                    database,
                    .value("host", valueName: "HOST", "numeric address to bind (default 127.0.0.1; 0.0.0.0 for all interfaces)"),
                    .value("port", valueName: "PORT", "TCP port (default 8080; 0 picks a free port, printed at start)"),
                    .value("max-clock-skew", valueName: "SECONDS", "how far a change set's clock may run ahead of the server's (default 300)"),
                    .value("max-connections", valueName: "N", "open client connections at most (default 4096)"),
                    .value("head-timeout", valueName: "SECONDS", "time for a request head to arrive after its first byte, and the longest pause within a body (default 10)"),
                    .value("body-timeout", valueName: "SECONDS", "time for a whole request body to arrive after its head (default 60)"),
                    .value("max-body-memory", valueName: "MIB", "memory all unfinished request bodies may hold together, in MiB (default 256)"),
                    replicaHorizonDays,
                    replicaHorizonSeconds,
                    .value("compact-every", valueName: "SECONDS", "compact every dataset's log below its stable vector this often (default 14400; see 'dataset compact')"),
                    .value("max-body-bytes", valueName: "BYTES", "largest request body (default 33554432); larger change sets travel as uploads in parts of half this"),
                ]),
            replicaCommand,
            CommandDescription(
                name: "token", summary: "add, list and revoke the datasets' bearer tokens",
                discussion: """
                    A token opens exactly one dataset, read-write (push, register schemas, pull, snapshot) or
                    read-only (pull, read the schema, snapshot), until it expires or is revoked. Only its
                    SHA-256 is stored in DIR/tokens.sqlite (with --database, in that PostgreSQL database).
                    """,
                options: [data, database],
                subcommands: [
                    CommandDescription(
                        name: "add", summary: "create a token for dataset NAME and print it (only once)",
                        discussion: """
                            Prints the token alone on stdout (for scripts) and its scope and expiry on stderr.
                            Without --read-only the token is read-write; without --expires it never expires.
                            """,
                        options: [
                            .value("dataset", valueName: "NAME", "the dataset the token opens", required: true),
                            .flag("read-only", "the token may pull, read the schema and take snapshots, but not push or register schemas"),
                            .value("expires", valueName: "DURATION", "the token stops working after DURATION: a number and s, m, h or d (e.g. 30d)"),
                        ]),
                    CommandDescription(name: "list", summary: "list tokens: hash prefix, dataset, scope, creation time, expiry"),
                    CommandDescription(
                        name: "revoke", summary: "remove the tokens whose hash starts with HASH_PREFIX (8+ hex digits)",
                        positionals: [PositionalDescription("HASH_PREFIX")]),
                ]),
            CommandDescription(
                name: "dataset", summary: "move a dataset from SQLite storage (--data) to PostgreSQL storage (--database); compact its log",
                discussion: """
                    export writes a dataset of DIR (its schema, replica keys and whole change-set log) to a file;
                    import creates the dataset from that file in the PostgreSQL database. The imported log keeps
                    its cursors and digests, so clients go on pulling where they were. Stop the SQLite syncd first.
                    A compacted log has lost its start: its export carries the store file as the base that
                    PostgreSQL keeps for a compacted log, plus the entries after it.
                    """,
                subcommands: [
                    CommandDescription(
                        name: "export", summary: "write dataset NAME of DIR to FILE (default stdout)",
                        options: [
                            data,
                            .value("dataset", valueName: "NAME", "the dataset to export", required: true),
                            .value("output", valueName: "FILE", "where to write the export (default stdout)"),
                        ]),
                    CommandDescription(
                        name: "import", summary: "create dataset NAME in the PostgreSQL database from FILE (default stdin)",
                        options: [
                            .value("database", valueName: "URL", "the PostgreSQL database (postgresql://USER@HOST:PORT/DB)", required: true),
                            .value("dataset", valueName: "NAME", "the dataset to create", required: true),
                            .value("input", valueName: "FILE", "the export to read (default stdin)"),
                        ]),
                    compactDescription,
                ]),
        ])

    static func main(_ arguments: [String]) -> Int32 {
        do {
            switch try ArgumentParser(program).parse(arguments) {
            case .help(let text):
                print(text)
            case .run(let command):
                try run(command)
            }
            return 0
        } catch let error as UsageError {
            writeError(error.description)
            return UsageError.exitStatus
        } catch let error as RuntimeError {
            writeError("syncd: \(error.message)")
            return 1
        } catch {
            writeError("syncd: \(error)")
            return 1
        }
    }

    static func run(_ command: ParsedCommand) throws {
        switch command.path.dropFirst() {
        case ["serve"]: try serve(command)
        case ["token", "add"], ["token", "list"], ["token", "revoke"]: try token(command)
        case ["dataset", "export"], ["dataset", "import"], ["dataset", "compact"]: try dataset(command)
        case ["replica", "list"], ["replica", "retire"]: try replica(command)
        default: throw command.usageError("unknown command")
        }
    }

    /// The data directory `--data` names.
    static func dataDirectory(_ command: ParsedCommand) -> URL {
        URL(fileURLWithPath: command.value("data") ?? "./syncd-data", isDirectory: true)
    }

    // MARK: serve

    static func serve(_ options: ParsedCommand) throws {
        let dataDirectory = dataDirectory(options)
        var configuration = HTTPServerConfiguration(host: options.value("host") ?? "127.0.0.1", port: 8080)
        if let text = options.value("port") {
            guard let port = UInt16(text) else { throw options.usageError("--port must be 0-65535, not '\(text)'") }
            configuration.port = port
        }
        var serviceConfiguration = SyncServiceConfiguration(dataDirectory: dataDirectory)
        serviceConfiguration.databaseURL = options.value("database")
        if let text = options.value("max-clock-skew") {
            guard let seconds = Double(text), seconds.isFinite, seconds >= 0 else {
                throw options.usageError("--max-clock-skew must be a number of seconds >= 0, not '\(text)'")
            }
            serviceConfiguration.maxClockSkew = seconds
        }
        serviceConfiguration.replicaPolicy.horizon = try replicaHorizon(options)
        if let count = try positiveInteger(options, "max-connections") { configuration.maxConnections = count }
        if let seconds = try positiveSeconds(options, "head-timeout") { configuration.readTimeout = seconds }
        if let seconds = try positiveSeconds(options, "body-timeout") { configuration.bodyTimeout = seconds }
        if let mebibytes = try positiveInteger(options, "max-body-memory") {
            guard mebibytes <= Int.max >> 20 else { throw options.usageError("--max-body-memory is too large: \(mebibytes)") }
            configuration.maxBufferedBodyBytes = mebibytes << 20
        }
        serviceConfiguration.compactionInterval = try positiveSeconds(options, "compact-every") ?? defaultCompactionInterval
        serviceConfiguration.stableVector = stableVector
        if let bytes = try positiveInteger(options, "max-body-bytes") {
            guard bytes >= 4096 else { throw options.usageError("--max-body-bytes must be at least 4096, not \(bytes)") }
            configuration.maxBodyBytes = bytes
            // Half the body limit leaves room for the JSON around a pull page's or part's bytes.
            serviceConfiguration.transferPartBytes = bytes / 2
        }
        // Access lines are only queued here; the writer's thread writes them in batches.
        serviceConfiguration.log = { line in standardError.write(line) }

        let service: SyncService
        do {
            service = try SyncService(configuration: serviceConfiguration)
        } catch {
            let storage = options.value("database").map { "the database \(PostgreSQLConnection.withoutPassword($0))" } ?? "the data directory \(dataDirectory.path)"
            throw RuntimeError(message: "cannot open \(storage): \(error)")
        }
        FileDescriptorLimit.raiseSoftLimitToHardLimit()
        configuration.onRequestCompleted = service.requestCompleted
        configuration.errorResponse = service.transportErrorResponse
        let server = HTTPServer(configuration: configuration, admission: service.admit, handler: service.handle)
        service.setOpenConnectionsSource { server.statistics.openConnections }
        let signals = server.shutdownOnSignals { number in
            writeError("syncd: received signal \(number), shutting down")
        }
        do {
            try server.start()
        } catch {
            throw RuntimeError(message: "cannot listen on \(configuration.host):\(configuration.port): \(error)")
        }
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        writeError("syncd listening on http://\(host):\(server.port)")
        let compaction = service.scheduleCompaction()
        server.wait()
        compaction?.cancel()
        signals.cancel()
        writeError("syncd: stopped")
    }

    /// The value of option `name` as an integer of at least 1, or `nil` when it is absent.
    static func positiveInteger(_ options: ParsedCommand, _ name: String) throws -> Int? {
        guard let text = options.value(name) else { return nil }
        guard let value = Int(text), value >= 1 else { throw options.usageError("--\(name) must be a whole number >= 1, not '\(text)'") }
        return value
    }

    /// The value of option `name` as a duration of more than zero seconds, or `nil` when it is absent.
    static func positiveSeconds(_ options: ParsedCommand, _ name: String) throws -> Duration? {
        guard let text = options.value(name) else { return nil }
        guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 86_400 * 365 else {
            throw options.usageError("--\(name) must be a number of seconds > 0, not '\(text)'")
        }
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    // MARK: token

    static func token(_ options: ParsedCommand) throws {
        let tokens: TokenStore
        let dataDirectory = dataDirectory(options)
        func open() throws -> TokenStore {
            if let url = options.value("database") {
                do {
                    return try TokenStore(databaseURL: url)
                } catch {
                    throw RuntimeError(message: "cannot open the tokens in \(PostgreSQLConnection.withoutPassword(url)): \(error)")
                }
            }
            do {
                return try TokenStore(dataDirectory: dataDirectory)
            } catch {
                throw RuntimeError(message: "cannot open \(dataDirectory.appendingPathComponent("tokens.sqlite").path): \(error)")
            }
        }
        switch options.name {
        case "add":
            let dataset = try options.requiredValue("dataset")
            guard DatasetRegistry.isValidName(dataset) else {
                throw options.usageError("'\(dataset)' is not a dataset name: 1-64 characters of A-Z a-z 0-9 . _ -, not starting with '.'")
            }
            let scope: TokenScope = options.isSet("read-only") ? .readOnly : .readWrite
            var expires: Date?
            if let text = options.value("expires") {
                guard let seconds = parseDuration(text) else {
                    throw options.usageError("--expires must be a positive whole number followed by s, m, h or d (e.g. 30d), not '\(text)'")
                }
                expires = Date(timeIntervalSinceNow: seconds)
            }
            tokens = try open()
            print(try tokens.add(dataset: dataset, scope: scope, expires: expires))
            // The token alone goes to stdout, so scripts can capture it; the rest is for the operator.
            writeError("syncd: \(scope.rawValue) token for '\(dataset)', " + (expires.map { "expires \(iso8601($0))" } ?? "never expires"))
        case "list":
            tokens = try open()
            let now = Date()
            for entry in try tokens.list() {
                let created = iso8601(Date(timeIntervalSince1970: TimeInterval(entry.created)))
                var expiry = "never-expires"
                if let expires = entry.expires {
                    let date = Date(timeIntervalSince1970: TimeInterval(expires))
                    expiry = (date <= now ? "expired " : "expires ") + iso8601(date)
                }
                print("\(entry.hash.prefix(16))  \(entry.dataset)  \(entry.scope.rawValue)  \(created)  \(expiry)")
            }
        case "revoke":
            let prefix = options.positionals[0]
            guard prefix.count >= 8, prefix.allSatisfy(\.isHexDigit) else {
                throw options.usageError("HASH_PREFIX must be at least 8 hex digits (from 'syncd token list')")
            }
            tokens = try open()
            let count = try tokens.revoke(hashPrefix: prefix)
            if count == 0 { throw RuntimeError(message: "no token's hash starts with \(prefix)") }
            print("revoked \(count) token(s)")
        default:
            throw options.usageError("unknown command")
        }
    }
}

extension Command {
    // MARK: dataset

    static func dataset(_ options: ParsedCommand) throws {
        let name = try options.requiredValue("dataset")
        guard DatasetRegistry.isValidName(name) else {
            throw options.usageError("'\(name)' is not a dataset name: 1-64 characters of A-Z a-z 0-9 . _ -, not starting with '.'")
        }
        switch options.name {
        case "export":
            let output: FileHandle
            if let path = options.value("output") {
                guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
                    throw RuntimeError(message: "cannot create \(path)")
                }
                output = handle
            } else {
                output = FileHandle.standardOutput
            }
            let count = try DatasetTransfer.export(dataset: name, dataDirectory: dataDirectory(options)) { try output.write(contentsOf: $0) }
            try output.synchronize()
            writeError("syncd: exported \(count) change set(s) of '\(name)'")
        case "import":
            let url = try options.requiredValue("database")
            let input: Data
            if let path = options.value("input") {
                guard let data = FileManager.default.contents(atPath: path) else { throw RuntimeError(message: "cannot read \(path)") }
                input = data
            } else {
                input = FileHandle.standardInput.readDataToEndOfFile()
            }
            let count = try DatasetTransfer.importDataset(name, from: input, databaseURL: url)
            writeError("syncd: imported \(count) change set(s) into '\(name)' in \(PostgreSQLConnection.withoutPassword(url))")
        case "compact":
            try compact(options, dataset: name)
        default:
            throw options.usageError("unknown command")
        }
    }
}

/// Seconds in a duration such as `90s`, `15m`, `12h` or `30d`; `nil` for anything else
/// (including zero and amounts beyond a hundred years).
func parseDuration(_ text: String) -> TimeInterval? {
    let units: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
    guard let unit = text.last, let seconds = units[unit] else { return nil }
    let digits = text.dropLast()
    guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
          let amount = Int(digits), amount > 0 else { return nil }
    let total = TimeInterval(amount) * seconds
    return total <= 100 * 365 * 86400 ? total : nil
}

/// A date as ISO 8601 in UTC, to the second.
func iso8601(_ date: Date) -> String {
    date.formatted(.iso8601)
}

/// stderr for every line syncd writes there, so access lines and messages keep their order and
/// never interleave.
private let standardError = LogWriter(descriptor: STDERR_FILENO)

/// Writes `line` to stderr before returning, after any access lines still queued: used for
/// messages an operator or a script waits for, such as the listening line and "stopped".
func writeError(_ line: String) {
    standardError.write(line)
    standardError.flush()
}

import Foundation
import HTTPServer
import SyncServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A command-line mistake: the message goes to stderr with a pointer to `--help`, exit status 2.
struct UsageError: Error {
    var message: String
    var command: String?
}

/// A failure while running a valid command: exit status 1.
struct RuntimeError: Error {
    var message: String
}

enum Command {
    static let usage = """
        syncd: the sync server (sync protocol v1)

        Usage:
          syncd serve [--data DIR] [--host HOST] [--port PORT] [--max-clock-skew SECONDS]
          syncd token add --dataset NAME [--data DIR]
          syncd token list [--data DIR]
          syncd token revoke HASH_PREFIX [--data DIR]
          syncd --help | syncd <command> --help

        Data lives in DIR (default ./syncd-data): DIR/tokens.sqlite and DIR/datasets/<name>/store.sqlite.
        """

    static let serveUsage = """
        Usage: syncd serve [--data DIR] [--host HOST] [--port PORT] [--max-clock-skew SECONDS]

        Serves the sync protocol over HTTP/1.1 until SIGTERM or SIGINT (a second signal stops at once).
          --data DIR               data directory (default ./syncd-data)
          --host HOST              numeric address to bind (default 127.0.0.1; 0.0.0.0 for all interfaces)
          --port PORT              TCP port (default 8080; 0 picks a free port, printed at start)
          --max-clock-skew SECONDS how far a change set's clock may run ahead of the server's (default 300)

        Prints "syncd listening on http://HOST:PORT" to stderr once ready, then one line per request:
        <ISO8601 time> <remote> <method> <path> <status> <bytes> <ms>ms
        """

    static let tokenUsage = """
        Usage:
          syncd token add --dataset NAME [--data DIR]   create a token for dataset NAME and print it (only once)
          syncd token list [--data DIR]                 list tokens: hash prefix, dataset, creation time
          syncd token revoke HASH_PREFIX [--data DIR]   remove the tokens whose hash starts with HASH_PREFIX (8+ hex digits)

        A token opens exactly one dataset. Only its SHA-256 is stored in DIR/tokens.sqlite.
        """

    static func main(_ arguments: [String]) -> Int32 {
        do {
            try run(arguments)
            return 0
        } catch let error as UsageError {
            let help = error.command.map { "syncd \($0) --help" } ?? "syncd --help"
            writeError("syncd: \(error.message)\nTry '\(help)'.")
            return 2
        } catch let error as RuntimeError {
            writeError("syncd: \(error.message)")
            return 1
        } catch {
            writeError("syncd: \(error)")
            return 1
        }
    }

    static func run(_ arguments: [String]) throws {
        guard let command = arguments.first else { throw UsageError(message: "missing command") }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "--help", "-h", "help":
            print(usage)
        case "serve":
            if rest.contains("--help") || rest.contains("-h") { print(serveUsage); return }
            try serve(try Options(rest, command: "serve", values: ["--data", "--host", "--port", "--max-clock-skew"]))
        case "token":
            if rest.isEmpty { throw UsageError(message: "token needs a subcommand: add, list or revoke", command: "token") }
            if rest.contains("--help") || rest.contains("-h") { print(tokenUsage); return }
            try token(rest[0], try Options(Array(rest.dropFirst()), command: "token", values: ["--data", "--dataset"]))
        default:
            throw UsageError(message: "unknown command '\(command)'")
        }
    }

    // MARK: serve

    static func serve(_ options: Options) throws {
        try options.requireNoPositionals()
        let dataDirectory = options.dataDirectory
        var configuration = HTTPServerConfiguration(host: options["--host"] ?? "127.0.0.1", port: 8080)
        if let text = options["--port"] {
            guard let port = UInt16(text) else { throw UsageError(message: "--port must be 0-65535, not '\(text)'", command: "serve") }
            configuration.port = port
        }
        var serviceConfiguration = SyncServiceConfiguration(dataDirectory: dataDirectory)
        if let text = options["--max-clock-skew"] {
            guard let seconds = Double(text), seconds.isFinite, seconds >= 0 else {
                throw UsageError(message: "--max-clock-skew must be a number of seconds >= 0, not '\(text)'", command: "serve")
            }
            serviceConfiguration.maxClockSkew = seconds
        }
        // Access lines are only queued here; the writer's thread writes them in batches.
        serviceConfiguration.log = { line in standardError.write(line) }

        let service: SyncService
        do {
            service = try SyncService(configuration: serviceConfiguration)
        } catch {
            throw RuntimeError(message: "cannot open the data directory \(dataDirectory.path): \(error)")
        }
        FileDescriptorLimit.raiseSoftLimitToHardLimit()
        configuration.onRequestCompleted = service.requestCompleted
        configuration.errorResponse = service.transportErrorResponse
        let server = HTTPServer(configuration: configuration, handler: service.handle)
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
        server.wait()
        signals.cancel()
        writeError("syncd: stopped")
    }

    // MARK: token

    static func token(_ subcommand: String, _ options: Options) throws {
        let tokens: TokenStore
        func open() throws -> TokenStore {
            do {
                return try TokenStore(dataDirectory: options.dataDirectory)
            } catch {
                throw RuntimeError(message: "cannot open \(options.dataDirectory.appendingPathComponent("tokens.sqlite").path): \(error)")
            }
        }
        switch subcommand {
        case "add":
            try options.requireNoPositionals()
            guard let dataset = options["--dataset"] else { throw UsageError(message: "token add needs --dataset NAME", command: "token") }
            guard DatasetRegistry.isValidName(dataset) else {
                throw UsageError(message: "'\(dataset)' is not a dataset name: 1-64 characters of A-Z a-z 0-9 . _ -, not starting with '.'", command: "token")
            }
            tokens = try open()
            print(try tokens.add(dataset: dataset))
        case "list":
            try options.requireNoPositionals()
            tokens = try open()
            for entry in try tokens.list() {
                let created = Date(timeIntervalSince1970: TimeInterval(entry.created)).formatted(.iso8601)
                print("\(entry.hash.prefix(16))  \(entry.dataset)  \(created)")
            }
        case "revoke":
            guard options.positionals.count == 1, let prefix = options.positionals.first else {
                throw UsageError(message: "token revoke needs one HASH_PREFIX (from 'syncd token list')", command: "token")
            }
            guard prefix.count >= 8, prefix.allSatisfy(\.isHexDigit) else {
                throw UsageError(message: "HASH_PREFIX must be at least 8 hex digits", command: "token")
            }
            tokens = try open()
            let count = try tokens.revoke(hashPrefix: prefix)
            if count == 0 { throw RuntimeError(message: "no token's hash starts with \(prefix)") }
            print("revoked \(count) token(s)")
        default:
            throw UsageError(message: "unknown token subcommand '\(subcommand)'", command: "token")
        }
    }
}

/// `--name value` options (also `--name=value`) and positional arguments.
struct Options {
    var values: [String: String] = [:]
    var positionals: [String] = []
    let command: String

    init(_ arguments: [String], command: String, values allowed: Set<String>) throws {
        self.command = command
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--") else { positionals.append(argument); continue }
            var name = argument
            var value: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            }
            guard allowed.contains(name) else { throw UsageError(message: "unknown option '\(name)'", command: command) }
            if value == nil {
                guard index < arguments.count else { throw UsageError(message: "\(name) needs a value", command: command) }
                value = arguments[index]
                index += 1
            }
            guard values[name] == nil else { throw UsageError(message: "\(name) given twice", command: command) }
            values[name] = value
        }
    }

    subscript(name: String) -> String? { values[name] }

    var dataDirectory: URL {
        URL(fileURLWithPath: values["--data"] ?? "./syncd-data", isDirectory: true)
    }

    func requireNoPositionals() throws {
        if let first = positionals.first { throw UsageError(message: "unexpected argument '\(first)'", command: command) }
    }
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
